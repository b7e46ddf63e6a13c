"""Could a family's first results on a workload (class iii) be sized before they are seen?

Usage::

    python benchmarks/plan_borrowing.py

For each forward transition (v3.1 from v3.0, ..., v5.0 from v3.0-v4.1), on the training
rounds alone, **in sample**: every family that ran >= 2 workloads is held out of each
workload ``w`` it ran (``w`` refitted without it, the families' speeds refitted) and each
of its systems on ``w`` planned at its round from the level borrowed through its other
workloads, as the plan borrows (``predict_point``, class iii); against it, **forward**: the
class (iii) forecasts of the round (``benchmarks/plan_accuracy.py``'s). Log errors are
planned minus measured (negative: the plan under the time measured), the absolute ones
divided by the interval's widening for the workloads the level rests on
(``predict.transfer_factor``), so that their 80% quantile is a class (iii) half-width.
Writes ``benchmarks/results/plan_borrowing.json``, whose table ``docs/plan-accuracy.md`` quotes
(:func:`markdown`; ``tests/plan/test_plan_accuracy_doc.py``).
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from gpuscale import load_round
from gpuscale.planning.calibrate import backtest, calibrated_fits
from gpuscale.planning.fits import fit_all, speeds
from gpuscale.planning.predict import plannable, predict_point, transfer_factor
from gpuscale.planning.systems import measured
from gpuscale.planning.workload import fit_workload
from gpuscale.tables.workloads import round_key

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results" / "plan_borrowing.json"
COMMAND = "python benchmarks/plan_borrowing.py"


def in_sample(systems: pd.DataFrame) -> pd.DataFrame:
    """One row per system of a family held out of a workload it ran (see the module
    docstring): ``family``, ``workload``, ``log_error``, ``factor``."""
    fits = fit_all(systems)
    out = []
    for w, fit in fits["workloads"].items():
        for f in fit["families"]:
            ran = sum(f in x["families"] for x in fits["workloads"].values())
            rest = systems[(systems["workload"] == w) & (systems["accelerator_family"] != f)]
            if ran < 2 or rest.empty:
                continue
            mine = fits["workloads"] | {w: fit_workload(rest.reset_index(drop=True))}
            trial = fits | {"workloads": mine, "speed": speeds(mine, spread=False)}
            if not plannable(trial, w, f):
                continue
            factor = transfer_factor(trial, f)[1]
            own = systems[(systems["workload"] == w) & (systems["accelerator_family"] == f)]
            for row in own.itertuples(index=False):
                p = predict_point(trial, w, f, int(row.accelerators), row.round)
                error = math.log(p["time_to_train_min"] / row.time_to_train_min)
                out.append({"family": f, "workload": w, "log_error": error, "factor": factor})
    return pd.DataFrame(out)


def _signed(errors: pd.Series) -> dict[str, Any]:
    return {
        "median_log_error": round(float(errors.median()), 3),
        "under": int((errors < 0).sum()),
    }


def transitions(systems: pd.DataFrame) -> dict[str, dict[str, Any]]:
    """Per forecast round: the in-sample errors of its training rounds and its forward
    class (iii) forecasts (see the module docstring)."""
    forward = backtest(systems, calibrated_fits)
    forward = forward[forward["count_class"] == "iii"]
    rounds = sorted(systems["round"].unique(), key=round_key)
    out = {}
    for target in rounds[1:]:
        train = systems[[round_key(r) < round_key(target) for r in systems["round"]]]
        seen = in_sample(train.reset_index(drop=True))
        scaled = seen["log_error"].abs() / seen["factor"]
        width = float(np.quantile(scaled, 0.8))
        ahead = forward[forward["round"] == target]
        ahead_scaled = ahead["log_error"].abs() / ahead["evidence_factor"]
        out[target] = {
            "trained_on": [r for r in rounds if round_key(r) < round_key(target)],
            "in_sample": {
                "pairs": len(seen.groupby(["family", "workload"])),
                "systems": len(seen),
                "width_80": round(width, 3),
            }
            | _signed(seen["log_error"]),
            "forward": {
                "cases": len(ahead),
                "beyond_in_sample_width": int((ahead_scaled > width).sum()),
                # the class (iii) half-width the plan gave (before the transfer widening)
                "plan_width": round(
                    float((ahead["half_width"] / ahead["evidence_factor"]).max()), 3
                ),
            }
            | _signed(ahead["log_error"]),
        }
    return out


def markdown(results: dict) -> str:
    """The table ``docs/plan-accuracy.md`` quotes, from the JSON this script writes."""
    lines = [
        "| forecast round | in sample: held out | 80% of abs log error | median log error "
        "| first results forecast | beyond that 80% | median log error | plan's width |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for name, row in results["transitions"].items():
        seen, ahead = row["in_sample"], row["forward"]
        cells = [
            name,
            f"{seen['pairs']} pairs, {seen['systems']} results",
            f"{seen['width_80']:.2f}",
            f"{seen['median_log_error']:+.2f} ({seen['under']} of {seen['systems']} under)",
            f"{ahead['cases']}",
            f"{ahead['beyond_in_sample_width']}",
            f"{ahead['median_log_error']:+.2f} ({ahead['under']} of {ahead['cases']} under)",
            f"{ahead['plan_width']:.2f}",
        ]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def main() -> None:
    systems = measured(load_round().scores)
    results = {"command": COMMAND, "transitions": transitions(systems)}
    RESULTS.write_text(json.dumps(results, indent=1) + "\n")
    print(f"wrote {RESULTS}:")
    print(markdown(results))


if __name__ == "__main__":
    main()

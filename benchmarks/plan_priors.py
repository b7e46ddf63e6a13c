"""The plan's prior interval widths, fitted on development data the accuracy test never
judges.

Usage::

    python benchmarks/plan_priors.py [--shared ../shared/mlperf]

The forward backtest (``benchmarks/plan_accuracy.py``) judges every round from v3.1 to
v5.0, each forecast from the rounds before it with intervals calibrated on the forecasts
of the transitions before it; where a class has few or none (v3.1: none), its width is
pooled with a prior worth ``calibrate.PRIOR_CASES`` forecasts. The priors come from the
transitions before the bundled ones: v1.1 forecast from v0.7, and v3.0 from v0.7 and
v1.1 (the raw rounds read in place from ``../shared/mlperf``, v3.0 bundled; none of these
forecasts is judged), each class's width computed as the plan calibrates it
(``calibrate.intervals``). Writes the priors the plan reads
(``src/gpuscale/data/plan_priors.json``) and the cases behind them
(``benchmarks/results/plan_priors.json``); ``tests/plan/test_plan_priors.py`` checks the
stored priors against the rounds when ``../shared`` is there.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pandas as pd

from gpuscale import load_round
from gpuscale.mlperf.ingest import read_round
from gpuscale.planning.calibrate import backtest, intervals
from gpuscale.planning.fits import fit_all
from gpuscale.planning.predict import CLASSES, PRIORS_FILE
from gpuscale.planning.systems import measured

ROOT = Path(__file__).resolve().parents[1]
RAW = ("v0.7", "v1.1")
BUNDLED = ("v3.0",)
COMMAND = "python benchmarks/plan_priors.py"
DATA = ROOT / "src" / "gpuscale" / "data" / PRIORS_FILE
RESULTS = ROOT / "benchmarks" / "results" / "plan_priors.json"


def development_systems(shared: Path) -> pd.DataFrame:
    """The measured systems of the development rounds (each result once)."""
    scores = [read_round(shared / f"training_results_{name}.tar.xz").scores for name in RAW]
    scores += [load_round(name).scores for name in BUNDLED]
    return measured(pd.concat(scores, ignore_index=True)).reset_index(drop=True)


MIN_CASES = 10  # fewer development forecasts than this: the class's prior is its group's
GROUPS = {"ii_in": "ii", "ii_out": "ii"}  # not measured, inside or beyond: one group


def priors(systems: pd.DataFrame) -> dict[str, object]:
    """Each class's width from the development forecasts (the 80% quantile of their
    scaled errors, as the plan calibrates), with how many each rests on; a class with
    fewer than ``MIN_CASES`` takes its group's width (``GROUPS``: ii_in and ii_out
    together), never a prior from a handful of forecasts."""
    cases = backtest(systems, fit_all)
    planned = cases[cases["count_class"].isin(CLASSES)]
    widths = intervals(planned, rule="plain")
    grouped = planned.assign(count_class=planned["count_class"].replace(GROUPS))
    together = intervals(
        grouped.assign(count_class=grouped["count_class"].replace({"ii": "ii_in"})), rule="plain"
    )
    out: dict[str, object] = {"widen": widths["widen"]}
    for kind in CLASSES:
        alone = widths[f"cases_{kind}"] >= MIN_CASES or kind not in GROUPS
        out[kind] = widths[kind] if alone else together["ii_in"]
        out[f"cases_{kind}"] = widths[f"cases_{kind}"] if alone else together["cases_ii_in"]
        out[f"from_{kind}"] = kind if alone else GROUPS[kind]
    return out | {"rounds": [*RAW, *BUNDLED], "command": COMMAND}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--shared", type=Path, default=ROOT.parent / "shared" / "mlperf")
    args = parser.parse_args()
    found = priors(development_systems(args.shared))
    DATA.write_text(json.dumps(found, indent=1) + "\n")
    RESULTS.write_text(json.dumps(found, indent=1) + "\n")
    said = ", ".join(f"{k} {found[k]:.3f} ({found[f'cases_{k}']} forecasts)" for k in CLASSES)
    print(f"priors from {', '.join(found['rounds'])}: {said}; wrote {DATA} and {RESULTS}")


if __name__ == "__main__":
    main()

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
(``calibrate.intervals``), between and beyond as class (i)'s times how far their errors
exceed it in the same (round, workload, family) (:func:`priors`). Writes the priors the plan reads
(``src/gpuscale/data/plan_priors.json``) and the cases behind them
(``benchmarks/results/plan_priors.json``); ``tests/plan/test_plan_priors.py`` checks the
stored priors against the rounds when ``../shared`` is there.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np
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


SHARED = ("ii_in", "ii_out")  # classes whose level is class (i)'s: a count the family did not run


def cells(planned: pd.DataFrame, widen: float) -> list[dict[str, object]]:
    """Per (round, workload, family) with forecasts of class (i) and of ``SHARED``: the
    median scaled error (``|log error| / (1 + widen x octaves outside)``, as the plan
    calibrates; the evidence widening is the same within a cell) of each, their ratio and
    how many forecasts of ``SHARED`` the cell holds."""
    scaled = planned["log_error"].abs() / (1 + widen * planned["octaves_outside"])
    out = []
    for (name, workload, family), mine in planned.assign(scaled=scaled).groupby(
        ["round", "workload", "family"]
    ):
        at = mine[mine["count_class"] == "i"]["scaled"]
        off = mine[mine["count_class"].isin(SHARED)]["scaled"]
        if len(at) and len(off):
            ratio = float(off.median() / at.median())
            out.append({"cell": [name, workload, family], "ratio": ratio, "cases": len(off)})
    return out


def priors(systems: pd.DataFrame) -> dict[str, object]:
    """Each class's width from the development forecasts (the 80% quantile of their
    scaled errors, as the plan calibrates) with how many each rests on; between and
    beyond (``SHARED``), class (i)'s width times the median, over the (round, workload,
    family) cells holding forecasts of both, of the ratio of their errors
    (:func:`cells`). A count the family did not run shares the level of the counts it ran:
    a level off over the 1.5 years of a development transition (BERT on the 40 GB A100,
    v1.1 to v3.0) errs at both, and within a cell only the count's own part of the error
    differs, where the quantile of each class alone sets the cells that happen to hold
    forecasts of one class against those of the other."""
    cases = backtest(systems, fit_all)
    planned = cases[cases["count_class"].isin(CLASSES)]
    widths = intervals(planned, rule="plain")
    matched = cells(planned, widths["widen"])
    factor = float(np.median([c["ratio"] for c in matched]))
    out: dict[str, object] = {"widen": widths["widen"]}
    for kind in CLASSES:
        shared = kind in SHARED
        out[kind] = widths["i"] * factor if shared else widths[kind]
        out[f"cases_{kind}"] = (
            sum(c["cases"] for c in matched) if shared else widths[f"cases_{kind}"]
        )
        out[f"from_{kind}"] = "i x cells" if shared else kind
    return out | {
        "factor": factor,
        "cells": matched,
        "rounds": [*RAW, *BUNDLED],
        "command": COMMAND,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=" ".join(__doc__.split("\n\n")[0].split()))
    parser.add_argument("--shared", type=Path, default=ROOT.parent / "shared" / "mlperf")
    args = parser.parse_args()
    found = priors(development_systems(args.shared))
    DATA.write_text(json.dumps(found, indent=1) + "\n")
    RESULTS.write_text(json.dumps(found, indent=1) + "\n")
    said = ", ".join(f"{k} {found[k]:.3f} ({found[f'cases_{k}']} forecasts)" for k in CLASSES)
    ratio = f"between and beyond: class (i) x {found['factor']:.2f} ({len(found['cells'])} cells)"
    print(f"priors from {', '.join(found['rounds'])}: {said}; {ratio}; wrote {DATA} and {RESULTS}")


if __name__ == "__main__":
    main()

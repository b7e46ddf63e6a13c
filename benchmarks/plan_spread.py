"""How far apart are one family's systems at one count? The spread that names an outlier.

Usage::

    python benchmarks/plan_spread.py

On every bundled round's scored closed-division results (each result once), each
system's deviation from the median of its family's other submitters at its count (same
round and workload: ``gpuscale.analysis.outliers.count_deviations``), where at least two
such systems are; the 99th percentile of its absolute value is the spread beyond which a
system is an outlier (a system at 2x its family's median is far outside it). Writes the
spread the library reads (``src/gpuscale/data/count_spread.json``) and the distribution
with the outliers found (``benchmarks/results/plan_spread.json``);
``tests/analysis/test_outliers.py`` fails when the stored spread is not what the bundled
rounds give.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np

from gpuscale import load_round
from gpuscale.analysis.metrics import scored_systems
from gpuscale.analysis.outliers import SPREAD_FILE, count_deviations, measure_spread

ROOT = Path(__file__).resolve().parents[1]
QUANTILE = 0.99
COMMAND = "python benchmarks/plan_spread.py"
DATA = ROOT / "src" / "gpuscale" / "data" / SPREAD_FILE
RESULTS = ROOT / "benchmarks" / "results" / "plan_spread.json"


def bundled_systems():
    """The scored closed-division results of every bundled round, each once."""
    return scored_systems(load_round().scores, division="closed")


def main() -> None:
    systems = bundled_systems()
    spread = measure_spread(systems, QUANTILE) | {"command": COMMAND}
    DATA.write_text(json.dumps(spread, indent=1) + "\n")
    d = count_deviations(systems).dropna()
    far = d[d.abs() > spread["log_ratio"]]
    quantiles = {f"{q:g}": round(float(np.quantile(d.abs(), q)), 4) for q in (0.5, 0.9, 0.95, 0.99)}
    named = [
        {
            "round": systems.at[i, "round"],
            "workload": systems.at[i, "workload"],
            "family": systems.at[i, "accelerator_family"],
            "accelerators": int(systems.at[i, "accelerators"]),
            "submitter": systems.at[i, "submitter"],
            "system_id": systems.at[i, "system_id"],
            "ratio": round(math.exp(d[i]), 3),
        }
        for i in far.sort_values().index
    ]
    RESULTS.write_text(
        json.dumps(spread | {"abs_log_quantiles": quantiles, "outliers": named}, indent=1) + "\n"
    )
    print(
        f"{spread['systems']} systems in {spread['groups']} counts: the {QUANTILE:.0%} "
        f"quantile of |log(T / median of the other submitters)| is {spread['log_ratio']:.3f} "
        f"(x{math.exp(spread['log_ratio']):.2f}); {len(named)} outliers; wrote {DATA} and {RESULTS}"
    )


if __name__ == "__main__":
    main()

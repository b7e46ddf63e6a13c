"""How far apart may two results' samples to converge at one batch be and share one law?

Usage::

    python benchmarks/convergence_spread.py

On every bundled round's runs (counted runs with a positive samples or epochs to
converge, of results whose samples to converge are not flagged as impossible): the range
(log of largest over smallest) of each result's own runs, whose 99th percentile is the
bound beyond which two results at one batch are never pooled into one convergence law for
the intervals (their means differ more than one result's runs ever spread: another
definition of an epoch, other hyperparameters); and, for comparison, each result's
deviation from the median of the other results at its batch. Writes the
figures the library reads (``src/gpuscale/data/convergence_spread.json``);
``tests/analysis/test_intervals_apart.py`` fails when they are not what the bundled
rounds give.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

from gpuscale import load_round
from gpuscale.analysis.score_intervals import SPREAD_FILE, measure_convergence_spread

ROOT = Path(__file__).resolve().parents[1]
QUANTILE = 0.99
COMMAND = "python benchmarks/convergence_spread.py"
DATA = ROOT / "src" / "gpuscale" / "data" / SPREAD_FILE


def main() -> None:
    tables = load_round()
    spread = measure_convergence_spread(tables.runs, tables.scores, QUANTILE) | {"command": COMMAND}
    DATA.write_text(json.dumps(spread, indent=1) + "\n")
    print(
        f"{spread['results']} results: the {QUANTILE:.0%} quantile of the range of one "
        f"result's log samples to converge is {spread['log_ratio']:.3f} "
        f"(x{math.exp(spread['log_ratio']):.2f}); across results at one batch "
        f"({spread['pairs']}): {spread['across']}; wrote {DATA}"
    )


if __name__ == "__main__":
    main()

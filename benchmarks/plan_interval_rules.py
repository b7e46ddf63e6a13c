"""Which rule sizes the plan's 80% intervals from few earlier forecasts? One forward
backtest per rule, the same for every class.

Usage::

    python benchmarks/plan_interval_rules.py

Each round is forecast from the rounds before it (``benchmarks/plan_accuracy.py``'s
forward part), the intervals calibrated by one rule of
``gpuscale.planning.calibrate.QUANTILE_RULES`` applied to every class: ``pooled`` (the
plan's: numpy's default 80% quantile pooled with the class's prior worth 5 errors),
``unbiased`` (the order statistic at ``0.8 (k + 1)``: 80% on average for ``k >= 4``
exchangeable errors) and ``conformal`` (the ``ceil(0.8 (k + 1))``-th: at least 80%); the
last two fall back to the prior under 4 earlier forecasts. Per class and rule: the
forecasts and how many their intervals covered, all of them and those whose class had
at least 4 earlier forecasts (``sized``: a width from data, not the prior). Per class, how
often exactly calibrated 80% intervals would cover 75-85% of that many forecasts
(binomial), and the class (iii) forecasts under the plan's rule. Writes
``benchmarks/results/plan_interval_rules.json``, whose tables ``docs/plan-accuracy.md`` quotes
(:func:`markdown`; ``tests/plan/test_plan_accuracy_doc.py``).
"""

from __future__ import annotations

import json
import math
from functools import partial
from pathlib import Path

import numpy as np
import pandas as pd

from gpuscale import load_round
from gpuscale.planning.calibrate import QUANTILE_RULES, backtest, calibrated_fits
from gpuscale.planning.predict import CLASSES
from gpuscale.planning.systems import measured
from gpuscale.tables.workloads import round_key

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results" / "plan_interval_rules.json"
COMMAND = "python benchmarks/plan_interval_rules.py"
SIZED = 4  # earlier forecasts of the class: fewer, and no rule's 80% position is an error
BAND = (0.75, 0.85)


def in_band(cases: int, p: float = 0.8) -> float:
    """P(75% <= covered / cases <= 85%) for intervals covering each case with
    probability ``p`` independently (binomial)."""
    return sum(
        math.comb(cases, j) * p**j * (1 - p) ** (cases - j)
        for j in range(cases + 1)
        if BAND[0] <= j / cases <= BAND[1]
    )


def scored(cases: pd.DataFrame) -> pd.DataFrame:
    """The planned forecasts with ``covered`` and ``earlier`` (the class's forecasts of
    the rounds before the case's: what its interval was calibrated on)."""
    out = cases[cases["count_class"].isin(CLASSES)].copy()
    out["covered"] = (out["time_to_train_min_low"] <= out["measured"]) & (
        out["measured"] <= out["time_to_train_min_high"]
    )
    rank = {r: round_key(r) for r in out["round"].unique()}
    out["earlier"] = [
        int(((out["count_class"] == c) & (out["round"].map(rank) < rank[r])).sum())
        for c, r in zip(out["count_class"], out["round"], strict=True)
    ]
    return out


def by_class(cases: pd.DataFrame) -> dict[str, dict]:
    """Per class: forecasts and covered, all and ``sized`` (>= SIZED earlier)."""
    out = {}
    for kind in CLASSES:
        mine = cases[cases["count_class"] == kind]
        sized = mine[mine["earlier"] >= SIZED]
        out[kind] = {
            "cases": len(mine),
            "covered": int(mine["covered"].sum()),
            "sized_cases": len(sized),
            "sized_covered": int(sized["covered"].sum()),
        }
    return out


def first_results(cases: pd.DataFrame) -> list[dict]:
    """The class (iii) forecasts: log error (planned - measured; negative: the plan under
    the time measured), its ratio to the interval's half-width on its side (> 1: missed)
    and the earlier forecasts the width was calibrated on."""
    mine = cases[cases["count_class"] == "iii"]
    out = []
    for row in mine.itertuples(index=False):
        edge = row.time_to_train_min_low if row.log_error < 0 else row.time_to_train_min_high
        half = abs(math.log(edge / row.time_to_train_min))
        out.append(
            {
                "round": row.round,
                "workload": row.workload,
                "family": row.family,
                "accelerators": int(row.accelerators),
                "submitter": row.submitter,
                "log_error": round(float(row.log_error), 3),
                "error_per_half_width": round(abs(float(row.log_error)) / half, 2),
                "earlier": int(row.earlier),
            }
        )
    return out


def markdown(results: dict) -> str:
    """The table ``docs/plan-accuracy.md`` quotes: covered / forecasts per class and rule."""
    rules = list(results["rules"])
    lines = [
        "| class | P(75-85%) if calibrated | "
        + " | ".join(f"{r}: all | {r}: sized" for r in rules)
        + " |",
        "|---|---|" + "---|---|" * len(rules),
    ]
    for kind in CLASSES:
        cells = [kind, f"{results['in_band'][kind]:.0%}"]
        for rule in rules:
            row = results["rules"][rule][kind]
            cells.append(f"{row['covered']}/{row['cases']}")
            cells.append(f"{row['sized_covered']}/{row['sized_cases']}")
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def markdown_first(results: dict) -> str:
    """The class (iii) forecasts under the plan's rule, as ``docs/plan-accuracy.md`` quotes them."""
    lines = [
        "| round | workload | family | devices | submitter | log error | error / half-width "
        "| earlier |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for row in results["first_results"]:
        cells = [
            row["round"],
            row["workload"],
            row["family"],
            f"{row['accelerators']:,}",
            row["submitter"],
            f"{row['log_error']:+.2f}",
            f"{row['error_per_half_width']:.2f}",
            f"{row['earlier']}",
        ]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


# The rules that size a width from a class's earlier forecasts ("plain", the quantile of
# the errors alone, fits the priors on forecasts of their own: benchmarks/plan_priors.py)
SIZING_RULES = [rule for rule in QUANTILE_RULES if rule != "plain"]


def main() -> None:
    systems = measured(load_round().scores)
    rules, first = {}, []
    for rule in SIZING_RULES:
        cases = scored(backtest(systems, partial(calibrated_fits, rule=rule)))
        rules[rule] = by_class(cases)
        if rule == "pooled":
            first = first_results(cases)
    results = {
        "command": COMMAND,
        "sized_from": SIZED,
        "in_band": {k: round(in_band(rules["pooled"][k]["cases"]), 3) for k in CLASSES},
        "rules": rules,
        "first_results": first,
    }
    RESULTS.write_text(json.dumps(results, indent=1) + "\n")
    print(f"wrote {RESULTS}:")
    print(markdown(results))
    print(markdown_first(results))
    print(np.round([r["error_per_half_width"] for r in first], 2))


if __name__ == "__main__":
    main()

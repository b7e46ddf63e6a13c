"""The outlier rule's spread is measured on the bundled rounds and stored with how
(``benchmarks/plan_spread.py`` writes ``data/count_spread.json``): the stored figure is
what those rounds give, and the rule's deviations are against the other submitters'
median at the same count."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from gpuscale.analysis.metrics import scored_systems
from gpuscale.analysis.outliers import (
    CountSpread,
    count_deviations,
    count_spread,
    measure_spread,
    outliers,
)


def test_the_stored_spread_is_what_the_bundled_rounds_give(bundled) -> None:
    stored = count_spread()
    measured = measure_spread(scored_systems(bundled.scores, division="closed"), stored.quantile)
    assert measured["log_ratio"] == pytest.approx(stored.log_ratio, rel=1e-9)
    assert (measured["systems"], measured["groups"]) == (stored.systems, stored.groups)
    assert tuple(measured["rounds"]) == stored.rounds
    assert stored.command == "python benchmarks/plan_spread.py"
    # a system at twice its family's median is far outside it (the case)
    assert 1.1 < stored.ratio < 2.0


def _frame(times: list[tuple[str, int, float]]) -> pd.DataFrame:
    return pd.DataFrame(
        [
            {
                "round": "v9.9",
                "workload": "bert",
                "accelerator_family": "X",
                "submitter": who,
                "accelerators": n,
                "time_to_train_min": t,
            }
            for who, n, t in times
        ]
    )


def test_deviation_is_against_the_other_submitters_median() -> None:
    frame = _frame([("a", 8, 10.0), ("a", 8, 30.0), ("b", 8, 11.0), ("c", 8, 13.0), ("d", 16, 6.0)])
    d = count_deviations(frame)
    assert d[0] == pytest.approx(math.log(10.0 / 12.0))  # b's and c's median, not a's own
    assert d[2] == pytest.approx(math.log(11.0 / 13.0))  # a's two and c's: median 13
    assert math.isnan(d[4])  # alone at 16: held against no one


def test_an_outlier_and_its_submitter_alone_elsewhere() -> None:
    spread = CountSpread(0.99, math.log(1.2), 0, 0, (), "")
    frame = _frame(
        [("a", 8, 10.0), ("b", 8, 10.5), ("c", 8, 10.2), ("s", 8, 20.4), ("s", 16, 13.0)]
    )
    said = outliers(frame, spread)
    assert said[:3].tolist() == ["", "", ""]
    assert said[3].startswith("2.00x")  # 20.4 against the median 10.2 of a, b, c
    assert said[4].startswith("s alone at 16")


def test_the_analysis_page_quotes_the_stored_spread() -> None:
    from pathlib import Path

    page = (Path(__file__).resolve().parents[2] / "docs" / "analysis.md").read_text()
    stored = count_spread()
    said = f"x{stored.ratio:.2f} over {stored.systems} systems in {stored.groups} counts"
    assert said in " ".join(page.split())


def test_a_count_whose_systems_are_all_far_has_no_outlier() -> None:
    # v1.1 RNN-T on 8 A100-SXM4-80GB: two fast and two slow submitters, each beyond the
    # spread from the others' median; the spread there is the family's, no system's
    spread = CountSpread(0.99, math.log(1.21), 0, 0, (), "")
    frame = _frame(
        [("n", 8, 34.2), ("z", 8, 37.6), ("h", 8, 46.4), ("g", 8, 47.7), ("n", 128, 4.41)]
    )
    assert (count_deviations(frame)[:4].abs() > spread.log_ratio).all()
    assert outliers(frame, spread).tolist() == ["", "", "", "", ""]


def test_a_far_system_does_not_make_its_neighbour_an_outlier() -> None:
    # of three, the slow one pulls the median of the fast one's others past the spread;
    # against the one that agrees with it the fast one is near (v1.1 RNN-T, 500 W at 8)
    spread = CountSpread(0.99, math.log(1.21), 0, 0, (), "")
    frame = _frame([("i", 8, 33.4), ("d", 8, 35.1), ("s", 8, 51.1)])
    assert count_deviations(frame)[0] < -spread.log_ratio  # 0.77x of 43.1
    said = outliers(frame, spread)
    assert said[:2].tolist() == ["", ""]
    assert said[2].startswith("1.49x")


def test_a_count_whose_systems_are_all_apart_has_no_outlier() -> None:
    spread = CountSpread(0.99, math.log(1.21), 0, 0, (), "")
    apart = _frame([("a", 8, 10.0), ("b", 8, 20.4), ("c", 8, 40.0), ("a", 16, 6.0)])
    assert outliers(apart, spread).tolist() == ["", "", "", ""]
    # beside two that agree, the two apart are each an outlier
    two = _frame([("a", 8, 10.0), ("d", 8, 10.2), ("b", 8, 20.4), ("c", 8, 40.0)])
    said = outliers(two, spread)
    assert said[:2].tolist() == ["", ""] and said[2] != "" and said[3] != ""

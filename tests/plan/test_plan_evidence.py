"""Intervals as wide as the evidence (issue 58): a level resting on one result of one
submitter is planned with a wider interval than one where many agree, and says so."""

from __future__ import annotations

import math

from gpuscale.planning import plan
from gpuscale.planning.cache import default_fits


def _half(table, n: int) -> float:
    row = table[table["accelerators"] == n].iloc[0]
    return math.log(row["time_to_train_min_high"] / row["time_to_train_min"])


def test_one_result_of_one_submitter_is_wide_and_said() -> None:
    few = plan(workload="bert", accelerator="MI300X", devices=(8, 12, 24, 96))
    many = plan(workload="bert", accelerator="H100-SXM5-80GB", devices=(8, 12, 24, 96))
    assert few.attrs["model"]["evidence"] == {
        "results": 1,
        "submitters": 1,
        "rounds": 1,
        "pairs": 1,
    }
    assert many.attrs["model"]["evidence"]["submitters"] > 5
    # at the count it ran, the one result's level is not trusted as dozens of results are
    assert _half(few, 8) > 2 * _half(many, 8)
    # beyond it, never narrower than at the count the level rests on
    assert all(_half(few, n) >= _half(few, 8) for n in (12, 24, 96))
    assert any("1 result of bert by 1 submitter" in s for s in few.attrs["notes"])
    assert not any("by 1 submitter" in s for s in many.attrs["notes"])


def test_the_evidence_priors_are_calibrated_per_class() -> None:
    """Each class's evidence prior is one of the grid the calibration picks from, and
    class (i), where the level at a count rests on its own results, widens with few."""
    intervals = default_fits()["intervals"]
    assert intervals["evidence_i"] > 0
    assert intervals["evidence_iii"] == 0.0

"""``load_round`` reads the bundled files once per process and hands each caller its own
tables."""

from __future__ import annotations

from gpuscale.mlperf import load_round


def test_a_changed_table_does_not_reach_the_next_load() -> None:
    """load_round reads the files once per process; each call gets its own tables, so a
    caller that edits one (a score, a column) leaves the next caller's as shipped."""
    first = load_round("v4.1")
    shipped = first.scores["time_to_train_min"].copy()
    first.scores["time_to_train_min"] = -1.0
    first.runs.loc[:, "round"] = "v0.0"
    again = load_round("v4.1")
    assert again.scores["time_to_train_min"].equals(shipped)
    assert set(again.runs["round"]) == {"v4.1"}
    assert again.scores is not first.scores

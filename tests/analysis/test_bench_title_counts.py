"""A bench table's title counts what it holds: the runs that completed, how many of them
are flagged and how many failed (said under it), never "ok runs" over flagged rows."""

from __future__ import annotations

import re

from gpuscale.analysis.bench_answer import bench_answer_view
from gpuscale.analysis.bench_view import bench_view
from gpuscale.bench.results import bench_table

from ..builders import bench_record

BUSY = ["machine busy: other processes used 69% of its CPU time during the timed steps"]


def _numbers(title: str) -> list[int]:
    return [int(n) for n in re.findall(r"\d+", title)]


def test_the_title_counts_completed_flagged_and_failed_runs() -> None:
    rows = [
        {**bench_record("mlp-1m", 10**6, 1, 100.0), "flags": BUSY},
        {**bench_record("mlp-1m", 10**6, 2, 150.0), "flags": BUSY},
        bench_record("mlp-1m", 10**6, 4, 0.0, status="error", error="out of memory"),
    ]
    table = bench_table(rows)
    for view in (bench_answer_view(table), bench_view(table)):
        flagged = int(view.frame["flagged"].sum())
        assert flagged == 2  # the data: both completed runs are flagged
        assert _numbers(view.title) == [2, flagged, 1]
        assert "ok runs" not in view.title


def test_a_table_of_clean_runs_counts_them_alone() -> None:
    rows = [bench_record("mlp-1m", 10**6, n, 100.0 * n**0.9) for n in (1, 2)]
    view = bench_answer_view(bench_table(rows))
    assert int(view.frame["flagged"].sum()) == 0
    assert _numbers(view.title) == [2]

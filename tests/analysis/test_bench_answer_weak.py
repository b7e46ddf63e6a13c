"""`analyze --bench` counts its weak runs as every other sentence counts a part of a
whole: "weak evidence: 3 of 3 runs" read as a fraction where all of them were."""

from __future__ import annotations

import pytest

from gpuscale.analysis.bench_answer import bench_answer_view
from gpuscale.bench.config import BenchConfig
from gpuscale.bench.results import bench_table

from ..builders import bench_record


@pytest.mark.parametrize(
    ("strong", "said"),
    [(0, "weak evidence: all 3 runs"), (1, "weak evidence: 2 of the 3 runs")],
)
def test_the_weak_runs_are_counted_against_the_runs(strong: int, said: str) -> None:
    rows = [
        bench_record(
            f"m{i}", 10**5 * (i + 1), 1, 1000.0, config=BenchConfig(steps=2 if i >= strong else 400)
        )
        for i in range(3)
    ]
    view = bench_answer_view(bench_table(rows))
    weak = int((view.frame["evidence"] == "weak").sum())
    assert weak == 3 - strong  # the count the sentence says
    assert said in view.said, view.said

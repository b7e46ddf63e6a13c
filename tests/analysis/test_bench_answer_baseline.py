"""`analyze --bench`'s answer shows the one-device throughput each speedup is against: it
said 1,258 samples/s on 1 and 879.3 on 2 beside a speedup of 0.1652, read against the
bare module's N = 1 step it did not show (5,323 samples/s)."""

from __future__ import annotations

import pytest

from gpuscale.analysis.bench_answer import bench_answer_view
from gpuscale.bench.results import bench_table

from ..builders import bench_record


@pytest.mark.parametrize(("plain_step_ms", "baseline"), [(4.0, 2000.0), (None, 1000.0)])
def test_the_answer_shows_the_rate_its_speedup_is_against(
    plain_step_ms: float | None, baseline: float
) -> None:
    """8 samples a step: the bare module's 4 ms step is 2,000 samples/s, the baseline of
    the run on 2 (1,500 samples/s: 0.75) where timed, else DDP's N = 1 run's 1,000 (1.5)."""
    rows = [
        bench_record("m", 10**6, 1, 1000.0, plain_step_ms=plain_step_ms),
        bench_record("m", 10**6, 2, 1500.0),
    ]
    view = bench_answer_view(bench_table(rows))
    shown = list(view.shown)
    assert shown.index("samples_per_s") < shown.index("baseline_samples_per_s")
    assert shown.index("baseline_samples_per_s") < shown.index("speedup")
    frame = view.frame.set_index("accelerators")
    assert frame.loc[2, "baseline_samples_per_s"] == pytest.approx(baseline)
    assert frame.loc[2, "speedup"] == pytest.approx(1500.0 / baseline)
    assert frame["baseline_samples_per_s"].isna().loc[1]  # N = 1: no speedup, no baseline

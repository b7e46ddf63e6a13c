"""The own-hardware figures say what their bars are."""

from __future__ import annotations

from gpuscale.analysis.bench_scaling import bench_scaling
from gpuscale.bench.results import bench_table
from gpuscale.report.bench_figures import step_breakdown

from ..builders import bench_record


def test_step_breakdown_title_does_not_call_the_ddp_bar_plain() -> None:
    """The 1-device bar is DDP's one-rank step (it carries a DDP's-own-overhead segment),
    not the bare module's "plain" step: the title tells the bars apart by their fill."""
    records = [
        bench_record("m", 10**6, 1, 100.0, sync_overhead_ms=0.5, plain_step_ms=3.0),
        bench_record("m", 10**6, 2, 150.0, sync_overhead_ms=2.5, comm_ms=8.0),
    ]
    chart = step_breakdown(bench_scaling(bench_table(records)))
    title = chart.figure.axes[0].get_title()
    overhead_on_one = [t for t in chart.labels["bar-1-2-0"] if t.startswith("DDP's own overhead")]
    assert overhead_on_one and not overhead_on_one[0].startswith("DDP's own overhead 0%")
    assert "plain" not in title
    assert "1 device (solid) vs 2 (hatched)" in title and "DDP" in title

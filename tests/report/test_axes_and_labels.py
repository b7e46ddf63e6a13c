"""Figure text a reader can use (issue 37): a log axis spanning less than a decade still
has ticks to read it by, and the counts written beside points never overlap."""

from __future__ import annotations

import itertools

import pandas as pd
import pytest
from matplotlib.backends.backend_agg import FigureCanvasAgg

from gpuscale.analysis.analyze import analyze_workload
from gpuscale.report.figures import FIGURES
from gpuscale.report.rounds_figures import SHARED_COUNT, trend_chart
from gpuscale.report.style import log_y, new_axes


def ticks_in_view(axis, limits) -> list[str]:
    low, high = sorted(limits)
    return [
        t.label1.get_text()
        for t in axis.get_major_ticks()
        if low <= t.get_loc() <= high and t.label1.get_visible() and t.label1.get_text()
    ]


@pytest.mark.parametrize("low, high", [(0.67, 1.12), (3.5e6, 4.2e6), (120.0, 180.0)])
def test_a_log_axis_within_a_decade_has_several_labelled_ticks(low, high) -> None:
    fig, ax = new_axes()
    ax.plot([1, 2], [low, high])
    log_y(ax, "value")
    ax.set_ylim(low, high)
    FigureCanvasAgg(fig).draw()
    labels = ticks_in_view(ax.yaxis, ax.get_ylim())
    assert len(labels) >= 3, labels
    assert len(set(labels)) == len(labels)  # no two ticks written alike


def test_a_wide_log_axis_keeps_its_one_two_five_ticks() -> None:
    fig, ax = new_axes()
    ax.plot([1, 2], [0.1, 1000])
    log_y(ax, "value")
    FigureCanvasAgg(fig).draw()
    labels = ticks_in_view(ax.yaxis, ax.get_ylim())
    assert {"0.1", "1", "10", "100", "1000"} <= set(labels)
    assert {label[0] for label in labels} <= {"1", "2", "5", "0"}


def test_the_dlrm_convergence_figure_can_be_read(v50) -> None:
    """DLRM DCNv2's epochs to converge span 0.67-1.12: the y axis had one tick, "1"."""
    result = analyze_workload(v50, "v5.0", "dlrm_dcnv2")
    chart = FIGURES["convergence"](result)
    FigureCanvasAgg(chart.figure).draw()
    ax = chart.figure.axes[0]
    assert len(ticks_in_view(ax.yaxis, ax.get_ylim())) >= 3


def test_the_batch_ticks_of_a_convergence_figure_never_overlap(v50) -> None:
    """R-GAT's global batches span 4,096-262,144: seven ticks written whole overlapped."""
    result = analyze_workload(v50, "v5.0", "rgat")
    figure = FIGURES["convergence"](result).figure
    canvas = FigureCanvasAgg(figure)
    canvas.draw()
    renderer = canvas.get_renderer()
    ax = figure.axes[0]
    low, high = sorted(ax.get_xlim())
    labels = [
        t.label1
        for t in ax.xaxis.get_major_ticks()
        if low <= t.get_loc() <= high and t.label1.get_visible() and t.label1.get_text()
    ]
    assert len(labels) >= 3
    boxes = sorted((label.get_window_extent(renderer) for label in labels), key=lambda b: b.x0)
    assert all(a.x1 < b.x0 for a, b in itertools.pairwise(boxes))


def trend_rows(times: dict[str, tuple[int, float]]) -> pd.DataFrame:
    """One round, each family at its (common count, best time)."""
    return pd.DataFrame(
        [
            {
                "round": "v4.1",
                "accelerator_family": family,
                "common_accelerators": count,
                "best_time_at_common_min": minutes,
                "best_time_at_largest_min": minutes / 4,
                "largest_accelerators": count * 8,
                "normalized_efficiency_at_largest": 0.5,
            }
            for family, (count, minutes) in times.items()
        ]
    )


def test_counts_beside_near_points_never_overlap() -> None:
    """Four families at 8 accelerators within 5% of each other's time, one at 4 among
    them: the near 8s are written once (grey: shared), the 4 apart from them."""
    rows = trend_rows(
        {
            "H100-SXM5-80GB": (8, 30.0),
            "H200-SXM5-141GB": (8, 30.6),
            "B200": (8, 31.2),
            "MI300X": (4, 31.5),
            "Gaudi2": (8, 32.0),
            "A100-SXM4-80GB": (8, 300.0),
        }
    )
    chart = trend_chart(rows, "bert")
    canvas = FigureCanvasAgg(chart.figure)
    canvas.draw()
    renderer = canvas.get_renderer()
    texts = chart.figure.axes[0].texts
    boxes = [t.get_window_extent(renderer) for t in texts]
    for i, box in enumerate(boxes):
        for other in boxes[i + 1 :]:
            assert not box.overlaps(other), [t.get_text() for t in texts]
    written = [t.get_text() for t in texts]
    assert written.count("4") == 1 and "8" in written
    assert len(written) < len(rows)  # near points of one count share a label
    assert [t for t in texts if t.get_text() == "8" and t.get_color() == SHARED_COUNT]


def test_bundled_trends_have_no_overlapping_counts(bundled) -> None:
    from gpuscale.analysis.trends import trends
    from gpuscale.mlperf.benchmarks import first_rounds, last_rounds

    rows = trends(
        bundled.scores,
        ["bert", "retinanet"],
        first_rounds=first_rounds(),
        last_rounds=last_rounds(),
    )
    for workload, group in rows.groupby("workload"):
        chart = trend_chart(group, workload)
        canvas = FigureCanvasAgg(chart.figure)
        canvas.draw()
        boxes = [t.get_window_extent(canvas.get_renderer()) for t in chart.figure.axes[0].texts]
        overlapping = sum(a.overlaps(b) for i, a in enumerate(boxes) for b in boxes[i + 1 :])
        assert overlapping == 0, workload


def test_no_legend_asks_to_hover(study_analysis) -> None:
    """A PNG (``--png``) has no hover: a legend never says "(hover)" (the E' figure's
    ringed points did); the captions of the page say where hovering shows a name."""
    from gpuscale.report.figures import overview

    results = study_analysis["study"]
    charts = [make(r) for r in results for make in FIGURES.values()] + [overview(results)]
    for chart in charts:
        for ax in chart.figure.axes:
            legend = ax.get_legend()
            texts = [t.get_text() for t in legend.get_texts()] if legend else []
            assert not [t for t in texts if "hover" in t.lower()], texts


def test_legend_markers_never_touch(study_analysis) -> None:
    """The equilibrium picks' legend markers (knee, speed x efficiency, threshold) drawn
    at the plot's size touched one another (a user walk, Llama2's E' figure): two
    neighbouring entries' markers (``s`` in points squared) fit in the rows' pitch."""
    for result in study_analysis["study"]:
        chart = FIGURES["efficiency"](result)
        canvas = FigureCanvasAgg(chart.figure)
        canvas.draw()
        renderer = canvas.get_renderer()
        legend = chart.figure.axes[0].get_legend()
        points_per_pixel = 72 / chart.figure.dpi
        rows = []  # (the entry's centre in points, its marker's diameter in points)
        for handle, text in zip(legend.legend_handles, legend.get_texts(), strict=True):
            box = text.get_window_extent(renderer)
            size = handle.get_sizes()[0] if hasattr(handle, "get_sizes") else 0.0
            rows.append(((box.y0 + box.y1) / 2 * points_per_pixel, size**0.5))
        for (y_a, d_a), (y_b, d_b) in itertools.pairwise(rows):
            assert (d_a + d_b) / 2 <= abs(y_a - y_b), (result.workload, d_a, d_b, y_a - y_b)

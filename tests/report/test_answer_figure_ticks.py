"""Every panel of the answer's figures gives a scale to read a point by: two ticks or more
on each axis, also where the values span less than one 1-2-5 step (GPT-3's E' lies within
0.5-2 in v3.0, v3.1 and v4.0, where only the tick 1 falls)."""

from __future__ import annotations

import numpy as np
import pytest
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.colors import to_hex

from gpuscale.analysis import AnalysisOptions, analyze
from gpuscale.mlperf import load_round
from gpuscale.report.answer_figures import NICE, _two_or_more, overview_like, scaling


def _ticks_in_view(axis, view: tuple[float, float]) -> list[float]:
    low, high = sorted(view)
    return [t for t in axis.get_majorticklocs() if low * (1 - 1e-9) <= t <= high * (1 + 1e-9)]


@pytest.fixture(scope="module")
def gpt3():
    tables = load_round("v4.0")
    return analyze(tables, ["gpt3"], AnalysisOptions(n_boot=100))[0]


@pytest.mark.parametrize("draw", [overview_like, scaling], ids=["first screen", "workload"])
def test_each_log_panel_has_two_ticks_or_more(gpt3, draw) -> None:
    figure = (draw([gpt3]) if draw is overview_like else draw(gpt3)).figure
    FigureCanvasAgg(figure).draw()
    for ax in (a for a in figure.axes if a.get_visible() and a.get_yscale() == "log"):
        assert len(_ticks_in_view(ax.yaxis, ax.get_ylim())) >= 2, ax.get_title()
        assert len(_ticks_in_view(ax.xaxis, ax.get_xlim())) >= 2, ax.get_title()


def test_a_view_with_one_tick_widens_to_the_ticks_around_it() -> None:
    ticks, view = _two_or_more((0.6, 1.9), NICE)
    assert list(ticks) == [0.5, 1.0, 2.0] and view == (0.5, 2.0)
    ticks, view = _two_or_more((0.6, 9.0), NICE)
    assert list(ticks) == [1.0, 2.0, 5.0] and view == (0.6, 9.0)  # enough: kept as it was
    counts = (4.0 ** np.arange(0, 9), 2.0 ** np.arange(0, 17))
    ticks, view = _two_or_more((6.0, 40.0), *counts)
    assert list(ticks) == [8.0, 16.0, 32.0] and view == (6.0, 40.0)  # powers of 2 then


@pytest.mark.parametrize("draw", [overview_like, scaling], ids=["first screen", "workload"])
def test_the_recommended_count_at_the_largest_is_written_inside(draw) -> None:
    """v3.0 GPT-3's 3,584 H100s, the largest count, ringed at the right edge of a right-hand
    panel: its count is written to the ring's left, inside the axes and the figure."""
    from .figure_checks import clipped_texts

    (result,) = analyze(load_round("v3.0"), ["gpt3"], AnalysisOptions(n_boot=100))
    figure = (draw([result]) if draw is overview_like else draw(result)).figure
    renderer = FigureCanvasAgg(figure).get_renderer()
    written = [(ax, t) for ax in figure.axes for t in ax.texts if t.get_text() == "3,584"]
    assert written
    for ax, text in written:
        assert text.get_window_extent(renderer).x1 <= ax.get_window_extent(renderer).x1
    assert clipped_texts(figure) == []


@pytest.fixture(scope="module")
def v30_all():
    """Every v3.0 workload: the first screen of a round of 11 families, 14 legend entries."""
    tables = load_round("v3.0")
    return analyze(tables, sorted(set(tables.scores["benchmark"])), AnalysisOptions(n_boot=100))


def test_a_legend_of_four_rows_or_more_leaves_the_x_labels_clear(v30_all) -> None:
    """v3.0's first screen: its legend's fourth row wrote over 'accelerators (log scale)' of
    the bottom panels; the figure grows by the rows, the panels keep their height."""
    figure = overview_like(v30_all).figure
    (gpt3,) = [r for r in v30_all if r.workload == "gpt3"]  # 2 families: a legend of 1 row
    few = overview_like([gpt3] * len(v30_all)).figure
    renderer = FigureCanvasAgg(figure).get_renderer()
    FigureCanvasAgg(figure).draw()
    (legend,) = figure.legends
    assert len(legend.legend_handles) >= 13  # four rows of four
    box = legend.get_window_extent(renderer)
    labels = [ax.xaxis.label for ax in figure.axes if ax.get_visible() and ax.get_xlabel()]
    assert len(labels) == 2
    assert all(not label.get_window_extent(renderer).overlaps(box) for label in labels)
    for ax in figure.axes:
        if ax.get_visible():
            assert not ax.get_tightbbox(renderer).overlaps(box), ax.get_title()
    height_in = [f.axes[0].get_position().height * f.get_figheight() for f in (few, figure)]
    assert height_in[1] == pytest.approx(height_in[0])


def test_the_ring_at_the_largest_count_is_whole_and_its_count_over_the_points(v30_all) -> None:
    """v3.0 GPT-3's ring at 3,584, the round's largest count: the shared view spans every
    panel's counts, so the ring lies whole inside its panel (it crossed the right edge while
    the first panel's counts alone set the view); RetinaNet's count 8 is written over the
    markers at the next count."""
    figure = overview_like(v30_all).figure
    canvas = FigureCanvasAgg(figure)
    canvas.draw()
    renderer = canvas.get_renderer()
    titles = {ax.get_title(): ax for ax in figure.axes}
    gpt3 = titles["GPT-3 175B (v3.0): 3,584 recommended"]
    (count,) = [t for t in gpt3.texts if t.get_text() == "3,584"]
    x, _ = gpt3.transData.transform(count.xy)  # the ringed point
    radius = np.sqrt(170) / 2 * figure.dpi / 72  # RING's size: 170 points squared
    assert x + radius < gpt3.get_window_extent(renderer).x1
    retinanet = titles["RetinaNet (v3.0): 8 recommended"]
    (count,) = [t for t in retinanet.texts if t.get_text() == "8"]
    box = count.get_window_extent(renderer)
    under = [
        c.get_zorder()
        for c in retinanet.collections
        if len(c.get_offsets()) and c.get_window_extent(renderer).overlaps(box)
    ]
    assert under and count.get_zorder() > max(under)


def test_a_column_whose_last_panel_is_empty_reads_its_counts_on_the_panel_above(v50) -> None:
    """Three workloads on the first screen (v5.0's seven alike): the right column's lowest
    panel is in the row above the empty one; it carries that column's count ticks and
    label (sharing x, it drew neither: R-GAT's panel had no scale of accelerators)."""
    results = analyze(v50, ["bert", "dlrm_dcnv2", "rgat"], AnalysisOptions(n_boot=100))
    figure = overview_like(results).figure
    FigureCanvasAgg(figure).draw()
    shown = [ax for ax in figure.axes if ax.get_visible()]
    assert len(shown) == 3 and len(figure.axes) == 4
    for ax in shown:
        below = [
            other
            for other in shown
            if other is not ax
            and abs(other.get_position().x0 - ax.get_position().x0) < 1e-6
            and other.get_position().y0 < ax.get_position().y0
        ]
        written = [t.get_text() for t in ax.get_xticklabels() if t.get_visible() and t.get_text()]
        if below:
            assert ax.get_xlabel() == "", ax.get_title()
        else:  # the lowest drawn panel of its column
            assert len(written) >= 2, ax.get_title()
            assert ax.get_xlabel() == "accelerators (log scale)", ax.get_title()


def test_every_panel_of_a_workload_names_its_axes_and_says_which_are_log(gpt3) -> None:
    """The four panels: speedup, E' and why E' falls had no y label, their counts' axis
    no word of its log scale (the first screen's said it): each axis is named, a log one
    says so, and the dotted line at the recommended count is in the legend."""
    figure = scaling(gpt3).figure
    for ax in figure.axes:
        for label, scale in (
            (ax.get_xlabel(), ax.get_xscale()),
            (ax.get_ylabel(), ax.get_yscale()),
        ):
            assert label, ax.get_title()
            assert ("(log scale)" in label) == (scale == "log"), (ax.get_title(), label)
    why = next(ax for ax in figure.axes if ax.get_title().startswith("Why E' falls"))
    said = [t.get_text() for t in why.get_legend().get_texts()]
    assert any(t.startswith("recommended: ") for t in said), said


def _line_keys(lines) -> set[tuple[str, str]]:
    """Each line's (colour, linestyle) as drawn: what a reader matches a key to."""
    return {(to_hex(line.get_color()), line.get_linestyle()) for line in lines}


@pytest.mark.parametrize("case", ["v4.0 GPT-3", "v3.0 all"])
def test_the_first_screens_line_keys_are_the_lines_its_panels_draw(gpt3, v30_all, case):
    """The legend's keys of lines against the panels' lines: the threshold's key was grey
    where each panel drew its line in the recommended family's blue, and the dashed E' = 1
    had no key. v4.0 GPT-3 draws one threshold line (one key, "0.8 x best"); v3.0's panels
    draw two colours (Mask R-CNN's recommended A100's, the others' H100's): a key each."""
    figure = overview_like([gpt3] if case == "v4.0 GPT-3" else v30_all).figure
    (legend,) = figure.legends
    keys = {
        text.get_text(): handle
        for text, handle in zip(legend.get_texts(), legend.legend_handles, strict=True)
        if handle.get_linestyle() not in ("None", "")
    }
    drawn = {ax.get_title(): ax.get_lines() for ax in figure.axes if ax.get_visible()}
    assert _line_keys(keys.values()) == _line_keys(line for ls in drawn.values() for line in ls)
    assert _line_keys([keys["E' = 1"]]) == {(to_hex("#555555"), "--")}
    if case == "v4.0 GPT-3":
        assert set(keys) == {"E' = 1", "0.8 x best"}
        return
    a100 = "0.8 x A100-SXM4-40GB's best"
    assert set(keys) == {"E' = 1", "0.8 x H100-SXM5-80GB's best", a100}
    maskrcnn = next(ls for title, ls in drawn.items() if title.startswith("Mask R-CNN"))
    assert _line_keys([keys[a100]]) == {k for k in _line_keys(maskrcnn) if k[1] == ":"}


def test_every_panel_of_the_first_screen_shows_all_its_systems() -> None:
    """v4.1's GPT-3 (64-11,616 accelerators) drawn before Stable Diffusion (4-1,024): the
    panels share their x axis, which spans every panel's counts, so Stable Diffusion's 4-32
    and its ring at 8 lie inside the view, not left of it."""
    tables = load_round("v4.1")
    results = analyze(tables, ["gpt3", "stable_diffusion"], AnalysisOptions(n_boot=100))
    figure = overview_like(results).figure
    FigureCanvasAgg(figure).draw()
    panels = [ax for ax in figure.axes if ax.get_visible()]
    assert len(panels) == 2
    for ax, result in zip(panels, results, strict=True):
        low, high = ax.get_xlim()
        counts = result.table["accelerators"]
        assert (low, high) == panels[0].get_xlim()
        assert low <= counts.min() and counts.max() <= high, (ax.get_title(), low, high)
        rings = [c for c in ax.collections if not c.get_clip_on()]  # RING: never clipped
        ((x, _),) = [o for c in rings for o in c.get_offsets()]
        assert low <= x <= high, ax.get_title()


def test_why_e_prime_falls_panel_draws_e_prime_hollow(gpt3) -> None:
    """The workload figure's 'Why E' falls' panel drew E' filled on top of the throughput
    efficiency, hiding it where the convergence factor is 1 (v3.0 BERT's H100s at 4 and
    8), as the decomposition figure did before it drew E' hollow."""
    figure = scaling(gpt3).figure
    (panel,) = [ax for ax in figure.axes if ax.get_title().startswith("Why E' falls")]
    lines = {line.get_label(): line for line in panel.get_lines()}
    assert lines["E' (their product)"].get_markerfacecolor() == "none"
    assert lines["throughput efficiency"].get_markerfacecolor() != "none"
    assert (
        lines["E' (their product)"].get_markersize()
        > lines["throughput efficiency"].get_markersize()
    )

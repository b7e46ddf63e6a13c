"""Figures plot the table's data; SVG tooltips name the systems and are escaped."""

from __future__ import annotations

import dataclasses
import re
from html import escape

import numpy as np
import pytest

from gpuscale.analysis import AnalysisOptions, analyze
from gpuscale.analysis.decompose import decompose
from gpuscale.quantities import number
from gpuscale.report.figures import FIGURES, overview
from gpuscale.report.figures_common import NothingToDraw
from gpuscale.report.svg import chart_svg

from ..analysis.tables import round_of, scores
from ..golden import Golden
from .figure_checks import clipped_texts

EVIL = "<script>alert(1)</script>"
VIEW = "report/figure_labels"


@pytest.fixture(scope="module")
def result():
    rows = [
        ("a2", "A5000", 2, 100.0),
        ("b2", "A5000", 2, 120.0),
        ("h8", "H100", 8, 10.0),
        ("h16", "H100", 16, 5.5),
        ("h64", "H100", 64, 2.0),
        ("h128", "H100", 128, 1.4),
    ]
    frame = scores(rows)
    frame.loc[frame.system_id == "h16", "system_name"] = EVIL
    tables = round_of(frame)
    return analyze(tables, ["bert"], AnalysisOptions(n_boot=200))[0]


def offsets(figure, gid):
    for ax in figure.axes:
        for collection in ax.collections:
            if collection.get_gid() == gid:
                return collection.get_offsets()
    raise AssertionError(f"no collection {gid}")


def test_efficiency_points_are_the_tables(result) -> None:
    chart = FIGURES["efficiency"](result)
    plotted = np.vstack([offsets(chart.figure, gid) for gid in sorted(chart.labels)])
    expected = result.table[["accelerators", "normalized_efficiency"]].to_numpy(float)
    assert sorted(map(tuple, plotted)) == sorted(map(tuple, expected))
    assert chart.figure.axes[0].get_xscale() == "log"


def test_time_vs_cost_points_and_labels(result) -> None:
    chart = FIGURES["time_vs_cost"](result)
    plotted = offsets(chart.figure, "points-all")
    assert np.allclose(
        plotted, result.table[["accelerator_hours", "time_to_train_min"]].to_numpy(float)
    )
    assert len(chart.labels["points-all"]) == len(result.table)


def test_systems_figure_sizes_count_shared_configurations(result, golden: Golden) -> None:
    chart = FIGURES["systems"](result)
    labels = chart.labels["points-grouped"]
    (shared,) = [label for label in labels if ": 2 systems: " in label]
    assert shared.startswith("A5000, 2 ")  # the configuration two systems share
    golden.check(VIEW, "systems: grouped points", "\n".join(labels))
    assert len(labels) == 5  # (A5000, 2) shared by two systems


def test_systems_figure_colours_each_cluster_of_a_shared_configuration(result) -> None:
    """A configuration whose systems fall in two clusters (v4.0 Llama2 70B LoRA: Juniper's
    8-H100 DeepSpeed run apart from the other eleven at 8) is a marker per cluster, each
    in its cluster's colour and sized by its own systems, its tooltip naming the cluster."""
    from matplotlib.colors import to_rgb

    from gpuscale.report.style import cluster_colour

    table = result.table.copy()
    table["cluster"] = np.where(table["system_id"] == "b2", 1, 0)
    chart = FIGURES["systems"](dataclasses.replace(result, table=table))
    (points,) = [c for c in chart.figure.axes[0].collections if c.get_gid() == "points-grouped"]
    at_two = points.get_offsets()[:, 0] == 2
    colours = {tuple(np.round(rgba[:3], 3)) for rgba in points.get_facecolors()[at_two]}
    assert colours == {tuple(np.round(to_rgb(cluster_colour(c)), 3)) for c in (0, 1)}
    assert sorted(points.get_sizes()[at_two]) == [30.0, 30.0]  # one system each
    labels = chart.labels["points-grouped"]
    assert "A5000, 2 accelerators: 1 system in cluster 1: B2" in labels
    assert "H100, 8 accelerators: 1 system: H8" in labels  # one cluster: not said


def test_every_figure_has_axis_labels(result) -> None:
    for name, make in FIGURES.items():
        if name == "convergence":  # the fixture's systems log no global batch
            with pytest.raises(NothingToDraw, match="no global batch"):
                make(result)
            continue
        ax = make(result).figure.axes[0]
        assert ax.get_xlabel() and ax.get_title()
    assert overview([result]).figure.axes[0].get_title()


def test_a_figure_of_flagged_counts_only_is_not_drawn_and_says_why(result, golden: Golden) -> None:
    """Samples to converge flagged as impossible (v2.0 BERT: 1.0) are in no figure: the
    decomposition and the convergence figure say why instead of drawing nothing."""
    table = result.table.assign(
        global_batch_size=256.0, samples_to_converge_flag="1 samples is more than 10x ..."
    )
    flagged = dataclasses.replace(result, table=decompose(table))
    for name in ("decomposition", "convergence"):
        with pytest.raises(NothingToDraw, match="flagged") as refused:
            FIGURES[name](flagged)
        golden.check(VIEW, f"{name}: every count flagged", str(refused.value))


def test_an_interval_that_excludes_its_estimate_draws_a_bar_ending_there(result) -> None:
    """The analysis no longer gives one, but an E' interval lying wholly below its E'
    (as RetinaNet's in v5.0 under the family rule did) must not stop the report
    (matplotlib refuses a negative error bar): its bar runs from the low end up to E'."""
    table = result.table.copy()
    row = table.index[table["system_id"] == "h16"][0]
    value = float(table.at[row, "normalized_efficiency"])
    table.loc[row, ["normalized_efficiency_ci_low", "normalized_efficiency_ci_high"]] = [
        value * 0.9,
        value * 0.95,
    ]
    chart = FIGURES["efficiency_ci"](dataclasses.replace(result, table=table))
    segments = [
        segment
        for collection in chart.figure.axes[0].collections
        for segment in getattr(collection, "get_segments", list)()
    ]
    at = table.at[row, "accelerators"]
    ends = {tuple(np.round(s[:, 1], 9)) for s in segments if s[0, 0] == at}
    assert ends == {(round(value * 0.9, 9), round(value, 9))}


def test_svg_tooltips_escape_untrusted_names(result) -> None:
    chart = FIGURES["efficiency"](result)
    svg = chart_svg(chart, "t")
    assert svg.count("<title>") == len(result.table)
    assert EVIL not in svg and escape(EVIL, quote=False) in svg


def test_decomposition_figure_plots_the_three_factors(result, golden: Golden) -> None:
    """Within the family that ran the most counts (H100: 4 systems) against its own reference, the
    slowest at its fewest accelerators (8), as the section's sentence: E' = (T_8 / T) / (N / 8)."""
    chart = FIGURES["decomposition"](result)
    assert len(chart.labels) == 3
    plotted = offsets(chart.figure, "points-2")[:, 1]
    h100 = result.table[result.table["accelerator_family"] == "H100"]
    t8 = float(h100.loc[h100["accelerators"] == 8, "time_to_train_min"].max())
    expected = t8 / h100["time_to_train_min"] / (h100["accelerators"] / 8)
    assert sorted(plotted) == pytest.approx(sorted(expected))
    assert "within H100" in chart.figure.axes[0].get_title()
    # Tooltips name the factor on one line (the legend's label wraps)
    assert all(label.startswith("E' ") for label in chart.labels["points-2"])
    assert all(label.startswith("throughput ") for label in chart.labels["points-0"])
    firsts = "\n".join(chart.labels[key][0] for key in sorted(chart.labels))
    golden.check(VIEW, "decomposition: each factor's first tooltip", firsts)
    # E' is hollow: where the convergence factor is 1 it lies on the throughput point,
    # which a filled E' marker would hide
    collections = {c.get_gid(): c for c in chart.figure.axes[0].collections}
    assert not collections["points-2"].get_facecolors()[:, 3].any()
    assert collections["points-0"].get_facecolors()[:, 3].min() > 0


def test_nothing_is_cut_off(study_analysis, v50) -> None:
    """Every workload figure of the study's v4.1 analysis, the systems figure of every
    v5.0 workload (few families: a short figure whose axis label once fell off), and the
    overview of one workload (its title once overflowed) keep every text inside."""
    results = study_analysis["study"]
    charts = [make(r) for r in results for make in FIGURES.values()]
    v50_results = analyze(v50, sorted(v50.scores["workload"].unique()), AnalysisOptions(n_boot=100))
    charts += [FIGURES["systems"](r) for r in v50_results]
    charts += [overview(results[:1]), overview(results)]
    clipped = {
        chart.figure.axes[0].get_title(): found
        for chart in charts
        if (found := clipped_texts(chart.figure))
    }
    assert clipped == {}


def test_a_long_family_name_is_not_cut_off(v50) -> None:
    """The systems figure names families on its y axis: a name longer than its left margin
    holds (v0.7's V100-SXM3-32GB-450W) widens the figure, the axes kept."""
    from dataclasses import replace

    (result,) = analyze(v50, ["bert"], AnalysisOptions(n_boot=100))
    first = result.table["accelerator_family"].iloc[0]
    long_name = result.table["accelerator_family"].replace(first, "V100-SXM3-32GB-450W-" * 2)
    renamed = replace(result, table=result.table.assign(accelerator_family=long_name))
    short, wide = (FIGURES["systems"](r).figure for r in (result, renamed))
    assert clipped_texts(wide) == []
    assert wide.get_figwidth() > short.get_figwidth()
    axes_width_in = [f.axes[0].get_position().width * f.get_figwidth() for f in (short, wide)]
    assert axes_width_in[1] == pytest.approx(axes_width_in[0])


def test_clipping_check_can_fail() -> None:
    from matplotlib.figure import Figure

    figure = Figure(figsize=(2, 1))
    ax = figure.subplots()
    ax.set_xlabel("a label far too long for a figure two inches wide, surely")
    assert clipped_texts(figure)


def test_families_keep_one_colour_and_never_share_one_in_a_figure() -> None:
    from gpuscale.report.style import FAMILY_ORDER, family_styles

    every = family_styles(FAMILY_ORDER[:16])
    assert len({c for c, _ in every.values()}) == 16
    pair = family_styles(["A100-PCIe-80GB", "RTX 4090", "B200", "RTX A5000"])
    assert len({c for c, _ in pair.values()}) == 4  # these pairs once shared a colour
    assert pair["B200"] == every["B200"]  # the same colour in every figure


def test_trend_lines_join_only_the_same_accelerator_count() -> None:
    import pandas as pd

    from gpuscale.report.rounds_figures import trend_chart

    rows = pd.DataFrame(
        {
            "round": ["v4.0", "v4.1", "v5.0"],
            "accelerator_family": ["H100-SXM5-80GB"] * 3,
            "common_accelerators": [8, 8, 64],
            "best_time_at_common_min": [5.3, 5.1, 0.9],
            "largest_accelerators": [3072, 3472, 4096],
            "best_time_at_largest_min": [0.12, 0.12, 0.1],
            "normalized_efficiency_at_largest": [0.1, 0.1, 0.1],
        }
    )
    chart = trend_chart(rows, "bert")
    lines = [line for line in chart.figure.axes[0].lines if len(line.get_xdata()) == 2]
    assert [list(line.get_xdata()) for line in lines] == [[0, 1]]  # not v4.1 -> v5.0


def test_an_odd_overview_labels_the_x_axis_above_its_empty_panel(study_analysis) -> None:
    """Three workloads on a 2 x 2 grid: the panel above the empty corner carries its x
    tick labels and label (sharex had hidden them: a panel without an x axis)."""
    from gpuscale.report.figures import overview

    chart = overview(study_analysis["study"][:3])
    chart.figure.canvas.draw()
    shown = [ax for ax in chart.figure.axes if ax.get_visible()]
    assert len(shown) == 3
    for ax in shown[1:]:  # the right column's only panel and the bottom-left one
        labels = [t.get_text() for t in ax.get_xticklabels() if t.get_visible() and t.get_text()]
        assert labels and ax.get_xlabel() == "accelerators (log scale)", (ax.get_title(), labels)


def test_a_labelled_log_axis_says_it_is_log(study_analysis) -> None:
    """Every figure of a workload and the study's overview: a log axis's label says so
    (the overview's 'accelerators' and convergence's 'samples to converge' did not, where
    the E' axis beside them and every other figure's did)."""
    results = study_analysis["study"]
    charts = [make(r) for r in results[:2] for make in FIGURES.values()]
    charts.append(overview(results))
    unsaid = [
        (ax.get_title(), label)
        for chart in charts
        for ax in chart.figure.axes
        if ax.get_visible()
        for label, scale in ((ax.get_xlabel(), ax.get_xscale()), (ax.get_ylabel(), ax.get_yscale()))
        if label and (scale == "log") != ("(log scale)" in label)
    ]
    assert unsaid == []


def test_a_familys_threshold_pick_says_whose_best_it_is(result) -> None:
    """A walk: under the study's rule the E' figure marked "picks within H100-SXM5-80GB:
    E' >= 0.8 x best: 8" on a point far below 0.8 x the plotted best (another family's):
    the threshold is the family's own best, and the legend says so."""
    from gpuscale.analysis.study import within_family
    from gpuscale.report.figures import lead_equilibrium

    eq = lead_equilibrium(result)
    pick = eq.efficiency_threshold
    assert eq.scope != "all" and pick is not None  # the data: the picks are a family's
    # the family's E', against its own reference: what the pick's E' is
    own = within_family(result.table, eq.scope)["normalized_efficiency"]
    assert pick.normalized_efficiency >= eq.threshold * own.max()
    chart = FIGURES["efficiency"](result)
    texts = [t.get_text() for t in chart.figure.axes[0].get_legend().get_texts()]
    said = [t for t in texts if f"{eq.threshold:g} x its best" in t]
    assert said and said[0].endswith(
        f": {pick.accelerators:,}\n(own E' {number(pick.normalized_efficiency)})"
    ), texts


def test_the_e_figure_names_its_reference_and_the_picks_own_e() -> None:
    """v4.1 BERT's E' figure named no reference (E' there is against the study's, Krai's
    2 x RTX A5000), and its "picks within H100-SXM5-80GB" sat at E' ~17 with nothing to
    say the threshold pick's own E' is 0.978, against the family's 4 x H100: the title
    and caption name the reference, the legend the picks' own E' and theirs."""
    from gpuscale import load_round
    from gpuscale.report.figures import lead_equilibrium
    from gpuscale.report.workload_figures import caption

    (bert,) = analyze(load_round("v4.1"), ["bert"], AnalysisOptions(n_boot=100))
    chart = FIGURES["efficiency"](bert)
    ax = chart.figure.axes[0]
    assert ax.get_title() == "BERT (v4.1): E' against 2 x RTX A5000 (Krai)", ax.get_title()
    assert caption("efficiency", bert).endswith("; E' against 2 x RTX A5000 (Krai)")
    eq = lead_equilibrium(bert)
    pick = eq.efficiency_threshold
    assert (eq.scope, pick.accelerators) == ("H100-SXM5-80GB", 8)
    assert round(pick.normalized_efficiency, 3) == 0.978
    texts = [t.get_text() for t in ax.get_legend().get_texts()]
    assert "picks within\nH100-SXM5-80GB\n(own E' against\n4 x H100-SXM5-80GB):" in texts
    assert "E' >= 0.8 x its best: 8\n(own E' 0.978)" in texts, texts


def test_the_speedup_figure_names_its_reference_whole() -> None:
    """The speedup figure's title said only "speedup": a PNG pasted alone did not say that
    v4.1 GPT-3's S is against 64 B200s, though most systems are H100s. It names N_ref's
    system as the E' figure does, on two lines where one would be cut at the figure's
    edge (Llama2 70B LoRA's; v3.0 BERT's E' title, against Quanta_Cloud_Technology's
    2 x H100-PCIe-80GB, lost its start so). The intervals' figure named none."""
    from gpuscale import load_round

    from .figure_checks import clipped_texts

    names = ["gpt3", "stable_diffusion", "llama2_70b_lora"]
    results = analyze(load_round("v4.1"), names, AnalysisOptions(n_boot=100))
    results += analyze(load_round("v3.0"), ["bert"], AnalysisOptions(n_boot=100))
    titles = {}
    kinds = ("speedup", "efficiency", "efficiency_ci")
    for r, kind in ((r, k) for r in results for k in kinds):
        figure = FIGURES[kind](r).figure
        titles[r.workload, r.round, kind] = figure.axes[0].get_title()
        assert clipped_texts(figure) == [], (r.workload, r.round, kind)
    # the intervals' figure names its reference too, on as many lines as it takes
    assert titles["bert", "v3.0", "efficiency_ci"].split("\n") == [
        "BERT (v3.0):",
        "E' (95% bootstrap intervals) against 2 x H100-PCIe-80GB",
        "(Quanta_Cloud_Technology)",
    ]
    titles = {w: t for (w, rnd, kind), t in titles.items() if kind == "speedup" and rnd == "v4.1"}
    assert titles["gpt3"] == "GPT-3 175B (v4.1): speedup against 64 x B200 (NVIDIA)"
    assert titles["llama2_70b_lora"] == (
        "Llama2 70B LoRA (v4.1):\nspeedup against 4 x H100-SXM5-80GB (Dell)"
    )


def test_no_tooltip_prints_nan(result) -> None:
    """A value a figure has none of is left out of its tooltips, never printed "nan", and
    none is written with an exponent; the
    time-against-cost panel of the answer figure, which compares families and so no E',
    says each point's accelerator-hours, its x."""
    for name, draw in FIGURES.items():
        try:
            chart = draw(result)
        except NothingToDraw:
            continue
        for gid, texts in chart.labels.items():
            said = [t for t in texts if re.search(r"\bnan\b|\binf\b", t, re.IGNORECASE)]
            assert not said, (name, gid, said)
            # a number as quantities.number writes it: 2,475,000 samples, never 2.475e+06
            said = [t for t in texts if re.search(r"\d[eE][+-]?\d", t)]
            assert not said, (name, gid, said)
    # BERT's samples to converge, as the logs give them (2,475,064.7 in v4.1)
    counted = dataclasses.replace(
        result, table=result.table.assign(samples_to_converge=2_475_064.7, global_batch_size=256.0)
    )
    labels = FIGURES["convergence"](counted).labels["points-0"]
    assert all("2,475,000 samples to converge" in t for t in labels), labels
    chart = FIGURES["scaling"](result)
    hours = offsets(chart.figure, "hours")[:, 0]
    said = [
        float(re.search(r"([\d,.]+) accelerator-hours", t)[1].replace(",", ""))
        for t in chart.labels["hours"]
    ]
    assert said == pytest.approx(list(hours), rel=5e-3)


def test_the_overview_draws_the_recommended_family_over_the_others() -> None:
    """At E' = 1 every family's reference shares a point (v0.7: A100, TPU and V100 at 16):
    the recommended family's markers were drawn first, alphabetically, and hidden there.
    One collection draws in order: the recommended family's points come last."""
    from gpuscale.report.answer_figures import overview_like
    from gpuscale.report.recommend import recommend

    rows = [
        ("a8", "A100", 8, 10.0),
        ("a16", "A100", 16, 5.0),
        ("a64", "A100", 64, 1.3),
        ("t16", "TPU-v3", 16, 10.0),
        ("v8", "V100", 8, 20.0),
        ("v16", "V100", 16, 10.0),
    ]
    frame = scores(rows)
    tables = round_of(frame)
    analysed = analyze(tables, ["bert"], AnalysisOptions(n_boot=100))[0]
    assert recommend(analysed).family == "A100"
    chart = overview_like([analysed])
    drawn = [label.split(", ")[0].split(" x ")[1] for label in chart.labels["points-0"]]
    assert drawn == ["TPU-v3", "V100", "V100", "A100", "A100", "A100"]
    at_16 = [tuple(xy) for xy in offsets(chart.figure, "points-0")]
    assert at_16[-2] == (16.0, pytest.approx(1.0))  # A100's 16, drawn after TPU's and V100's

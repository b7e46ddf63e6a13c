"""Figures of one workload's analysis, as matplotlib Figures (nothing is shown or saved).

Each function takes a :class:`~gpuscale.analysis.WorkloadAnalysis` and returns a
:class:`Chart`: the Figure, whose scatter collections carry a ``gid``, and for each gid the
tooltip (system name and configuration) of every point, so the report can attach them.
Figures are built with matplotlib's object API (no pyplot state); colours are the
Okabe-Ito palette, safe for colour-blind readers; legends sit outside the axes so they
never hide data.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.ticker import FixedLocator, FuncFormatter, LogLocator, NullLocator

from gpuscale.analysis.analyze import WorkloadAnalysis, WorkloadTable
from gpuscale.analysis.crossing import scaling_family
from gpuscale.analysis.equilibrium import Equilibrium, Pick
from gpuscale.quantities import counted, number
from gpuscale.report.answer_figures import scaling
from gpuscale.report.bands import interval_bars
from gpuscale.report.convergence_figures import convergence, decomposition
from gpuscale.report.figures_common import (
    point_labels,
    superlinear_codes,
    system_words,
    title,
    title_against,
)
from gpuscale.report.style import (
    FIGSIZE,
    IDEAL_LABEL,
    IDEAL_LINE,
    MARGINS,
    REFERENCE_LINE,
    Chart,
    cluster_colour,
    cluster_legend,
    cluster_marker,
    count_label,
    family_styles,
    finish,
    legend_outside,
    log_log,
    log_x,
    new_axes,
    plain_log,
    room_for_ticks,
    set_markers,
    styled,
)
from gpuscale.tables import Criterion, display_name
from gpuscale.tables.measures import accelerator_hours

PICK_STYLE = {
    Criterion.KNEE: ("#000000", "D"),
    Criterion.SPEED_X_EFFICIENCY: ("#D55E00", "*"),
    Criterion.EFFICIENCY_THRESHOLD: ("#009E73", "P"),
}


def _family_points(
    ax: Axes,
    group: pd.DataFrame,
    column: str,
    gid: str,
    family: str,
    styles: dict[str, tuple[str, str]],
    labels: dict[str, list[str]],
) -> None:
    """One family's systems against accelerators, tagged ``gid`` with their tooltips."""
    colour, marker = styles[family]
    points = ax.scatter(
        group["accelerators"],
        group[column],
        c=colour,
        marker=marker,
        s=26,
        label=family,
        alpha=0.9,
        edgecolors="white",
        linewidths=0.4,
    )
    points.set_gid(gid)
    labels[gid] = point_labels(group)


def lead_equilibrium(result: WorkloadAnalysis) -> Equilibrium:
    """The picks a figure marks: like with like, those within the family that ran the most counts
    (the answer the summary leads with) where it picks any, else those over all systems."""
    family = scaling_family(result.table)
    own = (e for e in result.by_family if e.scope == family and e.picks)
    return next(own, result.equilibrium)


def _plotted_e(table: pd.DataFrame, pick: Pick) -> float:
    """The picked system's E' as the figure plots it (``table``'s reference), where the
    pick's own is within its family (``equilibrium_by_family``)."""
    mine = table[(table["org"] == pick.org) & (table["system_id"] == pick.system_id)]
    return float(next(iter(mine["normalized_efficiency"]), pick.normalized_efficiency))


def _mark_picks(
    ax: Axes,
    eq: Equilibrium,
    where: Callable[[Pick], tuple[float, float]],
    table: pd.DataFrame | None = None,
) -> None:
    """Equilibrium picks as large hollow markers at ``where(pick)`` (x, y), one legend
    entry per criterion (saying the family when the picks are a family's). Where the
    figure plots E' against another reference than the family's own (``table``'s), the
    marker rings the picked system and the legend gives the pick's own E' and whom it is
    against: a family's E' threshold pick at 0.98 against its own 4 x H100 sits at ~17
    against the study's 2 x RTX A5000."""
    within = eq.scope != "all"
    own = within and table is not None and bool(eq.reference) and _elsewhere(table, eq)
    if within and eq.picks:  # a legend line naming the family, then the picks
        whose = (
            f"\n(own E' against\n{system_words(table, eq.reference, short=True)}):" if own else ":"
        )
        ax.plot([], [], " ", label=f"picks within\n{eq.scope}{whose}")
    for pick in eq.picks:
        colour, marker = PICK_STYLE[pick.criterion]
        x, y = where(pick)
        style = {"facecolors": "none", "edgecolors": colour, "marker": marker}
        ax.scatter([x], [y], s=160, linewidths=1.4, zorder=5, **style)
        value = f"\n(own E' {number(pick.normalized_efficiency)})" if own else ""
        # the legend's marker smaller than the plot's: at full size the three touched
        ax.scatter(
            [],
            [],
            s=70,
            linewidths=1.2,
            label=f"{_legend(pick, within)}: {pick.accelerators:,}{value}",
            **style,
        )


def _elsewhere(table: pd.DataFrame, eq: Equilibrium) -> bool:
    """Whether ``table`` plots a pick of ``eq`` against another reference than the picks'
    own (``eq.reference``): the study's rule's reference, of another family."""
    keys = {(p.org, p.system_id) for p in eq.picks}
    rows = table[[(o, i) in keys for o, i in zip(table["org"], table["system_id"], strict=True)]]
    plotted = rows["reference_org"].astype(str) + "/" + rows["reference_system_id"].astype(str)
    return bool((plotted != eq.reference).any())


def _legend(pick: Pick, within: bool) -> str:
    """A pick's criterion in the legend: the family's own best E' where the picks are a
    family's, so that "E' >= 0.8 x best" is not read against the plotted best of another
    family."""
    return pick.label.replace("x best", "x its best") if within else pick.label


@styled
def systems_by_accelerator(result: WorkloadAnalysis) -> Chart:
    """The study's figure (a): accelerator family against accelerator count; marker size
    = systems sharing that configuration and cluster; colour and marker shape = K-means
    cluster (its own palette: family colours are for families). A configuration whose
    systems fall in several clusters gets a marker per cluster, the larger drawn first so
    the smaller shows on top of it, each tooltip naming its cluster."""
    table = result.table
    grouped = (
        table.groupby(["accelerator_family", "accelerators", "cluster"])
        .agg(
            systems=("system_id", "size"),
            names=("system_name", lambda s: "; ".join(map(str, s))),
        )
        .reset_index()
        .sort_values("systems", ascending=False, kind="stable")
        .reset_index(drop=True)
    )
    at = ["accelerator_family", "accelerators"]
    split = grouped.groupby(at)["cluster"].transform("size").to_numpy() > 1
    families = sorted(grouped["accelerator_family"].unique())
    y = grouped["accelerator_family"].map({f: i for i, f in enumerate(families)})
    height = max(2.6, 1.2 + 0.32 * len(families))
    fig, ax = new_axes((FIGSIZE[0], height))
    colours = [cluster_colour(c) for c in grouped["cluster"]]
    sc = ax.scatter(
        grouped["accelerators"],
        y,
        s=30 + 45 * (grouped["systems"] - 1),
        c=colours,
        alpha=0.85,
        edgecolors="white",
        linewidths=0.6,
    )
    sc.set_gid("points-grouped")
    set_markers(sc, [cluster_marker(c) for c in grouped["cluster"]])
    ax.set_yticks(range(len(families)), families)
    ax.set_ylim(-0.7, len(families) - 0.3)
    log_x(ax)
    ax.set_title(title(result, "systems by accelerator type and count"))
    cluster_legend(ax, grouped["cluster"], size=30)
    for n in sorted({1, int(grouped["systems"].max())}):
        ax.scatter([], [], c="#999999", s=30 + 45 * (n - 1), label=f"{n} system{'s' * (n > 1)}")
    legend_outside(ax)
    ax.grid(axis="x", alpha=0.25)
    # margins in inches (tick labels and the axis label need ~0.6 in whatever the height)
    fig.subplots_adjust(left=0.25, right=0.78, bottom=0.62 / height, top=1 - 0.42 / height)
    room_for_ticks(fig, ax)  # a family's name longer than the left margin holds
    tips = [
        f"{r.accelerator_family}, {counted(r.accelerators, 'accelerator')}: "
        f"{counted(r.systems, 'system')}{f' in cluster {r.cluster}' if apart else ''}: {r.names}"
        for r, apart in zip(grouped.itertuples(index=False), split, strict=True)
    ]
    return Chart(fig, {"points-grouped": tips})


@styled
def normalized_efficiency(
    result: WorkloadTable | WorkloadAnalysis, *, intervals: bool = False
) -> Chart:
    """The study's figure (b): E' against accelerator count, reference line at 1 and the
    equilibrium picks marked; with ``intervals``, 95% bootstrap bars instead of the picks
    (then the table alone is enough)."""
    table = result.table
    fig, ax = new_axes()
    styles = family_styles(table["accelerator_family"].unique())
    labels: dict[str, list[str]] = {}
    for i, (family, group) in enumerate(table.groupby("accelerator_family", sort=True)):
        colour = styles[family][0]
        if intervals:
            interval_bars(
                ax,
                group,
                "accelerators",
                "normalized_efficiency",
                low="normalized_efficiency_ci_low",
                high="normalized_efficiency_ci_high",
                fmt="none",
                ecolor=colour,
                elinewidth=0.9,
                capsize=2,
                alpha=0.8,
            )
        _family_points(ax, group, "normalized_efficiency", f"points-{i}", family, styles, labels)
    ax.axhline(1.0, **REFERENCE_LINE, label="E' = 1")
    marked = table[superlinear_codes(table) != ""]
    if len(marked):  # ringed: E' above 1 from comparing systems, not scaling (tooltip)
        ax.scatter(
            marked["accelerators"],
            marked["normalized_efficiency"],
            s=90,
            facecolors="none",
            edgecolors="#CC0000",
            linewidths=1.0,
            label="E' > 1: not scaling",
        )
    if not intervals and isinstance(result, WorkloadAnalysis):
        _mark_picks(
            ax,
            lead_equilibrium(result),
            lambda p: (p.accelerators, _plotted_e(table, p)),
            table,
        )
    log_x(ax)
    ax.set_ylabel("normalised efficiency E' = S / (N / N_ref)")
    # whom E' is against, as the speedup figure says it: a PNG alone names N_ref's system
    shown = "E' (95% bootstrap intervals)" if intervals else "E'"
    ax.set_title(title_against(result, shown, table))
    return _finish_titled(fig, ax, labels)


@styled
def speedup(result: WorkloadTable | WorkloadAnalysis) -> Chart:
    """Speedup against accelerators per family, with the ideal (linear) line ``S = N / N_ref``
    (:data:`~gpuscale.report.style.IDEAL_LINE`)."""
    table = result.table
    fig, ax = new_axes()
    styles = family_styles(table["accelerator_family"].unique())
    labels: dict[str, list[str]] = {}
    for i, (family, group) in enumerate(table.groupby("accelerator_family", sort=True)):
        _family_points(ax, group, "speedup", f"points-{i}", family, styles, labels)
    for ref_id, group in table.groupby("reference_system_id", sort=True):
        n_ref = float(group["reference_accelerators"].iloc[0])
        xs = np.array([n_ref, float(table["accelerators"].max())])
        ax.plot(
            xs,
            xs / n_ref,
            **IDEAL_LINE,
            label=IDEAL_LABEL if ref_id == table["reference_system_id"].iloc[0] else None,
        )
    log_log(ax, "speedup S = T_ref / T (log scale)")
    # whom S is against, as the E' figure says it: a PNG alone names N_ref's system
    ax.set_title(title_against(result, "speedup", table))
    return _finish_titled(fig, ax, labels)


def _finish_titled(fig: Figure, ax: Axes, labels: dict[str, list[str]]) -> Chart:
    """:func:`finish`, the axes lowered under a title of several lines
    (:func:`title_against`) so that its first line stays inside the figure."""
    chart = finish(fig, ax, labels)
    extra_lines = ax.get_title().count("\n")
    if extra_lines:
        fig.subplots_adjust(top=MARGINS["top"] - 0.07 * extra_lines)
    return chart


@styled
def time_vs_cost(result: WorkloadAnalysis) -> Chart:
    """Time to train against accelerator-hours, the Pareto front drawn and the
    equilibrium picks marked."""
    table = result.table
    fig, ax = new_axes()
    front = table[table["pareto"]].sort_values("accelerator_hours")
    ax.step(
        front["accelerator_hours"],
        front["time_to_train_min"],
        where="post",
        color="#555555",
        linewidth=0.9,
        label="Pareto front",
    )
    colours = [cluster_colour(c) for c in table["cluster"]]
    sc = ax.scatter(
        table["accelerator_hours"],
        table["time_to_train_min"],
        c=colours,
        s=24,
        edgecolors="white",
        linewidths=0.4,
        alpha=0.9,
    )
    sc.set_gid("points-all")
    set_markers(sc, [cluster_marker(c) for c in table["cluster"]])
    _mark_picks(
        ax,
        lead_equilibrium(result),
        lambda p: (accelerator_hours(p.accelerators, p.time_to_train_min), p.time_to_train_min),
    )
    cluster_legend(ax, table["cluster"])
    ax.set_xscale("log")
    ax.set_yscale("log")
    plain_log(ax.xaxis)
    plain_log(ax.yaxis)
    ax.set_xlabel("accelerator-hours N x T / 60 (log scale)")
    ax.set_ylabel("time to train, minutes (log scale)")
    ax.set_title(title(result, "time vs accelerator-hours"))
    return finish(fig, ax, {"points-all": point_labels(table)})


@styled
def overview(results: Sequence[WorkloadAnalysis]) -> Chart:
    """Small multiples: E' against accelerators for every workload, on shared axes."""
    n = len(results)
    cols = min(n, 2)
    rows = int(np.ceil(n / cols))
    width, height = max(3.4 * cols, 6.0), 2.5 * rows + 0.5  # the title needs 6 in
    fig = Figure(figsize=(width, height))
    axes = fig.subplots(rows, cols, sharex=True, sharey=True, squeeze=False)
    labels: dict[str, list[str]] = {}
    for k, (ax, result) in enumerate(zip(axes.flat, results, strict=False)):
        table = result.table
        colours = [cluster_colour(c) for c in table["cluster"]]
        sc = ax.scatter(
            table["accelerators"], table["normalized_efficiency"], c=colours, s=14, alpha=0.9
        )
        sc.set_gid(f"points-{k}")
        set_markers(sc, [cluster_marker(c) for c in table["cluster"]])
        labels[f"points-{k}"] = point_labels(table)
        ax.axhline(1.0, color="#555555", linewidth=0.8, linestyle="--")
        ax.set_xscale("log", base=2)
        ax.xaxis.set_major_locator(LogLocator(base=4, numticks=12))
        ax.xaxis.set_major_formatter(FuncFormatter(count_label))
        ax.xaxis.set_minor_locator(NullLocator())
        ax.set_yscale("log")
        ax.yaxis.set_major_locator(FixedLocator([0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 20, 50]))
        plain_log(ax.yaxis)
        ax.set_title(f"{display_name(result.workload)} ({result.round})")
        ax.grid(alpha=0.25)
    for ax in axes.flat[n:]:
        ax.set_visible(False)
    for col in range(cols):  # the lowest drawn panel of each column carries the x axis
        lowest = axes[max(r for r in range(rows) if r * cols + col < n), col]
        lowest.xaxis.set_tick_params(labelbottom=True)
        lowest.set_xlabel("accelerators (log scale)")
    for ax in axes[:, 0]:
        ax.set_ylabel("E' (log scale)")
    fig.suptitle("Normalised efficiency of every workload (colour and shape: the panel's cluster)")
    # no legend: clusters are numbered within each workload (the caption says so);
    # margins in inches: the suptitle and the panel titles never overlap
    fig.subplots_adjust(
        left=0.75 / width,
        right=0.97,
        bottom=0.55 / height,
        top=1 - 0.75 / height,
        hspace=0.45,
    )
    return Chart(fig, labels)


FIGURES = {
    "scaling": scaling,
    "systems": systems_by_accelerator,
    "efficiency": normalized_efficiency,
    "efficiency_ci": lambda r: normalized_efficiency(r, intervals=True),
    "speedup": speedup,
    "time_vs_cost": time_vs_cost,
    "decomposition": decomposition,
    "convergence": convergence,
}

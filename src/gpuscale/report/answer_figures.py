"""The figures that carry the report's answer, like with like: every system against the
smallest, slowest system of its own accelerator family (the study's rule within each
family), so E' measures scaling, never hardware generations.

* :func:`overview_like`: E' against accelerators of every workload (the first screen),
  the recommended count (``gpuscale.report.recommend``) ringed.
* :func:`scaling`: one workload in four panels: speedup with the ideal line, E' with the
  threshold, time against accelerator-hours (the Pareto front) and why E' falls
  (throughput efficiency x convergence factor).

Bars are the 95% bootstrap intervals of S and E' against each system's own family's
reference (``score_intervals.family_intervals``: ``analyze -r family``'s), the
reference's own runs and its choice resampled too, so that an E' near 1 is not read as
apart from the reference by the system's spread alone (v4.1 BERT's 16 x H100: E'
0.738-0.848, where its own time interval with the reference held exact gives 0.755-0.840).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.ticker import FixedLocator

from gpuscale.analysis.analyze import WorkloadAnalysis, WorkloadTable
from gpuscale.analysis.crossing import scaling_family
from gpuscale.analysis.equilibrium import pareto_mask
from gpuscale.analysis.metrics import within_own_family
from gpuscale.quantities import filled
from gpuscale.report.figures_common import point_labels
from gpuscale.report.recommend import Recommendation, clean_frontier, family_systems, recommend
from gpuscale.report.style import (
    IDEAL_LABEL,
    IDEAL_LINE,
    OKABE_ITO,
    REFERENCE_LINE,
    Chart,
    family_styles,
    log_x,
    plain_log,
    set_markers,
    styled,
)
from gpuscale.tables import display_name
from gpuscale.tables.analysis import CI_COLUMNS, FAMILY_CI_COLUMNS, SYSTEM_COLUMNS

# not clipped: a ring at a panel's largest count can reach past the axes' edge
RING = {"s": 170, "facecolors": "none", "edgecolors": "#000000", "linewidths": 1.3}
RING |= {"zorder": 6, "clip_on": False}


# What the like-with-like figures read (every other column is left out: each family's
# frame is copied; the study reference's ``superlinear`` reasons do not apply here).
COLUMNS = [*SYSTEM_COLUMNS, *CI_COLUMNS[:2], *FAMILY_CI_COLUMNS, "outlier"]


def per_family(table: pd.DataFrame) -> pd.DataFrame:
    """The systems with S, E and E' each against its own family's reference (the study's
    rule within the family), by family."""
    return pd.concat(
        [
            within_own_family(group)
            for _, group in table[COLUMNS].groupby("accelerator_family", sort=True)
        ],
        ignore_index=True,
    )


def _points(
    ax: Axes,
    like: pd.DataFrame,
    column: str,
    styles: dict[str, tuple[str, str]],
    gid: str,
    labels: dict[str, list[str]],
) -> None:
    """The systems (``column``, ``speedup`` or ``normalized_efficiency``, against
    accelerators) in their family's colour and marker, their 95% bars against their
    family's reference (``family_<column>_ci_low`` to ``_high``; none at the reference
    itself, 1 to 1), tooltips: one collection each (a scatter per family drew slower)."""
    x = like["accelerators"].to_numpy(float)
    y = like[column].to_numpy(float)
    low = like[f"family_{column}_ci_low"].to_numpy(float)
    high = like[f"family_{column}_ci_high"].to_numpy(float)
    colours = [styles[f][0] for f in like["accelerator_family"]]
    known = np.isfinite(low) & np.isfinite(high)
    ax.vlines(x[known], low[known], high[known], colors=np.array(colours)[known], lw=0.8, alpha=0.7)
    points = ax.scatter(x, y, c=colours, s=18, edgecolors="white", linewidths=0.3, zorder=4)
    set_markers(points, [styles[f][1] for f in like["accelerator_family"]])
    points.set_gid(gid)
    labels[gid] = point_labels(like)


def _recommended_last(like: pd.DataFrame, family: str) -> pd.DataFrame:
    """``like`` with the recommended family's systems last (stable within each part): one
    collection draws its points in order, so at a shared point (E' = 1 at each family's
    reference) the family the answer reads is drawn on top, not hidden by the others."""
    order = np.argsort((like["accelerator_family"] == family).to_numpy(), kind="stable")
    return like.iloc[order].reset_index(drop=True)


def _cross_outliers(ax: Axes, like: pd.DataFrame, column: str) -> None:
    """A cross over each outlier (``gpuscale.analysis.outliers``): drawn, setting nothing."""
    off = like[like["outlier"].fillna("").astype(str) != ""]
    if len(off):
        x, y = off["accelerators"].to_numpy(float), off[column].to_numpy(float)
        ax.scatter(x, y, marker="x", c="#000000", s=22, linewidths=0.9, zorder=5)


def _legend_handles(styles: dict[str, tuple[str, str]]) -> list[Line2D]:
    """A legend entry per family (never drawn in an axes)."""
    return [
        Line2D([], [], color=c, marker=m, linestyle="", markersize=4, label=f)
        for f, (c, m) in styles.items()
    ]


def _ring(ax: Axes, rec: Recommendation, like: pd.DataFrame, column: str) -> None:
    """The recommended system ringed, its count written beside it."""
    if rec.accelerators is None:
        return
    row = like[
        (like["accelerator_family"] == rec.family)
        & (like["accelerators"] == rec.accelerators)
        & (like["system_name"] == rec.system_name)
        & (like["submitter"] == rec.submitter)
    ]
    if row.empty:
        return
    x, y = float(row["accelerators"].iloc[0]), float(row[column].iloc[0])
    ax.scatter([x], [y], **RING)
    rightmost = x >= like["accelerators"].max()  # at the axes' right edge: written to the left
    ax.annotate(
        f"{rec.accelerators:,}",
        (x, y),
        xytext=(-6 if rightmost else 6, 6),
        textcoords="offset points",
        ha="right" if rightmost else "left",
        fontweight="bold",
        zorder=7,  # over the points: a marker at the next count would hide it
    )


def _floor(ax: Axes, rec: Recommendation, like: pd.DataFrame, colour: str) -> None:
    """The threshold line: ``threshold x`` the recommended family's best E'."""
    own = like.loc[like["accelerator_family"] == rec.family, "normalized_efficiency"]
    if len(own):
        ax.axhline(rec.threshold * float(own.max()), color=colour, lw=0.8, linestyle=":")


def _floor_colour(styles: dict[str, tuple[str, str]], rec: Recommendation) -> str:
    """The threshold line's colour: the recommended family's (grey where it has none)."""
    return styles.get(rec.family, ("#555555", ""))[0]


NICE = np.array([0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 20, 50, 100, 200, 500, 1000])


def _log_axes(ax: Axes, x_label: str = "accelerators (log scale)") -> None:
    """Log axes with few fixed ticks (counts: powers of 4, else of 2; y: 1-2-5 steps, at
    most 5), at least two on each: a tick's artists are most of a figure's drawing time,
    and one tick alone gives no scale to read a point by."""
    log_x(ax, x_label)
    ax.set_yscale("log")
    plain_log(ax.yaxis)
    xs, view = _two_or_more(ax.get_xlim(), 4.0 ** np.arange(0, 9), 2.0 ** np.arange(0, 17))
    ax.set_xlim(*view)
    ax.xaxis.set_major_locator(FixedLocator(xs))
    ys, view = _two_or_more(ax.get_ylim(), NICE)
    ax.set_ylim(*view)
    ax.yaxis.set_major_locator(FixedLocator(ys[:: int(np.ceil(len(ys) / 5)) or 1]))
    ax.grid(alpha=0.25, axis="y")


def _two_or_more(
    view: tuple[float, float], *candidates: np.ndarray
) -> tuple[np.ndarray, tuple[float, float]]:
    """The ticks of the first of ``candidates`` (ascending values) with two or more in
    ``view``, and the view; where none has, the last's from the one at or below the view
    to the one at or above it, and the view widened to them."""
    low, high = view
    for ticks in candidates:
        inside = ticks[(ticks >= low) & (ticks <= high)]
        if len(inside) >= 2:
            return inside, view
    ticks = candidates[-1]
    low = float(ticks[ticks <= low].max(initial=ticks[0]))
    high = float(ticks[ticks >= high].min(initial=ticks[-1]))
    return ticks[(ticks >= low) & (ticks <= high)], (low, high)


LEGEND_COLUMNS = 4  # the first screen's legend, under its panels
LEGEND_ROW_IN = 0.16  # a row of it: 7.5 pt and matplotlib's half-line spacing, in inches


def _overview_handles(
    styles: dict[str, tuple[str, str]],
    tables: Sequence[pd.DataFrame],
    floors: dict[tuple[str, float], list[str]],
) -> list[Line2D]:
    """The first screen's legend: each family, E' = 1, the threshold lines as drawn
    (``floors``: each line's colour and threshold, the families it is drawn for; one key
    each, the family named where the panels draw more than one), the ring and, where a panel
    crosses one, the outlier."""
    handles = _legend_handles(styles)
    handles.append(Line2D([], [], **REFERENCE_LINE, label="E' = 1"))
    for (colour, threshold), families in floors.items():
        whose = "" if len(floors) == 1 else f"{'/'.join(families)}'s "
        label = f"{threshold:g} x {whose}best"
        handles.append(Line2D([], [], linestyle=":", lw=0.8, color=colour, label=label))
    handles.append(
        Line2D([], [], marker="o", mfc="none", mec="#000000", ls="", ms=7, label="recommended")
    )
    if any((t["outlier"] != "").any() for t in tables):
        handles.append(Line2D([], [], marker="x", color="#000000", ls="", ms=5, label="outlier"))
    return handles


@styled
def overview_like(
    results: Sequence[WorkloadAnalysis], recs: Sequence[Recommendation] | None = None
) -> Chart:
    """E' against accelerators for every workload, like with like, the recommended count
    ringed (``recs``: each result's :func:`recommend`, where already made); one legend of
    families under the panels."""
    n = len(results)
    cols = min(n, 2)
    rows = int(np.ceil(n / cols))
    tables = [per_family(r.table) for r in results]
    styles = family_styles({f for t in tables for f in t["accelerator_family"]})
    recs = list(recs) if recs is not None else [recommend(r) for r in results]
    floors: dict[tuple[str, float], list[str]] = {}  # the threshold lines drawn: their keys
    for like, rec in zip(tables, recs, strict=True):
        if (like["accelerator_family"] == rec.family).any():
            drawn = floors.setdefault((_floor_colour(styles, rec), rec.threshold), [])
            drawn.extend([] if rec.family in drawn else [rec.family])
    handles = _overview_handles(styles, tables, floors)
    # the legend's rows past the three the bottom margin holds: each adds its height there,
    # so a round of many families (v3.0's 11) does not write over the panels' x labels
    extra = LEGEND_ROW_IN * max(0, int(np.ceil(len(handles) / LEGEND_COLUMNS)) - 3)
    width, height = 7.6, 2.2 * rows + 1.2 + extra
    fig = Figure(figsize=(width, height))
    axes = fig.subplots(rows, cols, sharex=True, squeeze=False)
    labels: dict[str, list[str]] = {}
    # every panel's points before any panel's view is fixed (_log_axes): the panels share
    # x, and a view fixed on the first alone cut off the counts only later panels ran
    # (v4.1's Stable Diffusion at 4-32 beside GPT-3's 64-11,616)
    likes = [_recommended_last(like, rec.family) for like, rec in zip(tables, recs, strict=True)]
    for k, (ax, like) in enumerate(zip(axes.flat, likes, strict=False)):
        _points(ax, like, "normalized_efficiency", styles, f"points-{k}", labels)
    for k, (ax, result, like) in enumerate(zip(axes.flat, results, likes, strict=False)):
        rec = recs[k]
        _cross_outliers(ax, like, "normalized_efficiency")
        ax.axhline(1.0, **REFERENCE_LINE)
        _floor(ax, rec, like, _floor_colour(styles, rec))
        _ring(ax, rec, like, "normalized_efficiency")
        _log_axes(ax, "")
        said = filled(": {:,} recommended", rec.accelerators)
        ax.set_title(f"{display_name(result.workload)} ({result.round}){said}")
    for ax in axes.flat[n:]:
        ax.set_visible(False)
    for col in range(cols):  # the lowest drawn panel of each column carries the x axis
        lowest = axes[max(r for r in range(rows) if r * cols + col < n), col]
        lowest.xaxis.set_tick_params(labelbottom=True)
        lowest.set_xlabel("accelerators (log scale)")
    for ax in axes[:, 0]:
        ax.set_ylabel("E' (log scale)")
    # 7.5 pt: on a phone the figure keeps 34rem of width, its text ~7 px (report.css)
    fig.legend(
        handles=handles,
        loc="lower center",
        ncol=min(len(handles), LEGEND_COLUMNS),
        frameon=False,
        fontsize=7.5,
    )
    bottom = (1.05 + extra) / height
    fig.subplots_adjust(left=0.09, right=0.98, bottom=bottom, top=1 - 0.3 / height)
    fig.subplots_adjust(hspace=0.35, wspace=0.18)
    return Chart(fig, labels)


@styled
def scaling(result: WorkloadTable | WorkloadAnalysis, threshold: float | None = None) -> Chart:
    """One workload like with like: speedup (ideal line), E' (threshold), time against
    accelerator-hours (Pareto front) and why E' falls in the family that ran the most counts; from
    the first half of the analysis too (``threshold``: the E' threshold's, as
    :func:`recommend` takes it)."""
    systems = family_systems(result.table, scaling_family(result.table))
    rec = recommend(result, own=systems, threshold=threshold)
    own = clean_frontier(systems)
    like = per_family(result.table)
    styles = family_styles(like["accelerator_family"])
    fig = Figure(figsize=(9.0, 6.2))
    (a, b), (c, d) = fig.subplots(2, 2)
    labels: dict[str, list[str]] = {}
    _points(a, like, "speedup", styles, "speedup", labels)
    span = like.groupby("accelerator_family")["accelerators"].agg(["min", "max"])
    for n_ref, n_max in span.itertuples(index=False):
        xs = np.array([n_ref, n_max], float)
        a.plot(xs, xs / n_ref, **IDEAL_LINE, zorder=1)  # under the points and their bars
    _ring(a, rec, like, "speedup")
    _log_axes(a)
    a.set_ylabel("speedup S (log scale)")
    a.set_title("Speedup against the family's smallest system")
    ideal = Line2D([], [], **IDEAL_LINE, label=IDEAL_LABEL)
    a.legend(handles=[*_legend_handles(styles), ideal], loc="upper left", frameon=False)
    _points(b, like, "normalized_efficiency", styles, "efficiency", labels)
    _cross_outliers(b, like, "normalized_efficiency")
    b.axhline(1.0, **REFERENCE_LINE)
    _floor(b, rec, like, _floor_colour(styles, rec))
    _ring(b, rec, like, "normalized_efficiency")
    _log_axes(b)
    b.set_ylabel("E' (log scale)")
    b.set_title(f"E' (dotted: {rec.threshold:g} x {rec.family}'s best)")
    _frontier(c, result.table, styles, labels)
    _ring_hours(c, rec)
    _why(d, own, rec)
    fig.suptitle(f"{display_name(result.workload)} ({result.round}), like with like")
    fig.subplots_adjust(left=0.08, right=0.98, bottom=0.09, top=0.9, hspace=0.42, wspace=0.2)
    return Chart(fig, labels)


def _frontier(
    ax: Axes, table: pd.DataFrame, styles: dict[str, tuple[str, str]], labels: dict
) -> None:
    """Time to train against accelerator-hours, coloured by family, the Pareto front."""
    hours, minutes = table["accelerator_hours"].to_numpy(), table["time_to_train_min"].to_numpy()
    on_front = table["pareto"] if "pareto" in table else pareto_mask(minutes, hours)
    front = table[on_front].sort_values("accelerator_hours")
    ax.step(front["accelerator_hours"], front["time_to_train_min"], where="post", color="#555555")
    families = table["accelerator_family"]
    sc = ax.scatter(
        table["accelerator_hours"],
        table["time_to_train_min"],
        c=[styles[f][0] for f in families],
        s=16,
    )
    set_markers(sc, [styles[f][1] for f in families])
    sc.set_gid("hours")
    # each point's x, not E' (the panel compares systems across families, E' within one)
    labels["hours"] = point_labels(
        table[[*COLUMNS, "accelerator_hours"]], ("accelerator_hours", "{} accelerator-hours")
    )
    ax.set_xscale("log")
    ax.set_yscale("log")
    plain_log(ax.xaxis)
    plain_log(ax.yaxis)
    ax.grid(alpha=0.25, axis="y")
    ax.set_xlabel("accelerator-hours N x T / 60 (log scale)")
    ax.set_ylabel("time to train, minutes (log scale)")
    ax.set_title("Time against cost (grey: Pareto front)")


def _ring_hours(ax: Axes, rec: Recommendation) -> None:
    if rec.accelerators is None:
        return
    ax.scatter([rec.accelerators * rec.time_min / 60.0], [rec.time_min], **RING)


def _why(ax: Axes, own: pd.DataFrame, rec: Recommendation) -> None:
    """E' = throughput efficiency x convergence factor, the family of the most counts'
    fastest system per count against the family's own reference (``own``)."""
    frontier = own
    series = (
        ("throughput_efficiency", "throughput efficiency", "o"),
        ("convergence_factor", "convergence factor", "s"),
        ("normalized_efficiency", "E' (their product)", "D"),
    )
    for k, (column, name, marker) in enumerate(series):
        # E' hollow and larger, as the decomposition figure draws it: where the convergence
        # factor is 1 it equals the throughput efficiency, whose point it would hide
        product = column == "normalized_efficiency"
        ax.plot(
            frontier["accelerators"],
            frontier[column],
            marker=marker,
            color=OKABE_ITO[k],
            markersize=5.5 if product else 3.5,
            markerfacecolor="none" if product else OKABE_ITO[k],
            markeredgewidth=1.0 if product else 0.5,
            linewidth=1.0,
            label=name,
        )
    ax.axhline(1.0, **REFERENCE_LINE)
    if rec.accelerators is not None:  # named in the legend: no ring marks it here
        ax.axvline(
            rec.accelerators,
            color="#000000",
            linewidth=0.7,
            linestyle=":",
            label=f"recommended: {rec.accelerators:,}",
        )
    _log_axes(ax)
    ax.set_ylabel("factor of E' (log scale)")
    ax.set_title(f"Why E' falls ({rec.family}, fastest per count)")
    ax.legend(loc="lower left", frameon=False)

"""The figures that carry the report's answer, like with like: every system against the
smallest, slowest system of its own accelerator family (the study's rule within each
family), so E' measures scaling, never hardware generations.

* :func:`overview_like`: E' against accelerators of every workload (the first screen),
  the recommended count (``gpuscale.report.recommend``) ringed.
* :func:`scaling`: one workload in four panels: speedup with the ideal line, E' with the
  threshold, time against accelerator-hours (the Pareto front) and why E' falls
  (throughput efficiency x convergence factor).

Bars are the 95% interval of each result's time to train carried to S and E' (the
reference at its point): ``S_low = T_ref / T_high``, ``E'_low = E' T / T_high``.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.ticker import FixedLocator

from gpuscale.analysis.analyze import WorkloadAnalysis
from gpuscale.analysis.decompose import table_basis, within_family
from gpuscale.analysis.frontier import fastest_per_count
from gpuscale.analysis.metrics import study_reference, with_reference
from gpuscale.report.bands import error_bars
from gpuscale.report.figures_common import point_labels
from gpuscale.report.recommend import Recommendation, recommend
from gpuscale.report.style import (
    OKABE_ITO,
    REFERENCE_LINE,
    Chart,
    family_styles,
    log_x,
    plain_log,
    styled,
)
from gpuscale.tables import display_name

RING = {"s": 170, "facecolors": "none", "edgecolors": "#000000", "linewidths": 1.3, "zorder": 6}


def per_family(table: pd.DataFrame) -> dict[str, pd.DataFrame]:
    """Each family's systems with S, E and E' against the family's own reference."""
    return {
        family: with_reference(group, study_reference(group))
        for family, group in table.groupby("accelerator_family", sort=True)
    }


def _bars(group: pd.DataFrame, column: str) -> np.ndarray:
    """95% bars of ``column`` (S or E', proportional to 1 / T) from the time's interval."""
    value = group[column].to_numpy(float)
    t = group["time_to_train_min"].to_numpy(float)
    low = value * t / group["time_to_train_min_ci_high"].to_numpy(float)
    high = value * t / group["time_to_train_min_ci_low"].to_numpy(float)
    return error_bars(pd.Series(value), pd.Series(low), pd.Series(high))


def _points(
    ax: Axes,
    families: dict[str, pd.DataFrame],
    column: str,
    styles: dict[str, tuple[str, str]],
    gid: str,
    labels: dict[str, list[str]],
) -> None:
    """Each family's systems (``column`` against accelerators) with 95% bars, tooltips."""
    for i, (family, group) in enumerate(families.items()):
        colour, marker = styles[family]
        ax.errorbar(
            group["accelerators"],
            group[column],
            yerr=_bars(group, column),
            fmt="none",
            ecolor=colour,
            elinewidth=0.8,
            alpha=0.7,
        )
        points = ax.scatter(
            group["accelerators"],
            group[column],
            c=colour,
            marker=marker,
            s=18,
            edgecolors="white",
            linewidths=0.3,
            label=family,
            zorder=4,
        )
        points.set_gid(f"{gid}-{i}")
        labels[f"{gid}-{i}"] = point_labels(group)


def _ring(ax: Axes, rec: Recommendation, families: dict[str, pd.DataFrame], column: str) -> None:
    """The recommended system ringed, its count written beside it."""
    if rec.accelerators is None or rec.family not in families:
        return
    group = families[rec.family]
    row = group[
        (group["accelerators"] == rec.accelerators)
        & (group["system_name"] == rec.system_name)
        & (group["submitter"] == rec.submitter)
    ]
    if row.empty:
        return
    x, y = float(row["accelerators"].iloc[0]), float(row[column].iloc[0])
    ax.scatter([x], [y], **RING)
    ax.annotate(
        f"{rec.accelerators:,}",
        (x, y),
        xytext=(6, 6),
        textcoords="offset points",
        fontweight="bold",
    )


def _log_axes(ax: Axes, x_label: str = "accelerators") -> None:
    log_x(ax, x_label)
    ax.set_yscale("log")
    plain_log(ax.yaxis)
    ax.grid(alpha=0.25)


@styled
def overview_like(results: Sequence[WorkloadAnalysis]) -> Chart:
    """E' against accelerators for every workload, like with like, the recommended count
    ringed; one legend of families under the panels."""
    n = len(results)
    cols = min(n, 2)
    rows = int(np.ceil(n / cols))
    width, height = 7.6, 2.2 * rows + 1.2
    fig = Figure(figsize=(width, height))
    axes = fig.subplots(rows, cols, sharex=True, squeeze=False)
    labels: dict[str, list[str]] = {}
    tables = [per_family(r.table) for r in results]
    styles = family_styles({f for t in tables for f in t})
    for k, (ax, result, families) in enumerate(zip(axes.flat, results, tables, strict=False)):
        rec = recommend(result)
        _points(ax, families, "normalized_efficiency", styles, f"points-{k}", labels)
        ax.axhline(1.0, **REFERENCE_LINE)
        if rec.family in families:
            floor = rec.threshold * families[rec.family]["normalized_efficiency"].max()
            ax.axhline(floor, color=styles[rec.family][0], linewidth=0.8, linestyle=":")
        _ring(ax, rec, families, "normalized_efficiency")
        _log_axes(ax, "")
        ax.yaxis.set_major_locator(FixedLocator([0.1, 0.2, 0.5, 1, 2]))
        said = f": {rec.accelerators:,} recommended" if rec.accelerators else ""
        ax.set_title(f"{display_name(result.workload)} ({result.round}){said}")
    for ax in axes.flat[n:]:
        ax.set_visible(False)
    for ax in axes[-1, :]:
        ax.set_xlabel("accelerators (log scale)")
    for ax in axes[:, 0]:
        ax.set_ylabel("E' (log scale)")
    handles = [
        axes.flat[0].scatter([], [], c=c, marker=m, s=18, label=f) for f, (c, m) in styles.items()
    ]
    handles.append(axes.flat[0].plot([], [], ":", color="#555555", label="0.8 x best")[0])
    handles.append(axes.flat[0].scatter([], [], label="recommended", **{**RING, "s": 60}))
    fig.legend(handles=handles, loc="lower center", ncol=min(len(handles), 4), frameon=False)
    fig.subplots_adjust(left=0.09, right=0.98, bottom=1.05 / height, top=1 - 0.3 / height)
    fig.subplots_adjust(hspace=0.35, wspace=0.18)
    return Chart(fig, labels)


@styled
def scaling(result: WorkloadAnalysis) -> Chart:
    """One workload like with like: speedup (ideal line), E' (threshold), time against
    accelerator-hours (Pareto front) and why E' falls in the most submitted family."""
    rec = recommend(result)
    families = per_family(result.table)
    styles = family_styles(families)
    fig = Figure(figsize=(9.0, 6.2))
    (a, b), (c, d) = fig.subplots(2, 2)
    labels: dict[str, list[str]] = {}
    _points(a, families, "speedup", styles, "speedup", labels)
    for family, group in families.items():
        n_ref = float(group["reference_accelerators"].iloc[0])
        xs = np.array([n_ref, float(group["accelerators"].max())])
        a.plot(xs, xs / n_ref, color=styles[family][0], linewidth=0.8, linestyle="--")
    a.plot([], [], **REFERENCE_LINE, label="ideal S = N / N_ref")
    _ring(a, rec, families, "speedup")
    _log_axes(a)
    a.set_title("Speedup against the family's smallest system")
    a.legend(loc="upper left", frameon=False, fontsize=6.5)
    _points(b, families, "normalized_efficiency", styles, "efficiency", labels)
    b.axhline(1.0, **REFERENCE_LINE)
    if rec.family in families:
        floor = rec.threshold * families[rec.family]["normalized_efficiency"].max()
        b.axhline(floor, color=styles[rec.family][0], linewidth=0.8, linestyle=":")
    _ring(b, rec, families, "normalized_efficiency")
    _log_axes(b)
    b.set_title(f"E' (dotted: {rec.threshold:g} x {rec.family}'s best)")
    _frontier(c, result.table, styles, labels)
    _ring_hours(c, rec)
    _why(d, result, rec)
    fig.suptitle(f"{display_name(result.workload)} ({result.round}), like with like")
    fig.subplots_adjust(left=0.08, right=0.98, bottom=0.09, top=0.9, hspace=0.42, wspace=0.2)
    return Chart(fig, labels)


def _frontier(
    ax: Axes, table: pd.DataFrame, styles: dict[str, tuple[str, str]], labels: dict
) -> None:
    """Time to train against accelerator-hours, coloured by family, the Pareto front."""
    front = table[table["pareto"]].sort_values("gpu_hours")
    ax.step(front["gpu_hours"], front["time_to_train_min"], where="post", color="#555555")
    for i, (family, group) in enumerate(table.groupby("accelerator_family", sort=True)):
        colour, marker = styles[family]
        sc = ax.scatter(
            group["gpu_hours"], group["time_to_train_min"], c=colour, marker=marker, s=16
        )
        sc.set_gid(f"hours-{i}")
        labels[f"hours-{i}"] = point_labels(group)
    ax.set_xscale("log")
    ax.set_yscale("log")
    plain_log(ax.xaxis)
    plain_log(ax.yaxis)
    ax.grid(alpha=0.25)
    ax.set_xlabel("accelerator-hours N x T / 60 (log scale)")
    ax.set_ylabel("time to train, min")
    ax.set_title("Time against cost (grey: Pareto front)")


def _ring_hours(ax: Axes, rec: Recommendation) -> None:
    if rec.accelerators is None:
        return
    ax.scatter([rec.accelerators * rec.time_min / 60.0], [rec.time_min], **RING)


def _why(ax: Axes, result: WorkloadAnalysis, rec: Recommendation) -> None:
    """E' = throughput efficiency x convergence factor, the most submitted family's
    fastest system per count against the family's own reference."""
    own = within_family(result.table, rec.family, table_basis(result.table))
    frontier = fastest_per_count(own)
    series = (
        ("throughput_efficiency", "throughput efficiency", "o"),
        ("convergence_factor", "convergence factor", "s"),
        ("normalized_efficiency", "E' (their product)", "D"),
    )
    for k, (column, name, marker) in enumerate(series):
        ax.plot(
            frontier["accelerators"],
            frontier[column],
            marker=marker,
            color=OKABE_ITO[k],
            markersize=3.5,
            linewidth=1.0,
            label=name,
        )
    ax.axhline(1.0, **REFERENCE_LINE)
    if rec.accelerators is not None:
        ax.axvline(rec.accelerators, color="#000000", linewidth=0.7, linestyle=":")
    _log_axes(ax)
    ax.set_title(f"Why E' falls ({rec.family}, fastest per count)")
    ax.legend(loc="lower left", frameon=False, fontsize=6.5)

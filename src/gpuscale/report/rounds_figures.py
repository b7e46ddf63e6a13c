"""Report figures for energy to train and for trends across rounds."""

from __future__ import annotations

import pandas as pd
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from gpuscale.analysis.equilibrium import pareto_mask
from gpuscale.quantities import format_minutes
from gpuscale.report.figures import point_labels
from gpuscale.report.style import (
    MARKERS,
    OKABE_ITO,
    Chart,
    family_styles,
    finish,
    log_log,
    log_y,
    new_axes,
    plain_log,
    styled,
)
from gpuscale.tables import display_name


@styled
def energy_chart(energy: pd.DataFrame) -> Chart:
    """Left: energy to train against accelerators, per benchmark. Right: time against
    energy with each benchmark's Pareto front (the energy-aware equilibrium)."""
    fig = Figure(figsize=(9.0, 3.6))
    left, right = fig.subplots(1, 2)
    labels: dict[str, list[str]] = {}
    for k, (_key, group) in enumerate(energy.groupby(["round", "benchmark"], sort=True)):
        colour, marker = OKABE_ITO[k % len(OKABE_ITO)], MARKERS[k % len(MARKERS)]
        name = display_name(group["workload"].iloc[0])
        for ax, x, y, gid in (
            (left, "accelerators", "energy_kj", f"energy-{k}"),
            (right, "energy_kj", "time_to_train_min", f"pareto-{k}"),
        ):
            sc = ax.scatter(
                group[x],
                group[y],
                color=colour,
                marker=marker,
                s=26,
                label=f"{name} ({group['round'].iloc[0]})",
                alpha=0.9,
            )
            sc.set_gid(gid)
            labels[gid] = point_labels(group, ("energy_kj", "{:,.0f} kJ"))
        front = group[
            pareto_mask(group["time_to_train_min"].to_numpy(), group["energy_kj"].to_numpy())
        ].sort_values("energy_kj")
        right.step(
            front["energy_kj"],
            front["time_to_train_min"],
            where="post",
            color=colour,
            linewidth=0.8,
        )
    log_log(left, "energy to train, kJ (log scale)")
    left.set_title("Energy to train against accelerators")
    right.set_xscale("log")
    right.set_yscale("log")
    for axis in (right.xaxis, right.yaxis):
        plain_log(axis)
    right.set_xlabel("energy to train, kJ (log scale)")
    right.set_ylabel("time to train, min (log scale)")
    right.set_title("Time against energy, Pareto front per benchmark")
    right.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)
    fig.subplots_adjust(left=0.08, right=0.78, bottom=0.15, top=0.9, wspace=0.35)
    return Chart(fig, labels)


@styled
def trend_chart(rows: pd.DataFrame, workload: str) -> Chart:
    """Best time to train at each family's most common accelerator count (circles, the
    count written beside) and at its largest (triangles), by round. A line joins two
    rounds only where the common count is the same: 8 GPUs in one round and 64 in the
    next are not a trend."""
    fig, ax = new_axes()
    labels: dict[str, list[str]] = {}
    counts: list[tuple[float, float, str, str]] = []  # (x, y, count written, colour)
    rounds = sorted(rows["round"].unique(), key=lambda r: tuple(int(x) for x in r[1:].split(".")))
    styles = family_styles(rows["accelerator_family"].astype(str))
    for k, (family, group) in enumerate(rows.groupby("accelerator_family", sort=True)):
        group = group.assign(x=[rounds.index(r) for r in group["round"]]).sort_values("x")
        colour, marker = styles[str(family)]
        ax.scatter(
            group["x"],
            group["best_time_at_common_min"],
            color=colour,
            marker=marker,
            s=22,
            label=family,
        )
        for (_, a), (_, b) in zip(group.iterrows(), group.iloc[1:].iterrows(), strict=False):
            if a["common_accelerators"] == b["common_accelerators"] and b["x"] == a["x"] + 1:
                ax.plot(
                    [a["x"], b["x"]],
                    [a["best_time_at_common_min"], b["best_time_at_common_min"]],
                    color=colour,
                    linewidth=1.1,
                )
        counts += [
            (r.x, r.best_time_at_common_min, f"{int(r.common_accelerators):,}", colour)
            for r in group.itertuples(index=False)
        ]
        sc = ax.scatter(
            group["x"],
            group["best_time_at_largest_min"],
            color=colour,
            marker="^",
            s=30,
            facecolors="none",
        )
        sc.set_gid(f"largest-{k}")
        labels[f"largest-{k}"] = [
            f"{family} {r.round}: {r.largest_accelerators:,} accelerators, "
            f"{format_minutes(r.best_time_at_largest_min)}, "
            + (
                f"E' {r.normalized_efficiency_at_largest:.2f}"
                if r.normalized_efficiency_at_largest == r.normalized_efficiency_at_largest
                else "one accelerator count: no E'"
            )
            for r in group.itertuples(index=False)
        ]
    ax.set_xticks(range(len(rounds)), rounds)
    ax.set_xlim(-0.4, len(rounds) - 0.4)
    log_y(ax, "best time to train, min (log scale)")
    ax.set_xlabel("round (filled: most common N, written, grey if shared; open: largest)")
    ax.set_title(f"{display_name(workload)} across rounds")
    chart = finish(fig, ax, labels)
    write_counts(ax, counts)
    return chart


COUNT_FONT_PT = 6.0


def write_counts(ax: Axes, marks: list[tuple[float, float, str, str]]) -> None:
    """Write each mark's count beside its point (``(x, y, text, colour)``), never over
    another: in one x column, a label less than a line of text above the one below says
    nothing new where it is the same count (that label turns grey: several families
    share it) and is moved up a line where it is another. Call once the axes' scales,
    limits and margins are final (positions are laid out in display units)."""
    line = COUNT_FONT_PT * 1.25 * ax.figure.dpi / 72  # one line of text, in pixels
    ax.get_ylim()  # settles the autoscaled limits before positions are read
    for x in sorted({m[0] for m in marks}):
        column = sorted(
            (
                (ax.transData.transform((x, y))[1], y, text, colour)
                for mx, y, text, colour in marks
                if mx == x
            ),
            key=lambda m: m[0],
        )
        placed: list[list] = []  # [label's y in pixels, point's y, text, colour]
        for pixel, y, text, colour in column:
            if placed and pixel - placed[-1][0] < line:
                if text == placed[-1][2]:
                    placed[-1][3] = SHARED_COUNT
                    continue
                pixel = placed[-1][0] + line
            placed.append([pixel, y, text, colour])
        for pixel, y, text, colour in placed:
            lift = (pixel - ax.transData.transform((x, y))[1]) * 72 / ax.figure.dpi
            ax.annotate(
                text,
                (x, y),
                xytext=(4, 2 + lift),
                textcoords="offset points",
                fontsize=COUNT_FONT_PT,
                color=colour,
            )


SHARED_COUNT = "#444444"  # a count written once for several families' points

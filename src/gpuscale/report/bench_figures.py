"""Figures of the user's own bench runs: where step time goes, and speedup by model size."""

from __future__ import annotations

import re
import textwrap
from collections.abc import Hashable

import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.ticker import FixedLocator, FuncFormatter, NullLocator

from gpuscale.quantities import joined, noun_for, number
from gpuscale.report.bands import interval_band
from gpuscale.report.bench_answer import answering
from gpuscale.report.figures_common import NothingToDraw
from gpuscale.report.style import (
    IDEAL_LABEL,
    IDEAL_LINE,
    MARGINS,
    OKABE_ITO,
    REFERENCE_LINE,
    Chart,
    count_label,
    legend_outside,
    new_axes,
    plain_log,
    room_for_ticks,
    styled,
)

# The phases one strategy has and the other has not (NaN on the other's rows).
_STRATEGY_OWN = ("ddp_overhead_ms", "fsdp_overhead_ms")
PHASES = (
    ("forward_ms", "forward"),
    ("backward_ms", "backward"),
    ("ddp_overhead_ms", "DDP's own overhead"),  # each strategy's own, drawn where one ran
    ("fsdp_overhead_ms", "FSDP's own overhead"),
    ("exposed_comm_ms", "exposed communication"),
    ("sync_wait_ms", "waiting for the slowest rank"),  # beyond the communication timed
    ("optimizer_ms", "optimizer"),
)


def _bar_labels(frame: pd.DataFrame) -> list[str]:
    return [
        f"{r.configuration} ({number(r.params / 1e6, 2)}M params) on {r.accelerators}: "
        f"{number(r.step_ms_mean)} ms/step, communication {100 * r.comm_fraction:.0f}%"
        for r in frame.itertuples(index=False)
    ]


@styled
def step_breakdown(scaling: pd.DataFrame) -> Chart:
    """Stacked bars: the share of the step spent in forward, backward, DDP's (or FSDP's)
    own overhead, exposed communication, waiting beyond it (``sync_wait_ms``) and optimizer,
    per configuration (in ``bench_scaling``'s order: by size, numbers in the labels read as
    numbers), on the fewest devices measured (solid) and on the most (hatched)."""
    smallest = int(scaling["accelerators"].min())
    largest = int(scaling["accelerators"].max())
    # One bar pair per configuration (``bench_scaling``'s label: a model's precisions,
    # batches and runs apart, one row each at every device count).
    frame = scaling[scaling["accelerators"].isin({smallest, largest})].sort_values(
        ["params", "accelerators"], kind="stable"
    )
    models = list(dict.fromkeys(frame["configuration"]))  # a model's configurations apart
    width = 0.38
    ticks = [_folded(t) for t in _ticks(frame, models)]
    fig, ax = new_axes((max(5.6, 0.75 * len(models) + 2.5), 3.2))
    labels: dict[str, list[str]] = {}
    # a strategy's own overhead where a row ran it (an FSDP run's is no DDP overhead)
    drawn = [c in frame and frame[c].notna().any() for c, _ in PHASES]
    for k, world in enumerate(sorted(frame["accelerators"].unique())):
        part = (
            frame[frame["accelerators"] == world]
            .set_index("configuration")
            .reindex(models)
            .dropna(subset=["step_ms_mean"])
        )
        x = np.array([models.index(m) for m in part.index]) + (k - 0.5) * width
        phases = np.nan_to_num(np.column_stack([part[c].to_numpy(float) for c, _ in PHASES]))
        shares = phases / phases.sum(axis=1, keepdims=True)
        bottom = np.zeros(len(part))
        for j, (column, name) in enumerate(PHASES):
            if not drawn[j]:  # no row of this strategy: no empty segment, no legend entry
                continue
            bars = ax.bar(
                x,
                shares[:, j],
                width,
                bottom=bottom,
                color=OKABE_ITO[j],
                edgecolor="white",
                linewidth=0.5,
                hatch="//" if world > smallest else None,
                label=(name if k == 0 else None),
            )
            for i, (patch, text) in enumerate(
                zip(bars.patches, _bar_labels(part.reset_index()), strict=True)
            ):
                patch.set_gid(f"bar-{world}-{j}-{i}")  # one tooltip per bar segment
                if column in _STRATEGY_OWN and pd.isna(part[column].iloc[i]):
                    continue  # the other strategy's overhead: not this run's, nothing to say
                labels[f"bar-{world}-{j}-{i}"] = [f"{name} {100 * shares[i, j]:.0f}%: {text}"]
            bottom += shares[:, j]
    ax.set_xticks(range(len(models)), ticks, rotation=30, ha="right")
    ax.set_ylabel("share of the step time")
    ax.set_ylim(0, 1)
    ax.set_title(f"{breakdown_title(scaling)}{_counts_compared(smallest, largest)}")
    legend_outside(ax)
    fig.subplots_adjust(**MARGINS)
    room_for_ticks(fig, ax)
    return Chart(fig, labels)


def _folded(label: str, most: int = 24) -> str:
    """A tick label on lines of at most ``most`` characters, broken after a ``/``, ``_``,
    ``:``, ``-`` or space (a model's path and factory), every character kept."""
    lines = [""]
    for piece in re.findall(r"[^/_:\s-]*[/_:\s-]?", label):
        if lines[-1] and len(lines[-1]) + len(piece) > most:
            lines.append("")
        lines[-1] += piece
    return "\n".join(line for line in lines if line)


def _ticks(frame: pd.DataFrame, configurations: list[str]) -> list[str]:
    """Each bar's label: its configuration, and what it ran on (``CPU, gloo``, ``GPU,
    nccl``) where the bars ran on several devices or backends."""
    if frame["platform"].nunique() <= 1:
        return configurations
    on = frame.drop_duplicates("configuration").set_index("configuration")
    return [f"{c} ({_short_platform(on.loc[c])})" for c in configurations]


def _short_platform(row: pd.Series) -> str:
    """``CPU, gloo``, ``GPU, nccl``: a bar's device kind (any device but the CPU is a GPU)."""
    return f"{_DEVICE_KINDS.get(str(row['device']).lower(), 'GPU')}, {row['backend']}"


_DEVICE_KINDS = {"cpu": "CPU"}


def _counts_compared(smallest: int, largest: int) -> str:
    """``: 1 device (solid) vs 8 (hatched)``, or `` on 1 device`` where one count was
    measured (never a count compared with itself)."""
    if smallest == largest:
        return f" on {smallest} {noun_for(smallest, 'device')}"
    unit = noun_for(smallest, "device")
    return f": {smallest} {unit} (solid) vs {largest} (hatched)"


FLAGGED_POINT: dict = {"facecolors": "none", "edgecolors": "#888888", "linewidths": 1.0}


def _flagged_points(
    ax: Axes, x: pd.Series, y: pd.Series, rows: pd.DataFrame, gid: str, label: str = ""
) -> dict:
    """Flagged runs as hollow grey points labelled so (``label``; by default left out of
    findings and advice: ``flagged (not used)``), never drawn like a measurement; their
    tooltips say why."""
    if rows.empty:
        return {}
    label = label or "flagged (not used)"
    points = ax.scatter(x, y, s=30, zorder=3, label=label, **FLAGGED_POINT)
    points.set_gid(gid)
    reasons = [f" [flagged: {why}]" for why in rows["flags"]]
    return {gid: [t + r for t, r in zip(_bar_labels(rows), reasons, strict=True)]}


def _flagged(scaling: pd.DataFrame) -> pd.Series:
    return scaling["flagged"].fillna(False).astype(bool)


def _not_answering(ax: Axes, multi: pd.DataFrame, answers: pd.Series, used: list) -> dict:
    """``multi``'s runs off the lines (``answers``: a mask of the runs that answer,
    ``bench_answer.answering``; ``used``: the flagged ones the advice reads) as hollow
    grey points: flagged and used, flagged and left out, outlasted by a run of more
    steps of their configuration and count (the advice reads that one)."""
    flagged = _flagged(multi)
    read = multi.index.isin(used)
    labels: dict[str, list[str]] = {}
    for rows, gid, label in (
        (multi[flagged & read], "points-flagged-used", "flagged (used by the advice)"),
        (multi[flagged & ~read], "points-flagged", ""),
    ):
        labels |= _flagged_points(ax, rows["params"], rows["speedup"], rows, gid, label)
    shorter = multi[~flagged & ~answers.loc[multi.index]]
    if len(shorter):
        points = ax.scatter(
            shorter["params"],
            shorter["speedup"],
            s=30,
            zorder=3,
            marker="s",
            label="outlasted (not read)",
            **FLAGGED_POINT,
        )
        points.set_gid("points-outlasted")
        labels["points-outlasted"] = [f"{t} [outlasted]" for t in _bar_labels(shorter)]
    return labels


@styled
def speedup_by_size(scaling: pd.DataFrame, used: tuple[Hashable, ...] = ()) -> Chart:
    """Speedup against model parameters (log x) per world size, the line at 1 marking
    break-even: below it, more devices train slower than one. The lines hold the runs
    that answer as the advice reads them (``bench_answer.answering``: unflagged and not
    outlasted by a run of more steps); the others are hollow grey points (see
    ``FLAGGED_POINT``), off the lines: flagged (``used``: the flagged runs the advice
    reads, labelled so), or outlasted (squares)."""
    multi = scaling[scaling["accelerators"] > 1]
    if not np.isfinite(multi["speedup"].to_numpy(float)).any():  # an empty log axis
        raise NothingToDraw(
            "no speedup measured: no run on one device of the same configuration "
            "(run `gpuscale bench` with --nproc 1 as well)"
        )
    fig, ax = new_axes()
    labels: dict[str, list[str]] = {}
    several = scaling["platform"].nunique() > 1  # then each line names its device, backend
    answers = answering(scaling)  # unflagged, not outlasted
    kept = multi[answers.loc[multi.index]]
    for k, ((world, _on), group) in enumerate(kept.groupby(["accelerators", "platform"])):
        group = group.sort_values("params")
        on, gid = "", f"points-{world}"
        if several:  # each line named by its device and backend, and its own tooltips
            on, gid = f" ({_short_platform(group.iloc[0])})", f"points-{world}-{k}"
        points = ax.scatter(
            group["params"],
            group["speedup"],
            color=OKABE_ITO[k % len(OKABE_ITO)],
            s=28,
            label=f"{world} devices{on}",
            zorder=3,
        )
        ax.plot(group["params"], group["speedup"], color=OKABE_ITO[k % len(OKABE_ITO)], lw=0.8)
        points.set_gid(gid)
        labels[gid] = _bar_labels(group)
    labels |= _not_answering(ax, multi, answers, list(used))
    ax.axhline(1.0, **REFERENCE_LINE, label="break-even (1 device)")
    ax.set_xscale("log")
    plain_log(ax.xaxis)
    ax.set_xlabel("model parameters (log scale)")
    ax.set_ylabel("speedup over 1 device (throughput)")
    ax.set_title("Your hardware: speedup by model size")
    legend_outside(ax)
    fig.subplots_adjust(**MARGINS)
    return Chart(fig, labels)


@styled
def predicted_scaling(
    predicted: pd.DataFrame,
    measured: pd.DataFrame | None,
    title: str,
    used: tuple[Hashable, ...] = (),
    series: str = "predicted speedup",
) -> Chart:
    """Predicted throughput speedup against devices (log x) with its 80% interval (a band;
    columns ``speedup``, ``speedup_low``, ``speedup_high``), the ideal line, and the
    measured runs at N > 1 over it: filled where trusted, hollow grey where flagged
    (labelled ``flagged (used by the advice)`` where their labels are in ``used``, the
    flagged runs the advice reads: ``bench_checks.ReadRun``). One
    y axis (efficiency = speedup / N is in the tooltips); no N = 1 point: it is 1 by
    definition (the bench's N = 1 rows have no speedup: their DDP-against-bare ratio is
    ``ddp_vs_bare``). ``series``: the predicted line's legend entry, which says the
    scaling it is (the figure may draw the weak-scaling alternative beside strong advice)."""
    fig, ax = new_axes()
    interval_band(ax, predicted, "accelerators", "speedup", alpha=0.18)
    ax.plot(
        predicted["accelerators"],
        predicted["speedup"],
        color=OKABE_ITO[0],
        marker="o",
        markersize=3,
        label=series,
    )
    ax.plot(predicted["accelerators"], predicted["accelerators"], **IDEAL_LINE, label=IDEAL_LABEL)
    labels: dict[str, list[str]] = {}
    if measured is not None and len(measured):
        multi = measured[measured["accelerators"] > 1]
        kept = multi[~_flagged(multi)]
        if len(kept):
            points = ax.scatter(
                kept["accelerators"],
                kept["speedup"],
                color=OKABE_ITO[3],
                marker="D",
                s=30,
                zorder=4,
                label="measured speedup",
            )
            points.set_gid("points-measured")
            labels["points-measured"] = _bar_labels(kept)
        flagged = multi[_flagged(multi)]
        read = flagged.index.isin(list(used))
        for rows, gid, label in (
            (flagged[read], "points-flagged-used", "flagged (used by the advice)"),
            (flagged[~read], "points-flagged", ""),
        ):
            labels |= _flagged_points(ax, rows["accelerators"], rows["speedup"], rows, gid, label)
    ax.set_xscale("log", base=2)
    ax.xaxis.set_major_locator(FixedLocator(sorted(predicted["accelerators"].unique())))
    ax.xaxis.set_major_formatter(FuncFormatter(count_label))
    ax.xaxis.set_minor_locator(NullLocator())
    ax.set_ylim(bottom=0)
    ax.set_xlabel("devices (log scale)")
    ax.set_ylabel("throughput speedup over 1 device")
    # the advice's title names the model, its size, strategy and platform: over the axes
    # (the legend outside) a line holds TITLE_CHARS, the rest goes on lines of its own
    lines = textwrap.wrap(title, TITLE_CHARS, break_on_hyphens=False) or [""]
    ax.set_title("\n".join(lines))
    legend_outside(ax)
    fig.subplots_adjust(**MARGINS)
    fig.subplots_adjust(top=MARGINS["top"] - TITLE_LINE * (len(lines) - 1))
    return Chart(fig, labels)


# A title line over the axes of ``new_axes()`` with the legend outside (9.5 pt), in
# characters, and the share of the figure's height each further line takes from the axes
TITLE_CHARS = 56
TITLE_LINE = 0.045


def breakdown_title(scaling: pd.DataFrame) -> str:
    """``Where DDP's step time goes`` where every run is DDP, else what the bars hold:
    ``Where each step's time goes (DDP and FSDP runs)``."""
    strategies = [str(s).upper() for s in dict.fromkeys(scaling["strategy"].dropna())]
    if strategies == ["DDP"] or not strategies:
        return "Where DDP's step time goes"
    return f"Where each step's time goes ({joined(strategies)} runs)"

"""The plan figure: predicted time to train against devices, its 80% band, and the
measured systems the model was fitted on."""

from __future__ import annotations

import pandas as pd

from gpuscale.quantities import counted, format_minutes, named
from gpuscale.report.bands import interval_band, interval_bars
from gpuscale.report.style import (
    OKABE_ITO,
    Chart,
    finish,
    log_log,
    new_axes,
    styled,
)
from gpuscale.tables import display_name
from gpuscale.tables.workloads import round_key

LINE_GID = "plan-line"  # the plan's line (a test reads its drawn values)


def line_label(curve: pd.DataFrame) -> str:
    """The legend's words for the plan's line, with the counts it gives no time (the line
    is joined over them)."""
    refused = int(curve["time_to_train_min"].isna().sum())
    return f"plan (joined over\n{counted(refused, 'count')} with no time)" if refused else "plan"


@styled
def plan_chart(
    curve: pd.DataFrame, asked: pd.DataFrame, systems: pd.DataFrame, workload: str, family: str
) -> Chart:
    """``curve``: the plan on a dense grid of counts (``time_to_train_min``, ``_low``,
    ``_high``); ``asked``: the plan table at the counts asked (drawn as points with error bars);
    ``systems``: the measured systems (one colour per round)."""
    fig, ax = new_axes()
    labels: dict[str, list[str]] = {}
    timed = curve[curve["time_to_train_min"].notna()]
    interval_band(ax, timed, "accelerators", "time_to_train_min", alpha=0.15)
    ax.plot(
        timed["accelerators"],
        timed["time_to_train_min"],
        color=OKABE_ITO[0],
        linewidth=1.2,
        label=line_label(curve),
        gid=LINE_GID,
    )
    rounds = sorted(systems["round"].astype(str).unique(), key=round_key)
    for k, round_name in enumerate(rounds):
        group = systems[systems["round"].astype(str) == round_name]
        sc = ax.scatter(
            group["accelerators"],
            group["time_to_train_min"],
            color=OKABE_ITO[(k + 1) % len(OKABE_ITO)],
            s=16,
            alpha=0.85,
            label=f"measured {round_name}",
        )
        sc.set_gid(f"plan-measured-{k}")
        labels[f"plan-measured-{k}"] = [
            f"{named(r.submitter, r.system_name)}: {int(r.accelerators):,} devices, "
            f"{format_minutes(r.time_to_train_min)} ({round_name})"
            for r in group.itertuples(index=False)
        ]
    # at a count the family ran the plan moves towards its results there and widens its
    # interval to hold them: shown at those counts, where the line alone shows a notch
    ran = timed[(timed["count_class"] == "i") & ~timed["accelerators"].isin(asked["accelerators"])]
    interval_bars(
        ax,
        ran,
        "accelerators",
        "time_to_train_min",
        low="time_to_train_min_low",
        high="time_to_train_min_high",
        fmt="o",
        color=OKABE_ITO[0],
        markerfacecolor="white",
        markersize=4,
        capsize=2,
        linewidth=0.8,
        label="plan at counts the family ran",
    )
    interval_bars(
        ax,
        asked,
        "accelerators",
        "time_to_train_min",
        low="time_to_train_min_low",
        high="time_to_train_min_high",
        fmt="D",
        color="#000000",
        markersize=4,
        capsize=3,
        linewidth=0.9,
        label="counts asked",
    )
    log_log(ax, "time to train, min (log scale)", "devices (log scale)")
    ax.set_title(f"{display_name(workload)} on {family}: plan")
    return finish(fig, ax, labels)

"""The plan figure: predicted time to train against devices, its 80% band, and the
measured systems the model was fitted on."""

from __future__ import annotations

import pandas as pd

from gpuscale.quantities import number
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


@styled
def plan_chart(
    curve: pd.DataFrame, asked: pd.DataFrame, systems: pd.DataFrame, workload: str, family: str
) -> Chart:
    """``curve``: the plan on a dense grid of counts (``time_to_train_min``, ``_low``,
    ``_high``); ``asked``: the plan table at the counts asked (drawn as points with error bars);
    ``systems``: the measured systems (one colour per round)."""
    fig, ax = new_axes()
    labels: dict[str, list[str]] = {}
    interval_band(ax, curve, "accelerators", "time_to_train_min", alpha=0.15)
    ax.plot(
        curve["accelerators"],
        curve["time_to_train_min"],
        color=OKABE_ITO[0],
        linewidth=1.2,
        label="plan",
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
            f"{r.submitter} {r.system_name}: {int(r.accelerators):,} devices, "
            f"{number(r.time_to_train_min)} min ({round_name})"
            for r in group.itertuples(index=False)
        ]
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

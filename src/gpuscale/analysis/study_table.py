"""The study's Table I beside gpuscale's numbers: where they differ, by how much and why.

Table I of Cortés, Juiz and Bermejo (arXiv 2509.03263) lists, per workload of MLPerf
Training v4.1, the reference system (fewest accelerators, the slowest among them) with
its accelerators and time to train, printed to two decimals by truncation, and the
systems it counted. The values below are the study's; each difference gpuscale finds is
stated with its reason, the reasons being what is known of each source (gpuscale's
scores equal MLCommons' summarizer on the round's raw logs, parity-tested).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import pandas as pd

from gpuscale.analysis.metrics import workload_scaling_table
from gpuscale.tables import display_name

STUDY_ROUND = "v4.1"


@dataclass(frozen=True, slots=True)
class TableIRow:
    """The study's Table I entry for one workload (``systems`` None where not used)."""

    submitter: str
    family: str
    accelerators: int
    minutes: float  # truncated to two decimals
    systems: int | None


TABLE_I: dict[str, TableIRow] = {
    "bert": TableIRow("Krai", "RTX A5000", 2, 366.18, 28),
    "llama2_70b_lora": TableIRow("Dell", "H100-SXM5-80GB", 4, 61.87, 29),
    "retinanet": TableIRow("Dell", "H100-NVL-94GB", 2, 172.83, None),
    "stable_diffusion": TableIRow("Dell", "H100-SXM5-80GB", 4, 60.52, None),
}
# Why a count or a time differs, where the study's source is known to differ.
MORE_SYSTEMS = (
    "gpuscale counts every result MLCommons' summarizer scores in the v4.1 archive; the "
    "study does not list the one it left out"
)
FEWER_SYSTEMS = (
    "gpuscale counts once a result published under two system names with identical runs "
    "({twins}), the study counted both"
)
OTHER_TIME = (
    "gpuscale's time is the summarizer's olympic average of the system's runs, "
    "equal to the official score table; the study does not say where its value comes from"
)


def _truncated(value: float) -> float:
    return math.floor(value * 100) / 100


def table_i_statements(scores: pd.DataFrame) -> list[str]:
    """Per workload of Table I scored in ``scores`` (round v4.1): the reference and the
    count of systems against the study's, in words, each difference with its reason."""
    mine = scores[scores["round"] == STUDY_ROUND]
    out = []
    for workload, row in TABLE_I.items():
        table = workload_scaling_table(mine, workload)
        if table.empty:
            continue
        ref = table[
            (table["system_id"] == table["reference_system_id"])
            & (table["org"] == table["reference_org"])
        ].iloc[0]
        minutes = float(ref["time_to_train_min"])
        same_ref = (ref["submitter"], ref["accelerator_family"], int(ref["accelerators"])) == (
            row.submitter,
            row.family,
            row.accelerators,
        )
        text = (
            f"{display_name(workload)}: the study's reference is {row.submitter}, "
            f"{row.accelerators} x {row.family}, {row.minutes:.2f} min; gpuscale's "
            f"{ref['submitter']}, {int(ref['accelerators'])} x {ref['accelerator_family']}, "
            f"{minutes:.2f} min"
        )
        if not same_ref:
            text += " (another system)"
        elif _truncated(minutes) == row.minutes:
            text += " (the same; the study truncates to two decimals)"
        else:
            text += f" ({minutes - row.minutes:+.2f} min: {OTHER_TIME})"
        if row.systems is not None:
            count = len(table)
            text += f". Systems: the study {row.systems}, gpuscale {count}"
            if count != row.systems:
                why = MORE_SYSTEMS if count > row.systems else _fewer(mine, workload)
                text += f" ({why})"
        out.append(text + ".")
    return out


def _fewer(scores: pd.DataFrame, workload: str) -> str:
    """Why gpuscale counts fewer systems: the results it counts once, named from the
    ``same_runs_as`` column (``system_id`` as ``same_runs_as`` of the kept one)."""
    rows = scores[scores["benchmark"] == workload]
    twins = rows[rows["same_runs_as"].fillna("").astype(str) != ""]
    named = "; ".join(f"{r.org}/{r.system_id} as {r.same_runs_as}" for r in twins.itertuples())
    return FEWER_SYSTEMS.format(twins=named or "none named")

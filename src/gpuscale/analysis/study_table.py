"""The study's Table I beside gpuscale's numbers: where they differ, by how much and why.

Table I of Cortés, Juiz and Bermejo (arXiv 2509.03263) lists, per workload of MLPerf
Training v4.1, the reference system (fewest accelerators, the slowest among them) with
its accelerators and time to train, printed to two decimals by truncation, and the
systems it counted. The values below are the study's; each difference gpuscale finds is
stated with its reason, the reasons being what is known of each source (gpuscale's
scores equal MLCommons' summarizer on the round's raw logs, parity-tested). The count of
systems is explained only where the loaded results are the complete round
(``ROUND_RESULTS``); on a part of it the sentence says so, naming what was loaded.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import pandas as pd

from gpuscale.analysis.metrics import workload_scaling_table
from gpuscale.quantities import filled, joined
from gpuscale.tables import display_name
from gpuscale.tables.workloads import workload_of

STUDY_ROUND = "v4.1"


@dataclass(frozen=True, slots=True)
class TableIRow:
    """The study's Table I entry for one workload (``systems`` None where not used).

    ``system_id`` is the system the study's time is of: the study names the submitter,
    family and count, which more than one system shares (Krai's HDD and SSD towers, Dell's
    XE8640 and XE9640 with 4 H100-SXM), so the system is the one of the complete round
    whose official score the study's time is (the tests pin it against the bundled round).
    """

    submitter: str
    system_id: str
    family: str
    accelerators: int
    minutes: float  # truncated to two decimals
    systems: int | None


TABLE_I: dict[str, TableIRow] = {
    "bert": TableIRow("Krai", "7920T_2xA5000_hdd", "RTX A5000", 2, 366.18, 28),
    "llama2_70b_lora": TableIRow("Dell", "XE9640x4H100-SXM-80GB", "H100-SXM5-80GB", 4, 61.87, 29),
    "retinanet": TableIRow("Dell", "R760x2H100NVL-PCIe-94GB", "H100-NVL-94GB", 2, 172.83, None),
    "stable_diffusion": TableIRow(
        "Dell", "XE8640x4H100-SXM-80GB", "H100-SXM5-80GB", 4, 60.52, None
    ),
}
# The complete v4.1 round as gpuscale scores it (the archive the study read; pinned by
# the tests against the bundled round): per workload whose count the study gives, the
# results counted and their submitters. A count is compared with the study's only on it.
ROUND_RESULTS: dict[str, tuple[int, frozenset[str]]] = {
    "bert": (
        29,
        frozenset(
            [
                "ASUSTeK",
                "Clemson University Research Computing and Data",
                "Dell",
                "FlexAI",
                "Fujitsu",
                "GigaComputing",
                "Krai",
                "Lambda",
                "Lenovo",
                "NVIDIA",
                "Quanta_Cloud_Technology",
                "Supermicro",
                "tinycorp",
            ]
        ),
    ),
    "llama2_70b_lora": (
        28,
        frozenset(
            [
                "ASUSTeK",
                "Azure",
                "Dell",
                "Fujitsu",
                "GigaComputing",
                "Lambda",
                "Lenovo",
                "NVIDIA",
                "Oracle",
                "Quanta_Cloud_Technology",
                "Supermicro",
            ]
        ),
    ),
}
# A count said in a sentence: "one", else its digits
_SAID_COUNT = {1: "one"}
# Why a count or a time differs, where the study's source is known to differ.
MORE_SYSTEMS = (
    "gpuscale counts every result MLCommons' summarizer scores in the v4.1 archive; the "
    "study does not list the {left} it left out"
)
FEWER_SYSTEMS = (
    "gpuscale counts once a result published under two system names with identical runs "
    "({twins}), the study counted both"
)
# ... where the reference's runs loaded are not those its official score was made from.
LOADED_TIME = "gpuscale's time is the olympic average of the runs loaded, not the official score"
OTHER_TIME = (
    "gpuscale's time is the summarizer's olympic average of the system's runs, "
    "equal to the official score table; the study does not say where its value comes from"
)


def _truncated(value: float) -> float:
    return math.floor(value * 100) / 100


def table_i_statements(scores: pd.DataFrame) -> list[str]:
    """Per workload of Table I scored in ``scores`` (round v4.1): the reference and the
    count of systems against the study's, in words, each difference with its reason."""
    return list(table_i_texts(scores).values())


def table_i_texts(scores: pd.DataFrame | None) -> dict[str, str]:
    """:func:`table_i_statements` by workload; none without ``scores``."""
    if scores is None:
        return {}
    mine = scores[scores["round"] == STUDY_ROUND]
    out = {}
    for workload, row in TABLE_I.items():
        table = workload_scaling_table(mine, workload)
        if table.empty:
            continue
        ref = table[
            (table["system_id"] == table["reference_system_id"])
            & (table["org"] == table["reference_org"])
        ].iloc[0]
        minutes = float(ref["time_to_train_min"])
        same_ref = (ref["submitter"], ref["system_id"]) == (row.submitter, row.system_id)
        text = (
            f"{display_name(workload)}: the study's reference is {row.submitter}, "
            f"{row.accelerators} x {row.family}, {row.minutes:.2f} min; gpuscale's "
            f"{ref['submitter']}, {int(ref['accelerators'])} x {ref['accelerator_family']}, "
            f"{minutes:.2f} min"
        )
        doubt = ref.get("score_reason")
        if not same_ref:  # never a reason for the time that presumes the same system
            text += f" (another system, {ref['system_id']}{_absent(mine, table, workload, row)})"
        elif _truncated(minutes) == row.minutes:
            text += " (the same; the study truncates to two decimals)"
        elif isinstance(doubt, str) and doubt:  # its runs are not those officially scored
            text += f" ({minutes - row.minutes:+.2f} min: {LOADED_TIME}: {doubt})"
        else:
            text += f" ({minutes - row.minutes:+.2f} min: {OTHER_TIME})"
        if row.systems is not None:
            count = len(table)
            text += f". Systems: the study {row.systems}, gpuscale {count}"
            other = not_the_round(table, workload)
            if other:
                text += f" ({other}; the counts compare only on the complete round)"
            elif count > row.systems:
                left = count - row.systems
                text += f" ({MORE_SYSTEMS.format(left=_SAID_COUNT.get(left, left))})"
            elif count < row.systems:
                text += f" ({_fewer(mine, workload, row.systems - count)})"
        out[workload] = text + "."
    return out


def not_the_round(table: pd.DataFrame, workload: str) -> str:
    """How the loaded results of ``workload`` (its scaling table) differ from the
    complete v4.1 round (``ROUND_RESULTS``), in words; "" when they are the round."""
    full, submitters = ROUND_RESULTS[workload]
    mine = set(table["submitter"].astype(str))
    if len(table) == full and mine == submitters:
        return ""
    kept = sorted(mine & submitters)
    text = (
        f"the loaded results are not the complete v4.1 round: {len(table)} of its {full} "
        f"{display_name(workload)} results, {_from_submitters(kept, submitters)}"
    )
    extra = sorted(mine - submitters)
    return text + filled(", and from {}, not in it", joined(extra))


def _from_submitters(kept: list[str], submitters: frozenset[str]) -> str:
    """Which of the round's submitters the results loaded are from: all, or how many,
    naming those loaded or, where fewer are missing than loaded, those missing (the 12 of
    13 named: the one left out said)."""
    if len(kept) == len(submitters):
        return f"from all {len(submitters)} of its submitters"
    missing = sorted(submitters - set(kept))
    which = joined(kept)
    if len(missing) < len(kept):
        which = f"all but {joined(missing)}"
    return f"from {len(kept)} of its {len(submitters)} submitters ({which})"


def _absent(scores: pd.DataFrame, table: pd.DataFrame, workload: str, row: TableIRow) -> str:
    """Why gpuscale's reference is not the study's system (``row.system_id``), said after
    "another system": ``: the study's, <system>, is not among the loaded results``, or is
    loaded but not scored (with the scorer's reason), or is loaded but not the reference."""
    said = f": the study's, {row.system_id},"
    match = table[(table["submitter"] == row.submitter) & (table["system_id"] == row.system_id)]
    if len(match):
        return f"{said} is loaded but not the reference of the results loaded"
    names = scores["workload"].fillna(scores["benchmark"]).astype(str).map(workload_of)
    loaded = scores[
        ((names == workload) | (scores["benchmark"] == workload))
        & (scores["submitter"] == row.submitter)
        & (scores["system_id"] == row.system_id)
    ]
    if loaded.empty:
        return f"{said} is not among the loaded results"
    reason = loaded["score_reason"].dropna().astype(str)
    reason = next((r for r in reason if r), "")
    return f"{said} is loaded but not scored" + filled("; {}", reason)


def _fewer(scores: pd.DataFrame, workload: str, gap: int) -> str:
    """Why gpuscale counts ``gap`` fewer systems than the study on the complete round:
    the results it counts once, named from the ``same_runs_as`` column (``system_id`` as
    ``same_runs_as`` of the kept one), where they are as many as the gap."""
    rows = scores[scores["benchmark"] == workload]
    twins = rows[rows["same_runs_as"].fillna("").astype(str) != ""]
    named = "; ".join(f"{r.org}/{r.system_id} as {r.same_runs_as}" for r in twins.itertuples())
    if len(twins) == gap:
        return FEWER_SYSTEMS.format(twins=named)
    if len(twins):
        return (
            f"{len(twins)} of the {gap} fewer are results published under two system names "
            f"with identical runs ({named}), which gpuscale counts once; the study does not "
            "list its systems to trace the rest"
        )
    return "the study does not list its systems, so the difference cannot be traced"

"""The answer first: per workload, the accelerator count each criterion recommends, within
the accelerator family that ran the most counts and over all systems.

Criteria: **fastest** (the shortest time to train), **knee** (Kneedle's bend of log T
against log N over the fastest system per count), **speed x efficiency** (the largest
``S x E``) and **E' threshold** (the largest count keeping E' >= threshold x the best).
Within a family the picks and their E' do not depend on the reference rule (each family
against its own reference: ``equilibrium_by_family``), so the report, ``analyze``, its JSON
and the README agree. Over all systems under a per-family reference (``--reference
family``) each family's E' is against its own reference, so the criteria that use S or E'
(speed x efficiency, E' threshold) pick nothing across families: those rows say so
(``note``); fastest and knee (T and N only) still apply. Where a scope's systems are one,
or all at one accelerator count, E' measures no scaling and no criterion picks
(``equilibrium``): each row's ``note`` says so. Over all systems, a pick that compares
hardware rather than scaling (``gpuscale.analysis.crossing``: another family than its
reference, or a knee where the hardware changes) carries that caution in ``note``. Each
pick's ``edge`` says where it is the fewest or the most accelerators its scope ran
(``crossing.measured_edge``): no fewer, or no more, was measured, so the answer may lie
beyond the data; the E' threshold's (the count the report recommends) is said in words.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict
from typing import Protocol

import pandas as pd

from gpuscale.analysis.analyze import (
    CROSS_FAMILY,
    WorkloadAnalysis,
    overall_equilibrium,
    per_family_reference,
)
from gpuscale.analysis.crossing import (
    edge_note,
    measured_edge,
    scaling_family,
    system_crossing,
)
from gpuscale.analysis.equilibrium import Pick
from gpuscale.tables import ANSWER_PICK_COLUMNS, ANSWER_SCHEMA, frame_of


def _row(
    result: WorkloadAnalysis, scope: str, criterion: str, pick: Mapping | None, note: str = ""
) -> dict:
    row = {"round": result.round, "workload": result.workload, "scope": scope}
    row["criterion"] = criterion
    if pick is None:
        return row | {"accelerators": None, "note": note}
    return row | {c: pick[c] for c in ANSWER_PICK_COLUMNS} | {"note": note}


def _with_edge(row: dict, part: pd.DataFrame) -> dict:
    """``row`` with where its pick lies among the counts ``part`` ran (``edge``)."""
    if row.get("accelerators") is None:
        return row | {"edge": ""}
    return row | {"edge": measured_edge(part, int(row["accelerators"]))}


def _pick_row(
    result: WorkloadAnalysis, scope: str, criterion: str, pick: Pick | None, why: str = ""
) -> dict:
    """A criterion's row; its note the pick's own caution (a pick that compares hardware,
    or whose E' above 1 is not scaling), else ``why``."""
    if pick is None:
        return _row(result, scope, criterion, None, why)
    return _row(result, scope, criterion, asdict(pick), pick.caution or why)


def _fastest_row(result: WorkloadAnalysis, scope: str, part: pd.DataFrame) -> dict:
    """The fastest system's row, noted with where another system crosses it."""
    if part.empty:
        return _row(result, scope, "fastest", None)
    fastest = part.loc[part["time_to_train_min"].idxmin()]
    return _row(result, scope, "fastest", fastest, system_crossing(part, part.loc[[fastest.name]]))


ALL_SYSTEMS = "all systems"


class AnswerLike(Protocol):
    """An answer row read by attribute (``itertuples`` or ``iterrows``)."""

    scope: str
    criterion: str
    accelerators: int
    accelerator_family: str
    edge: str


def edge_words(row: AnswerLike) -> str:
    """Where an answer row's E' threshold pick (the count the report recommends) is the
    fewest or most accelerators its scope ran, that in words (``crossing.edge_note``);
    "" for the other criteria and for a pick between the ends."""
    if not str(row.criterion).startswith("E' >=") or not row.edge:
        return ""
    family = "" if row.scope == ALL_SYSTEMS else str(row.accelerator_family)
    return edge_note(str(row.edge), int(row.accelerators), family)


def answers(result: WorkloadAnalysis) -> pd.DataFrame:
    """One row per (scope, criterion): the count it picks and the system (a frame of
    ``gpuscale.tables.ANSWER_SCHEMA``; ``accelerators`` empty where a criterion picks
    nothing, e.g. no knee)."""
    table = result.table
    family = scaling_family(table)
    own = next((e for e in result.by_family if e.scope == family), None)
    scopes = [
        (f"{family} (most counts)", own, table[table["accelerator_family"] == family]),
        (ALL_SYSTEMS, overall_equilibrium(result), table),
    ]
    rows = []
    for scope, eq, part in scopes:
        if eq is None:
            continue
        # over all systems under per-family references, E' compares references
        none = eq.why_none  # one system or one accelerator count: no criterion picks
        why = none
        if scope == ALL_SYSTEMS and per_family_reference(result):
            why = CROSS_FAMILY
        label = f"E' >= {eq.threshold:g} x best"
        found = [
            _fastest_row(result, scope, part),
            _pick_row(result, scope, "knee", eq.knee, none),
            _pick_row(result, scope, "speed x efficiency", eq.max_speed_x_efficiency, why),
            _pick_row(result, scope, label, eq.efficiency_threshold, why),
        ]
        rows.extend(_with_edge(row, part) for row in found)
    return frame_of(ANSWER_SCHEMA, rows)

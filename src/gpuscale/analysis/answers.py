"""The answer first: per workload, the accelerator count each criterion recommends, within
the most submitted accelerator family and over all systems.

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
reference, or a knee where the hardware changes) carries that caution in ``note``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict

import pandas as pd

from gpuscale.analysis.analyze import (
    CROSS_FAMILY,
    WorkloadAnalysis,
    overall_equilibrium,
    per_family_reference,
)
from gpuscale.analysis.crossing import most_submitted_family, system_crossing
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


def answers(result: WorkloadAnalysis) -> pd.DataFrame:
    """One row per (scope, criterion): the count it picks and the system (a frame of
    ``gpuscale.tables.ANSWER_SCHEMA``; ``accelerators`` empty where a criterion picks
    nothing, e.g. no knee)."""
    table = result.table
    family = most_submitted_family(table)
    own = next((e for e in result.by_family if e.scope == family), None)
    scopes = [
        (f"{family} (most submitted)", own, table[table["accelerator_family"] == family]),
        ("all systems", overall_equilibrium(result), table),
    ]
    rows = []
    for scope, eq, part in scopes:
        if eq is None:
            continue
        # over all systems under per-family references, E' compares references
        none = eq.why_none  # one system or one accelerator count: no criterion picks
        why = none
        if scope == "all systems" and per_family_reference(result):
            why = CROSS_FAMILY
        rows.append(_fastest_row(result, scope, part))
        rows.append(_pick_row(result, scope, "knee", eq.knee, none))
        rows.append(_pick_row(result, scope, "speed x efficiency", eq.max_speed_x_efficiency, why))
        label = f"E' >= {eq.threshold:g} x best"
        rows.append(_pick_row(result, scope, label, eq.efficiency_threshold, why))
    return frame_of(ANSWER_SCHEMA, rows)

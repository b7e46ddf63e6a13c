"""The answer first: per workload, the accelerator count each criterion recommends, within
the most submitted accelerator family and over all systems.

Criteria: **fastest** (the shortest time to train), **knee** (Kneedle's bend of log T
against log N over the fastest system per count), **speed x efficiency** (the largest
``S x E``) and **E' threshold** (the largest count keeping E' >= threshold x the best).
Within a family the picks do not depend on the reference rule (E' changes by one factor
for all systems of the family), so the report, ``analyze`` and the README agree. Over all
systems under a per-family reference (``--reference family``) each family's E' is against
its own reference, so the criteria that use S or E' (speed x efficiency, E' threshold)
pick nothing across families: those rows say so (``note``); fastest and knee (T and N
only) still apply. Over all systems, a pick that compares hardware rather than scaling
(``gpuscale.analysis.crossing``: another family than its reference, or a knee where the
hardware changes) carries that caution in ``note``.
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


def _picked(pick: Pick | None) -> Mapping | None:
    return asdict(pick) if pick is not None else None


def _fastest(table: pd.DataFrame) -> pd.Series | None:
    return None if table.empty else table.loc[table["time_to_train_min"].idxmin()]


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
        overall = scope == "all systems"
        why = CROSS_FAMILY if overall and per_family_reference(result) else ""

        def caution(pick: Pick | None) -> str:
            # a pick that compares hardware, or whose E' above 1 is not scaling, says so
            return pick.caution if pick is not None else ""

        fastest = _fastest(part)
        crossing = "" if fastest is None else system_crossing(part, part.loc[[fastest.name]])
        rows.append(_row(result, scope, "fastest", fastest, crossing))
        rows.append(_row(result, scope, "knee", _picked(eq.knee), caution(eq.knee)))
        speed = eq.max_speed_x_efficiency
        rows.append(
            _row(result, scope, "speed x efficiency", _picked(speed), caution(speed) or why)
        )
        threshold = eq.efficiency_threshold
        label = f"E' >= {eq.threshold:g} x best"
        rows.append(_row(result, scope, label, _picked(threshold), caution(threshold) or why))
    return frame_of(ANSWER_SCHEMA, rows)

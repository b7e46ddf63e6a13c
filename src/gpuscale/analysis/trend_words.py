"""The trend rows of one workload (``analysis.trends``) in words, for the report: each
family's best time round by round, and each note once, with the rows it is about."""

from __future__ import annotations

import pandas as pd

from gpuscale.analysis.software import frameworks_text
from gpuscale.quantities import filled, format_minutes, number
from gpuscale.tables import round_key


def family_trends(rows: pd.DataFrame) -> list[str]:
    """``H100-SXM5-80GB: 5.31 min on 8 in v4.0, 5.39 min on 8 in v4.1 (1.02x the time
    at 8 from v4.0 to v4.1)``: one sentence per family seen in two rounds or more (the most
    rounds first), each round's best time at its most common count, from ``rows``."""
    out = []
    groups = [(f, g) for f, g in rows.groupby("accelerator_family") if g["round"].nunique() > 1]
    groups.sort(key=lambda fg: (-fg[1]["round"].nunique(), str(fg[0])))
    for family, group in groups:
        group = group.sort_values("round", key=lambda c: c.map(round_key))
        said = ", ".join(
            f"{format_minutes(r.best_time_at_common_min)} on {int(r.common_accelerators):,} "
            f"in {r.round}"
            for r in group.itertuples(index=False)
        )
        first, last = group.iloc[0], group.iloc[-1]
        if first["common_accelerators"] == last["common_accelerators"]:
            ratio = last["best_time_at_common_min"] / first["best_time_at_common_min"]
            said += (
                f" ({number(ratio)}x the time at {int(first['common_accelerators']):,} from "
                f"{first['round']} to {last['round']}{_software(first, last)})"
            )
        out.append(f"{family}: {said}")
    return out


def _software(first: pd.Series, last: pd.Series) -> str:
    """``, the same system: software`` where one system was the fastest at the count in
    both rounds (``system_at_common``), with the frameworks where they differ; ""
    otherwise."""
    system = first.get("system_at_common")
    if not system or system != last.get("system_at_common"):
        return ""
    frameworks = (first.get("framework_at_common"), last.get("framework_at_common"))
    return ", the same system: software" + filled(" ({})", frameworks_text(*frameworks))


def grouped_notes(rows: pd.DataFrame) -> list[str]:
    """Each clause of the rows' notes once: alone where every row has it, else with the
    family and round of the rows that do, so that a clause is never repeated and never
    read without the rows it is true of."""
    where: dict[str, list[str]] = {}
    for r in rows.itertuples(index=False):
        for clause in filter(None, (c.strip() for c in str(r.note or "").split("; "))):
            where.setdefault(clause, []).append(f"{r.accelerator_family} {r.round}")
    return [
        clause if len(rows_) == len(rows) else f"{clause} ({', '.join(rows_)})"
        for clause, rows_ in where.items()
    ]

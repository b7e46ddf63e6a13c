"""``plan``'s answer on a terminal: one short row per count, in words a reader needs no
docs for (``count_class`` ``ii_in`` is "between measured"), and the lines a row cannot
hold (its flags); every sentence of the plan is ``--explain``'s, every column ``-f csv``'s
and ``-f json``'s (``planning.words``)."""

from __future__ import annotations

import math

from gpuscale.planning.records import PlanResult, PlanRow

# ``count_class`` in words: whether the family ran the workload at this count
COUNT_WORDS = {
    "i": "measured",
    "ii_in": "between measured",
    "ii_out": "beyond measured",
    "iii": "workload never run",
}
# Columns shown only where a row has a value (a price, a power, a criterion, thin evidence)
WHERE_GIVEN = ("cost", "energy kWh", "picked by", "rests on")
# What a narrow terminal drops first (--explain and -f csv keep every column)
PLAN_DROP_ORDER = ("picked by", "nodes", "global batch", "energy kWh", "accelerator hours")


def _interval(row: PlanRow) -> str:
    """``15.03-19.7``: the 80% interval of the time, minutes (4 significant digits)."""
    low, high = row["time_to_train_min_low"], row["time_to_train_min_high"]
    if low is None or high is None or math.isnan(low) or math.isnan(high):
        return ""
    return f"{low:.4g}-{high:.4g}"


def _shown(row: PlanRow) -> PlanRow:
    return {
        "accelerators": row["accelerators"],
        "nodes": row["nodes"],
        "minutes": row["time_to_train_min"],
        "80% interval": _interval(row),
        "accelerator hours": row["accelerator_hours"],
        "cost": row["cost"],
        "energy kWh": row["energy_kwh"],
        "global batch": row["global_batch"],
        "this count": COUNT_WORDS.get(row["count_class"], row["count_class"]),
        "picked by": row["stops_paying"],  # the criteria whose last paying count it is
        "rests on": row["rests_on"],  # one submission or one submitter: one software stack
    }


def _given(value: object) -> bool:
    return value not in (None, "") and not (isinstance(value, float) and math.isnan(value))


def plan_answer(result: PlanResult) -> tuple[list[PlanRow], list[str], str]:
    """The terminal's short plan: its records (a column of ``WHERE_GIVEN`` only where a
    row has a value), the lines under them (each flagged count's flags; where the rest
    is) and the title (minutes to train, the interval's level)."""
    records = [_shown(row) for row in result.rows]
    empty = [c for c in WHERE_GIVEN if not any(_given(r[c]) for r in records)]
    records = [{k: v for k, v in r.items() if k not in empty} for r in records]
    said = [f"{row['accelerators']:,}: {row['flags']}" for row in result.rows if row["flags"]]
    said.append("How each count was planned: --explain; every column: -f csv or -f json.")
    model = result.model
    title = f"plan: {model['workload']} on {model['family']}, minutes to train (80% interval)"
    return records, said, title

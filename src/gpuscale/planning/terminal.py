"""``plan``'s answer as tables and documents show it: on a terminal one short row per
count, in words a reader needs no docs for (``count_class`` ``ii_in`` is "between
measured"), and the lines a row cannot hold (its flags); ``--explain``'s rows with the
systems each count leans on; ``-f csv``'s every column and ``-f json``'s document. The
plan's sentences are ``planning.words``'."""

from __future__ import annotations

import math

from gpuscale.planning.limits import NO_TIME
from gpuscale.planning.records import Facts, PlanResult, PlanRow
from gpuscale.quantities import (
    TABLE_DIGITS,
    agreeing,
    counted,
    format_minutes,
    joined,
    named,
    number_range,
)
from gpuscale.tables.plan import PLAN_COLUMNS, nearest_columns

# ``count_class`` in words: whether the family ran the workload at this count
COUNT_WORDS = {
    "i": "measured",
    "ii_in": "between measured",
    "ii_out": "beyond measured",
    "iii": "workload never run",
}
BELOW_WORDS = "below measured"  # class ii_out below the family's counts, not beyond them


def count_words(row: PlanRow) -> str:
    """The row's ``count_class`` in words (:data:`COUNT_WORDS`; a count outside the family's
    counts below them: :data:`BELOW_WORDS`)."""
    if row.get("below_counts"):
        return BELOW_WORDS
    return COUNT_WORDS.get(row["count_class"], row["count_class"])


# ``stops_paying`` as both terminal views name it: the answer's "not shown, for width"
# points to --explain, which must hold it under the same name
PICKED_BY = "picked by"
# Columns shown only where a row has a value (a price, a power, a criterion, thin evidence)
WHERE_GIVEN = ("cost", "energy kWh", PICKED_BY, "rests on")
# What a narrow terminal drops first (--explain and -f csv keep every column)
PLAN_DROP_ORDER = (PICKED_BY, "nodes", "global batch", "energy kWh", "accelerator hours")


def plan_interval(low: float | None, high: float | None) -> str:
    """``15.03-19.70``: a plan's 80% interval of the time, minutes, to the table's
    significant figures (``TABLE_DIGITS``, as :func:`number_range` writes them: 16,420,
    never 1.642e+04; 20.00, not 20), as the terminal's and the report's plan tables show it;
    "" where an end is missing."""
    if low is None or high is None or math.isnan(low) or math.isnan(high):
        return ""
    return number_range(low, high, TABLE_DIGITS)


def _interval(row: PlanRow) -> str:
    return plan_interval(row["time_to_train_min_low"], row["time_to_train_min_high"])


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
        "this count": count_words(row),
        PICKED_BY: row["stops_paying"],  # the criteria whose last paying count it is
        # one submission or one submitter (whose): one software stack
        "rests on": thin_mark(row["rests_on"], row["rests_on_submitter"], row["rests_on_outlier"]),
    }


def thin_mark(rests_on: str, submitter: str, outlier: str) -> str:
    """A count's thin-evidence mark (``tables.plan``'s ``rests_on`` and whose), as every
    view shows it: ``one submission: tinycorp's``, ``one submitter: xFusion``, with ``, an
    outlier elsewhere`` where that submitter's software is one (:func:`outlier_lines` say
    where); "" where the level rests on more."""
    if not rests_on:
        return ""
    whose = f"{submitter}'s" if rests_on == "one submission" else submitter
    return f"{rests_on}: {whose}" + (", an outlier elsewhere" if outlier else "")


def outlier_lines(rows: list[PlanRow]) -> list[str]:
    """Once per submitter a count's level rests on whose software is an outlier elsewhere
    in the workload's data (``rests_on_outlier``): whose, and where."""
    said = dict.fromkeys(
        (r["rests_on_submitter"], r["rests_on_outlier"]) for r in rows if r["rests_on_outlier"]
    )
    return [
        f"{who}'s software, an outlier elsewhere (left out of the fit): {where}."
        for who, where in said
    ]


def _given(value: object) -> bool:
    return value not in (None, "") and not (isinstance(value, float) and math.isnan(value))


def _once(flags: str) -> str:
    """A row's flags with "no time: " said once, before the first reason that withholds
    the time (each such reason carries it: ``limits.NO_TIME``)."""
    first, sep, rest = flags.partition(NO_TIME)
    return first + sep + rest.replace(f"; {NO_TIME}", "; ")


def plan_answer(result: PlanResult) -> tuple[list[PlanRow], list[str], str]:
    """The terminal's short plan: its records (a column of ``WHERE_GIVEN`` only where a
    row has a value), the lines under them (the flags, once for the counts that share
    them; each count planned faster than linear that no flag says; where the rest is) and
    the title (minutes to train, the interval's level)."""
    records = [_shown(row) for row in result.rows]
    empty = [c for c in WHERE_GIVEN if not any(_given(r[c]) for r in records)]
    records = [{k: v for k, v in r.items() if k not in empty} for r in records]
    # the counts of the same flags in one line, as --explain's sentences group counts: a
    # run of counts refused for one reason is said once, not once a count
    flagged: dict[str, list[int]] = {}
    for row in result.rows:
        if row["flags"]:
            flagged.setdefault(_once(row["flags"]), []).append(row["accelerators"])
    said = [f"{joined(f'{c:,}' for c in counts)}: {flags}" for flags, counts in flagged.items()]
    # a count planned faster than linear that no flag says (measured so): its cell, one
    # line (--explain's sentence says why)
    said += [
        f"{row['accelerators']:,}: more than linear, {row['beyond_linear']}"
        for row in result.rows
        if row["beyond_linear"] and not (row["beyond_linear_verdict"] or {}).get("flagged")
    ]
    said += outlier_lines(result.rows)
    said += picks_line(result)
    said += result.said  # rounds of different targets pooled, a level borrowed
    said.append("How each count was planned: --explain; every column: -f csv or -f json.")
    model = result.model
    title = f"plan: {model['workload']} on {model['family']}, minutes to train (80% interval)"
    return records, said, title


def picks_line(result: PlanResult) -> list[str]:
    """Which counts the plan picks and by what, over what (the plan's ``model["picks"]``),
    and why ``gpuscale analyze`` can pick another count; where it picks none, why
    (``model["no_pick"]``) and the counts that would let it pick."""
    over = result.model.get("picks") or {}
    if not over.get("picked"):
        return no_pick_line(result.model.get("no_pick"))
    among = over["among"]
    picked = joined(f"{p['accelerators']:,} ({', '.join(p['by'])})" for p in over["picked"])
    return [
        f"picks {picked}, over the plan's times at the {len(among)} counts asked without a "
        f"flag ({among[0]:,} to {among[-1]:,}), E' against the plan at {over['reference']:,}, "
        f"the threshold against the best E', {over['best_normalized_efficiency']:.3f} at "
        f"{over['best']:,}; gpuscale analyze picks over one round's measured systems (the "
        "fastest at each count, E' against its reference system), so it can pick another "
        "count."
    ]


def no_pick_line(no_pick: Facts | None) -> list[str]:
    """Why the plan picks no count (``result.no_pick``: the counts it is about) and the
    ``-n`` that lets it pick; none where a count is picked."""
    if not no_pick:
        return []
    counts = {k: joined(f"{c:,}" for c in no_pick[k]) for k in ("unflagged", "flagged", "untimed")}
    others = "; ".join(
        f"{counts[k]} {said}"
        for k, said in (("flagged", "flagged"), ("untimed", "without a time"))
        if no_pick[k]
    )
    why = {
        "one_count": f"{counts['unflagged']} is the only count asked"
        + (f" without a flag ({others})" if others else "")
        + ": nothing to compare it with",
        "all_flagged": f"every count asked is flagged or without a time ({others})",
        "no_time": f"no count asked ({counts['untimed']}) has a time",
    }[no_pick["why"]]
    more = no_pick["more"]
    then = (
        f"-n {','.join(map(str, more))} lets it pick"
        if more
        else "no count tried besides those asked (those the workload's results ran, and up to 4 "
        "halvings and doublings) lets it pick"
    )
    return [f"no pick: {why}; {then}."]


def nearest_text(nearest: list[Facts]) -> str:
    """One ``nearest`` list as text: ``v4.1 Dell XE9680 (8 devices, 27.8 min); ...``
    (the family named when it is not the one planned)."""
    return "; ".join(
        f"{n['round']} {named(n['submitter'], n['system'])} "
        f"({counted(int(n['accelerators']), 'device')}, "
        f"{format_minutes(n['time_to_train_min'], digits=4)})"
        for n in nearest
    )


# --explain's columns: every one of PLAN_COLUMNS but ``nearest``, said as each count's
# "lean on" line, and ``rests_on_outlier``, said as a line of its own
# (``terminal.outlier_lines``); CSV and JSON carry all of them.
PLAN_SHOWN = tuple(c for c in PLAN_COLUMNS if c not in ("nearest", "rests_on_outlier"))


# the cost column's unit, as advise's ``cost_unit`` says it: --price is in any currency
COST_UNIT_OF = "the currency of {}, per accelerator-hour x accelerator-hours"
COST_UNIT = COST_UNIT_OF.format("--price")


def cost_unit(rows: list[PlanRow], price: str = "--price") -> str | None:
    """The cost column's unit, ``price`` naming the price as the reader gives it (the
    command line's ``--price``, Python's ``price_per_device_hour=``); None where no row
    has a cost."""
    return COST_UNIT_OF.format(price) if any(_given(row["cost"]) for row in rows) else None


def plan_document(result: PlanResult) -> Facts:
    """``plan -f json``: the rows (``PLAN_COLUMNS``) with the notes and the model they
    came from, and ``cost_unit`` (the cost column's; None where no row has a cost)."""
    rows = [{c: row[c] for c in PLAN_COLUMNS} for row in result.rows]
    return {
        "notes": result.notes,
        "model": result.model,
        "rows": rows,
        "cost_unit": cost_unit(rows),
    }


def _flat(row: PlanRow) -> PlanRow:
    """A row with its ``nearest`` list as flat columns, in its place (CSV's)."""
    at = list(row).index("nearest")
    items = list(row.items())
    return dict([*items[:at], *nearest_columns(row["nearest"]).items(), *items[at + 1 :]])


def plan_records(result: PlanResult, *, terminal: bool) -> tuple[list[PlanRow], list[str], str]:
    """The plan's rows as a table shows them, the lines under it and its title: a
    terminal's ``PLAN_SHOWN`` and the systems each count leans on in words; CSV's every
    column, ``nearest`` a column per field of each system (``tables.plan.nearest_columns``;
    no title) and, the one line beside it, the pick or why none (stderr: the CSV whole)."""
    rows = [{c: row[c] for c in PLAN_COLUMNS} for row in result.rows]
    if not terminal:
        return [_flat(row) for row in rows], picks_line(result), ""
    said = [
        f"{counted(n, 'accelerator')} {agreeing(n, 'leans', 'lean')} on: "
        f"{nearest_text(r['nearest'])}"
        for r in rows
        for n in [int(r["accelerators"])]
        if math.isfinite(r["time_to_train_min"])  # no time: leans on nothing (flags say why)
    ] + picks_line(result)
    title = f"plan: {result.model['workload']} on {result.model['family']}"
    if others := result.model.get("could_also_mean"):  # the parts the name was not read as
        title += (
            f" (from {result.model['accelerator_asked']!r}; also in the data: {joined(others)})"
        )
    named = {c: PICKED_BY if c == "stops_paying" else c for c in PLAN_SHOWN}
    shown = [{named[c]: row[c] for c in PLAN_SHOWN} for row in rows]
    for row, full in zip(shown, result.rows, strict=True):  # the code with its words
        code = row["count_class"]
        row["count_class"] = f"{code} ({count_words(full)})" if code in COUNT_WORDS else code
    return shown, said, title

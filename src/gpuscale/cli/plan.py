"""``gpuscale plan``: time to train on N devices of an accelerator, from MLPerf."""

from __future__ import annotations

from typing import Any

from gpuscale.cli.common import (
    FormatOption,
    RoundNames,
    RoundPaths,
    app,
    err,
    fail,
    fail_on,
    load_tables,
    out,
)
from gpuscale.cli.options import command, option_names, request_of
from gpuscale.cli.output import Format, jsonable, print_json, print_records
from gpuscale.planning.request import PlanRequest
from gpuscale.planning.words import nearest_text
from gpuscale.tables.plan import PLAN_COLUMNS

# The table format shows these; CSV and JSON every column.
SHOWN = [
    c
    for c in PLAN_COLUMNS
    if c not in ("expected_samples", "batch_per_accelerator", "nearest", "pareto", "extrapolated")
]


@command(app, "plan", PlanRequest, at="fmt")
def plan(
    paths: RoundPaths = None,
    round_names: RoundNames = None,
    fmt: FormatOption = Format.table,
    **options: Any,
) -> None:
    """Time to train on N devices of an accelerator, with an 80% interval, from MLPerf.

    Predicted from the MLPerf results of every family, the accelerator's own level
    (method: docs/plan.md)."""
    from gpuscale.planning import plan_for  # lazy: the fits, not needed for --help

    if not options["workload"] or not options["accelerator"]:
        fail("give --workload and --accelerator (e.g. --workload bert --accelerator H100)")
    with fail_on(ValueError, options=option_names(PlanRequest)):
        request = request_of(PlanRequest, options)
    # the bundled rounds' fits ship with gpuscale: no tables (and no pandas) to load
    scores = load_tables(paths, round_names).scores if paths or round_names else None
    with fail_on(ValueError):  # unknown names, nothing to plan from
        result = plan_for(request, scores)
    rows = [{c: row[c] for c in PLAN_COLUMNS} for row in result.rows]
    if fmt is Format.json:  # the rows with the notes and the model they came from
        doc = {"notes": result.notes, "model": result.model, "rows": rows}
        print_json(out, jsonable(doc))
        return
    if fmt is Format.csv:  # one table on stdout; the notes that qualify it on stderr
        rows = [row | {"nearest": nearest_text(row["nearest"])} for row in rows]
        print_records(out, rows, fmt)
        _say(result.notes)
        return
    title = f"plan: {result.model['workload']} on {result.model['family']}"
    print_records(out, [{c: row[c] for c in SHOWN} for row in rows], fmt, title=title)
    for row in rows:
        out.print(
            f"{row['accelerators']} accelerators lean on: {nearest_text(row['nearest'])}",
            markup=False,
            highlight=False,
        )
    _say(result.notes)


def _say(notes: list[str]) -> None:
    """The plan's notes (law, family borrowed, extrapolation) on stderr."""
    for note in notes:
        err.print(note, markup=False, highlight=False)

"""``gpuscale plan``: time to train on N devices of an accelerator, from MLPerf."""

from __future__ import annotations

import typer

from gpuscale.cli.common import Explain, FormatOption, app, load_tables
from gpuscale.cli.options import command, option_names
from gpuscale.cli.output import Format, fail_on, out, print_json, print_records, say
from gpuscale.planning.request import PlanRequest
from gpuscale.planning.words import plan_document, plan_records
from gpuscale.tables.round_requests import RoundSelection


@command(app, "plan", skip=("benchmark",))
def plan(
    selection: RoundSelection,
    request: PlanRequest,
    fmt: FormatOption = Format.table,
    explain: Explain = False,
) -> None:
    """Time to train on N devices of an accelerator, with an 80% interval, from MLPerf.

    Predicted from the MLPerf results of every family, the accelerator's own level
    (method: docs/plan.md)."""
    from gpuscale.planning import plan_for  # lazy: the fits, not needed for --help

    # the bundled rounds' fits ship with gpuscale: no tables (and no pandas) to load
    scores = load_tables(selection).scores if selection.asked else None
    with fail_on(ValueError, options=option_names(PlanRequest)):  # names, nothing to plan
        result = plan_for(request, scores)
    if fmt is Format.json:  # the rows with the notes and the model they came from
        print_json(out, plan_document(result))
    elif fmt is Format.table and not explain:  # the answer: a short row per count
        from gpuscale.planning.terminal import PLAN_DROP_ORDER, plan_answer

        records, said, title = plan_answer(result)
        rest = "--explain or -f csv"
        print_records(out, records, fmt, title=title, drop_order=PLAN_DROP_ORDER, rest=rest)
        say(said, wrap=True)
        say(result.read_as, stderr=True, wrap=True)  # how the names typed were read
    else:
        records, said, title = plan_records(result, terminal=fmt is Format.table)
        print_records(out, records, fmt, title=title)
        say(said, stderr=fmt is Format.csv)  # beside CSV rows: the pick, or why none
        say(result.notes, stderr=True)  # law, family borrowed, extrapolation
    if not result.timed:  # no count planned: each row said why, exit 1
        raise typer.Exit(1)

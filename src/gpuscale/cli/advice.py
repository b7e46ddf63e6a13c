"""The advise command: how many devices, with what batch, and why."""

from __future__ import annotations

from textwrap import wrap
from typing import Annotated

import typer

from gpuscale.advice.request import AdviceRequest
from gpuscale.cli.common import FormatOption, app
from gpuscale.cli.options import command, option_names
from gpuscale.cli.output import Format, fail, say, show
from gpuscale.tables.requests import FieldError

ExplainOption = Annotated[
    bool,
    typer.Option(
        "--explain",
        help="Say everything the advice rests on: each assumption with its source, the "
        "break-even, the equilibrium, the weak-scaling alternative, the caveats (the "
        "default: the answer, its deciding term and what would change it).",
    ),
]


@command(app, "advise")
def advise_command(
    request: AdviceRequest, fmt: FormatOption = Format.table, explain: ExplainOption = False
) -> None:
    """How many devices to train on, with what batch, and why.

    Time, cost and energy to a trained model from your measurements (or numbers) and a
    convergence model (method: docs/advice.md)."""
    from gpuscale.advice.keywords import advise_here  # lazy: pandas, not for --help

    try:  # the request's names (`bret`: "did you mean 'bert'?") resolved, its values checked
        result = advise_here(request)
    except FieldError as exc:
        fail(exc.as_options(option_names(AdviceRequest)))
    except (ValueError, KeyError, OSError) as exc:  # UnknownNameError, a file unreadable
        fail(str(exc.args[0]) if isinstance(exc, KeyError) else str(exc))
    from gpuscale.advice.document import advice_view  # lazy: as advise_here

    # the table and the sentences, or CSV, or JSON (the whole answer: advice.document)
    terminal, document = fmt is Format.table, fmt is Format.json
    if terminal and not explain:  # the answer first, each line within 100 columns
        from gpuscale.advice.answer import LINE_COLUMNS, lines

        width = LINE_COLUMNS  # a constant: what is said never depends on the terminal
        say(
            wrapped
            for line in lines(result)
            for wrapped in wrap(line, width, subsequent_indent="  ")
        )
    show(advice_view(result, terminal=terminal, document=document, explain=explain), fmt)

"""The advise command: how many devices, with what batch, and why."""

from __future__ import annotations

from gpuscale.advice.request import AdviceRequest
from gpuscale.cli.common import FormatOption, app
from gpuscale.cli.options import command, option_names
from gpuscale.cli.output import Format, fail, note, out, say, show
from gpuscale.tables.requests import FieldError


@command(app, "advise")
def advise_command(request: AdviceRequest, fmt: FormatOption = Format.table) -> None:
    """How many devices to train on, with what batch, and why.

    Time, cost and energy to a trained model from your measurements (or numbers) and a
    convergence model (method: docs/advice.md)."""
    from gpuscale.advice.api import advise_loaded  # lazy: pandas, not for --help

    note(*request.read_as)  # a workload read from a prefix or another name, as plan says it
    try:  # the request's names (`bret`: "did you mean 'bert'?") resolved, its values checked
        result = advise_loaded(request, here=True)
    except FieldError as exc:
        fail(exc.as_options(option_names(AdviceRequest)))
    except (ValueError, KeyError, OSError) as exc:  # UnknownNameError, a file unreadable
        fail(str(exc.args[0]) if isinstance(exc, KeyError) else str(exc))
    from gpuscale.advice.explain.answer import shown  # lazy: as advise_loaded
    from gpuscale.advice.explain.document import advice_view

    # the answer first (COLUMNS wide, at most 100), then the table (--explain: and the rest);
    # or CSV, or JSON (the whole)
    table, document = fmt is Format.table, fmt is Format.json
    say(shown(result, out.width, request.explain) if table else ())
    show(advice_view(result, terminal=table, document=document, explain=request.explain), fmt)

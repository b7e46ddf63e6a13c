"""The advise command: how many devices, with what batch, and why."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from gpuscale.advice.request import AdviceRequest
from gpuscale.bench.telemetry import topology_here
from gpuscale.cli.common import (
    FormatOption,
    app,
    fail,
    out,
    read_bench,
    show,
)
from gpuscale.cli.options import command, option_names, request_of
from gpuscale.cli.output import Format, print_json
from gpuscale.names import UnknownNameError, resolve_ruleset, resolve_workloads
from gpuscale.tables.requests import FieldError


@command(app, "advise", AdviceRequest, at="fmt")
def advise_command(fmt: FormatOption = Format.table, **options: Any) -> None:
    """How many devices to train on, with what batch, and why.

    Time, cost and energy to a trained model from your measurements (or numbers) and a
    convergence model (method: docs/advice.md)."""
    from gpuscale.advice.api import advise  # lazy: pandas (the advice model), not for --help
    from gpuscale.advice.load import load_advice_data  # lazy: pandas, as the line above

    try:  # the names every command resolves alike: `bret` gets "did you mean 'bert'?"
        options["ruleset"] = resolve_ruleset(options["ruleset"])
        if options.get("workload") is not None:
            options["workload"] = resolve_workloads([options["workload"]])[0]
    except UnknownNameError as exc:
        fail(str(exc))
    try:
        request = request_of(AdviceRequest, options)
        topology = None
        given = (request.interconnect, request.busbw_gbs, request.topo, request.collectives)
        if all(value is None for value in given):
            topology = topology_here(None, None)
        bench = read_bench(Path(request.bench)) if request.bench else None
        data = load_advice_data(request, bench=bench, topology=topology)
        result = advise(
            request, bench=data.bench, topology=data.topology, collectives=data.collectives
        )
    except FieldError as exc:
        fail(exc.as_options(option_names(AdviceRequest)))
    except (ValueError, KeyError, OSError) as exc:
        fail(str(exc.args[0]) if isinstance(exc, KeyError) else str(exc))
    render(result, fmt)


def render(result: Any, fmt: Format) -> None:
    """The table and the sentences, or JSON (``advice.document``), or CSV."""
    from gpuscale.advice.document import advice_document, advice_view  # lazy: as advise

    if fmt is Format.json:
        print_json(out, advice_document(result))
    else:
        show(advice_view(result, terminal=fmt is Format.table), fmt)

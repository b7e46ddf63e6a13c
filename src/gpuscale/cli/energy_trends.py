"""Commands across rounds: energy to train from the power logs, trends between rounds."""

from __future__ import annotations

from typing import Annotated

import typer

from gpuscale.cli import common
from gpuscale.cli.common import Columns, Families, FormatOption, app, load_tables, workloads_of
from gpuscale.cli.options import command
from gpuscale.cli.output import Format, fail_on, say, show
from gpuscale.names import UnknownNameError
from gpuscale.tables.round_requests import RoundSelection


@command(app, "energy")
def energy(
    selection: RoundSelection,
    fmt: FormatOption = Format.table,
    columns_asked: Columns = None,
    explain: common.Explain = False,
) -> None:
    """Energy to train from MLPerf power logs (official rule), per sample and accelerator-hour."""
    from gpuscale.analysis.energy_per_result import energy_view  # lazy: pandas, not for --help

    tables, asked = load_tables(selection), selection.benchmark is not None  # -b: each said
    view = energy_view(tables, workloads_of(tables, selection.benchmark)[0], asked=asked)
    show(view, fmt, columns_asked, nothing=2)  # no row: exit 2, as every table command
    say(view.explained if explain and fmt is Format.table else ())  # how each column is made


@command(app, "trends")
def trends(
    selection: RoundSelection,
    family: Families = None,
    republished: Annotated[
        bool,
        typer.Option(
            "--republished",
            help="Also count results republished in a later round (same runs) there.",
        ),
    ] = False,
    fmt: FormatOption = Format.table,
    columns_asked: Columns = None,
    explain: common.Explain = False,
) -> None:
    """How each benchmark moved across rounds: best times, E' at scale, equilibrium."""
    from gpuscale.analysis.trends import rounds_trends_view  # lazy: pandas, not for --help

    tables, benchmark = load_tables(selection), selection.benchmark
    workloads = workloads_of(tables, benchmark)[0] if benchmark else None
    with fail_on(UnknownNameError, option="--family"):
        view = rounds_trends_view(tables, workloads, family, republished=republished)
    show(view, fmt, columns_asked, nothing=2)
    say(view.explained if explain and fmt is Format.table else ())  # how each column is made

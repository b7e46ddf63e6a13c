"""What every ``gpuscale`` command shares: the Typer app, the options several commands
declare alike (``-f``, ``--columns``, ``--family``), reading rounds and bench files with
a progress bar (what is printed, and how: ``cli.output``)."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated

import typer
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn
from typer.core import TyperOption

from gpuscale.bench.needs import torch_missing
from gpuscale.cli.output import Format, err, fail, fail_on, note, say
from gpuscale.cli.usage import OneLineGroup
from gpuscale.names import UnknownNameError, asked_workloads, choose_workloads, resolve_choice
from gpuscale.quantities import filled
from gpuscale.sources import SourceError
from gpuscale.tables.analysis_request import AnalysisOptions
from gpuscale.tables.command_line import EXPLAIN_HELP, UNREAD
from gpuscale.tables.requests import help_of
from gpuscale.tables.round_requests import ROUND_OPTION, RoundSelection
from gpuscale.version import VERSION_LINE


def _hide_flag_types() -> None:
    """Help without ``<bool>`` after flags (``--decompose``, ``--help``): a flag takes no
    value, so Typer's type column only misleads there."""
    shown = getattr(TyperOption, "display_type_rich", None)
    if shown is None or getattr(shown, "_gpuscale", False):
        return

    def display_type_rich(self, ctx):  # type: ignore[no-untyped-def]
        return None if self.is_flag and self.metavar is None else shown(self, ctx)

    display_type_rich._gpuscale = True  # type: ignore[attr-defined]
    TyperOption.display_type_rich = display_type_rich  # type: ignore[method-assign]


_hide_flag_types()
app = typer.Typer(
    cls=OneLineGroup,  # usage errors in one `error:` line, as the project's own
    add_completion=True,  # --install-completion and --show-completion (bash, zsh, fish, pwsh)
    no_args_is_help=True,
    help="How training scales with the number of accelerators, and how many to use.",
)


def _version(value: bool) -> None:
    if value:
        print(VERSION_LINE)
        raise typer.Exit()


@app.callback()
def _main(
    version: Annotated[
        bool,
        typer.Option("--version", callback=_version, is_eager=True, help="Print the version."),
    ] = False,
) -> None:
    """How training scales with the number of accelerators, and how many to use."""


def _format_of(text: str | Format) -> Format:
    """``-f``'s value as every other choice is read (any case: ``-f JSON``; never an
    abbreviation: ``-f j`` is refused); one the choices do not name ends the command with
    them and the closest (``unknown format 'jsn' (did you mean 'json'?)``)."""
    if isinstance(text, Format):
        return text
    with fail_on(UnknownNameError, option="--format"):
        return Format(resolve_choice(text, [f.value for f in Format], "format"))


# One rule for every machine format and every command.
FormatOption = Annotated[
    Format,
    typer.Option(
        "--format",
        "-f",
        parser=_format_of,
        metavar="[table|csv|json]",
        help="table (the terminal), csv or json: data only on stdout, notes on stderr.",
    ),
]
Explain = Annotated[bool, typer.Option("--explain", help=EXPLAIN_HELP)]
Families = Annotated[
    list[str] | None,
    typer.Option("--family", metavar="<str>", help=help_of(AnalysisOptions, "families")),
]


def require_torch(what: str) -> None:
    """End the command with what to install when PyTorch is missing (``bench.needs``)."""
    if (missing := torch_missing(what)) is not None:
        fail(missing)


@contextmanager
def _reading(shown: bool = True) -> Iterator[Callable[..., None] | None]:
    """A progress callback for reading rounds (a rich bar on a terminal where ``shown``,
    else None; its count names the unit: ``12/40 xz blocks``), and a refusal of the
    reader's ending the command."""
    with fail_on(SourceError, ValueError, options=ROUND_OPTION):
        if not (shown and err.is_terminal):
            yield None
            return
        progress = Progress(
            # a style, not markup: a note printed under the bar renders it without markup
            TextColumn("{task.description}", style="progress.description", markup=False),
            BarColumn(),
            TextColumn("{task.fields[count]}"),
            TimeElapsedColumn(),
            console=err,
            transient=True,
        )
        task = progress.add_task("reading", total=None, count="")

        def update(done: int, total: int, unit: str = "files") -> None:
            count = f"{done:,}{filled('/{:,}', total)} {unit}"
            progress.update(task, completed=done, total=total or None, count=count)

        with progress:
            yield update


def read_paths(paths: list[Path], round_names: list[str] | None = None):
    """Raw rounds read with a progress bar (``gpuscale.mlperf.load.read_paths``); a path
    that is no round ends the command with why (ingest takes no benchmark: no -b hint)."""
    from gpuscale.mlperf.load import read_paths as read  # lazy: the MLPerf readers, pandas
    from gpuscale.tables.views import not_whole

    with _reading() as update:
        tables = read(paths, round_names, progress=update, benchmark_option=None, on_note=note)
    UNREAD.set(UNREAD.get() | set(not_whole(tables.problems)))
    return tables


def load_tables(selection: RoundSelection, study: bool = False, bench: Path | None = None):
    """The selection's tables (``mlperf.load.load_selection``: missing paths and ``bench``
    said at once), read with a progress bar, a fetched round that lies said; a refusal ends it."""
    from gpuscale.mlperf.load import load_selection  # lazy: the MLPerf readers, pandas

    def said(read, sources: dict[str, Path]) -> None:  # type: ignore[no-untyped-def]
        """The problems of the raw rounds read (``sources``: the path of each), said (any
        part of them not read, never unsaid; of the workloads asked only, not others')."""
        from gpuscale.tables.views import not_whole, reading_notes, rejected_notes  # lazy: pandas

        note(*reading_notes(read.problems, sources))  # a warning as it is, a note as one
        note(*rejected_notes(read.scores, asked_workloads(read.scores, selection.benchmark)))
        UNREAD.set(UNREAD.get() | set(not_whole(read.problems)))

    with _reading(selection.asked) as update:
        kept = {"progress": update, "on_read": said, "on_note": note}
        return load_selection(selection, study=study, bench=bench, **kept)


def workloads_of(
    tables, benchmark: Sequence[str] | None, default: str = "all"
) -> tuple[list[str], list[str]]:
    """The workloads ``--benchmark`` names in these tables (``names.choose_workloads``)
    and its notes, each said on stderr (the rounds lacking some); an unknown name ends the
    command."""
    with fail_on(UnknownNameError, option="--benchmark"):
        chosen, notes = choose_workloads(tables.scores, benchmark, default)
    note(*notes)
    return chosen, notes


Columns = Annotated[
    str | None,
    typer.Option(
        "--columns",
        help="Comma-separated columns of the table or of -f csv (any of -f csv's), in order.",
    ),
]


def read_bench(path: Path):
    """A results file as ``gpuscale.bench.results.load_bench`` reads it (table, lines
    skipped), those said on stderr; a file that cannot be used ends the command with why."""
    from gpuscale.bench.results import ResultsError, load_bench  # lazy: numpy, not for --help

    with fail_on(ResultsError):
        loaded = load_bench(path)
    say(loaded.skipped_lines(), stderr=True)
    return loaded

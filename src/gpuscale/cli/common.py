"""What every ``gpuscale`` command shares: the Typer app, the consoles, one-line
errors, reading rounds and bench files."""

from __future__ import annotations

import importlib.util
import os
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, nullcontext
from pathlib import Path
from typing import Annotated, NoReturn

import typer
from rich.console import Console, ConsoleDimensions
from rich.markup import escape
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn
from typer.core import TyperOption

from gpuscale.cli.output import Format, print_frame
from gpuscale.names import (
    UnknownNameError,
    choose_workloads,
    resolve_choice,
    resolve_columns,
)
from gpuscale.sources import SourceError
from gpuscale.tables.analysis_request import AnalysisOptions
from gpuscale.tables.requests import FieldError, help_of
from gpuscale.tables.round_requests import RoundSelection
from gpuscale.tables.views import TableView
from gpuscale.version import __version__


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
    add_completion=True,  # --install-completion and --show-completion (bash, zsh, fish, pwsh)
    no_args_is_help=True,
    help="How training scales with the number of accelerators, and how many to use.",
)


def _version(value: bool) -> None:
    if value:
        print(f"gpuscale {__version__}")
        raise typer.Exit()


@app.callback()
def _main(
    version: Annotated[
        bool,
        typer.Option("--version", callback=_version, is_eager=True, help="Print the version."),
    ] = False,
) -> None:
    """How training scales with the number of accelerators, and how many to use."""


PIPED_WIDTH = 240  # a file or a pager has no width of its own


class _Out(Console):
    """stdout as wide as ``COLUMNS`` says when it is printed to (not when gpuscale was
    imported: rich 13 and 15 read it at different times), else the terminal's, else
    ``PIPED_WIDTH``; sentences are never hard-wrapped (``soft_wrap``), so what a line says
    does not depend on the width or on how wide the numbers before it came out."""

    @property
    def size(self) -> ConsoleDimensions:
        columns = os.environ.get("COLUMNS", "")
        if columns.isdigit() and int(columns) > 0:
            width = int(columns)
        elif self.is_terminal:
            return super().size
        else:
            width = PIPED_WIDTH
        return ConsoleDimensions(width, super().size.height)

    @size.setter
    def size(self, new_size: tuple[int, int]) -> None:
        Console.size.fset(self, new_size)  # type: ignore[attr-defined]


# emoji=False: names and errors are the user's text, never ":smile:" turned into a face
out = _Out(soft_wrap=True, emoji=False)
# Messages are never hard-wrapped (a terminal wraps them itself; a log keeps each whole).
err = Console(stderr=True, soft_wrap=True, emoji=False)


def _format_of(text: str | Format) -> Format:
    """``-f``'s value as every other choice is read (any case, an unambiguous prefix:
    ``-f JSON``, ``-f j``); one the choices do not name ends the command with them and
    the closest (``unknown format 'jsn' (did you mean 'json'?)``)."""
    if isinstance(text, Format):
        return text
    with fail_on(UnknownNameError):
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
Families = Annotated[
    list[str] | None,
    typer.Option("--family", help=help_of(AnalysisOptions, "families")),
]


def note(text: str) -> None:
    """A ``note: ...`` line on stderr, plain text (names in it are never markup)."""
    err.print(f"note: {text}", markup=False, highlight=False)


def require_torch(what: str) -> None:
    """End the command with what to install when PyTorch is missing."""
    try:
        found = importlib.util.find_spec("torch") is not None
    except (ImportError, ValueError):
        found = False
    if not found:
        fail(f"{what} needs PyTorch: pip install 'gpuscale[bench]'")


def fail(message: str, code: int = 2) -> NoReturn:
    """Print a one-line error (no traceback) and exit. The message is plain text: paths
    and names in it are never read as rich markup."""
    err.print(f"[bold red]error:[/] {escape(message)}", highlight=False, markup=True)
    raise typer.Exit(code)


@contextmanager
def fail_on(*errors: type[Exception], options: dict[str, str] | None = None) -> Iterator[None]:
    """End the command with the message of any of ``errors`` raised inside the block (a
    request the library refuses: a bad option value, a name it does not know); a field
    refused (:class:`FieldError`) is named by its option (``options``: field -> option
    where the command spells it otherwise)."""
    try:
        yield
    except errors as exc:
        fail(exc.as_options(options) if isinstance(exc, FieldError) else str(exc))


def _progress_reader():
    """A (progress callback, context manager) pair: a rich bar on a terminal, else silent.
    The count names its unit (``1,204/3,310 result files``, ``12/40 xz blocks``,
    ``3,100 files`` while a streamed archive's total is unknown)."""
    if not err.is_terminal:
        return None, nullcontext()
    progress = Progress(
        "[progress.description]{task.description}",
        BarColumn(),
        TextColumn("{task.fields[count]}"),
        TimeElapsedColumn(),
        console=err,
        transient=True,
    )
    task = progress.add_task("reading", total=None, count="")

    def update(done: int, total: int, unit: str = "files") -> None:
        count = f"{done:,}/{total:,} {unit}" if total else f"{done:,} {unit}"
        progress.update(task, completed=done, total=total or None, count=count)

    return update, progress


def read_paths(paths: list[Path], round_names: list[str] | None = None):
    """Raw rounds read with a progress bar (``gpuscale.mlperf.load.read_paths``); a path
    that is no round ends the command with why (ingest takes no benchmark: no -b hint)."""
    from gpuscale.mlperf.load import read_paths as read  # lazy: the MLPerf readers, pandas

    update, context = _progress_reader()
    with context, fail_on(SourceError, ValueError):
        return read(paths, round_names, progress=update, benchmark_option=None)


def load_tables(selection: RoundSelection, study: bool = False):
    """Tables of the selection's raw paths (read now, with a progress bar) and bundled
    rounds (``gpuscale.mlperf.load.load_rounds``; given neither, every bundled round, or
    with ``study`` the study's, ``STUDY_ROUNDS``); a request it refuses ends the command."""
    from gpuscale.mlperf.load import STUDY_ROUNDS, load_rounds  # lazy: MLPerf readers, pandas

    paths, names = selection.paths, selection.round_names
    update, context = _progress_reader() if paths else (None, nullcontext())
    with context, fail_on(SourceError, ValueError):
        default = STUDY_ROUNDS if study else None
        return load_rounds(paths, names, default=default, progress=update)


def workloads_of(
    tables, benchmark: Sequence[str] | None, default: str = "all"
) -> tuple[list[str], list[str]]:
    """The workloads ``--benchmark`` names in these tables (``names.choose_workloads``)
    and its notes, each said on stderr (the rounds lacking some); an unknown name ends the
    command."""
    with fail_on(UnknownNameError):
        chosen, notes = choose_workloads(tables.scores, benchmark, default)
    for line in notes:
        note(line)
    return chosen, notes


Columns = Annotated[
    str | None,
    typer.Option(
        "--columns",
        help="Comma-separated columns of the terminal table (any of -f csv's), in order.",
    ),
]


def columns_of(asked: str | None, default: list[str], valid: list[str]) -> list[str]:
    """``--columns`` (``names.resolve_columns``); an unknown name ends the command."""
    with fail_on(UnknownNameError):
        return resolve_columns(asked, default, valid)


def show(view: TableView, fmt: Format, columns_asked: str | None = None) -> None:
    """A library's :class:`~gpuscale.tables.views.TableView`: its notes on stderr, then
    the table (``--columns`` where asked, else its own; CSV and JSON: every column), its
    sentences under a terminal's; an empty view says why (CSV and JSON: an empty document)."""
    for line in view.notes:
        note(line)
    if view.empty:
        err.print(view.empty, markup=False, highlight=False)
        if fmt is not Format.table:
            print_frame(out, view.frame.reindex(columns=list(view.shown)), fmt)
    else:
        columns = columns_of(columns_asked, list(view.shown), list(view.frame.columns))
        print_frame(
            out,
            view.frame[columns],
            fmt,
            title=view.title,
            drop_order=[] if columns_asked else view.drop_order,
            every=view.every,
            formats=view.formats,
        )
    if fmt is Format.table:
        say(view.said)


def say(lines, *, stderr: bool = False) -> None:  # type: ignore[no-untyped-def]
    """Sentences on stdout (or stderr), each as plain text (names in it are never markup)."""
    for line in lines:
        (err if stderr else out).print(line, markup=False, highlight=False)


def read_bench(path: Path):
    """The bench table of a results file (``gpuscale.bench.results.load_bench``), the
    lines skipped said on stderr; a file that cannot be used ends the command with why."""
    from gpuscale.bench.results import ResultsError, load_bench  # lazy: numpy, not for --help

    with fail_on(ResultsError):
        loaded = load_bench(path)
    say(loaded.skipped_lines(), stderr=True)
    return loaded.table

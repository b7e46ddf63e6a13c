"""What the CLI prints, and the only place it is printed from: the consoles (stdout as
wide as ``COLUMNS`` says, stderr), notes and one-line errors, a library's
:class:`~gpuscale.tables.views.TableView` drawn (:func:`show`), and tables for the
terminal (rich), CSV or JSON."""

from __future__ import annotations

import json
import os
import textwrap
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from enum import Enum
from typing import TYPE_CHECKING, NoReturn

import typer
from rich.console import Console, ConsoleDimensions
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from gpuscale.names import UnknownNameError, resolve_columns
from gpuscale.quantities import column_label
from gpuscale.report import text_table
from gpuscale.report.text_table import cells_text, columns_that_fit, fold, numeric_cells
from gpuscale.sources.signals import reader_gone
from gpuscale.tables.requests import FieldError
from gpuscale.tables.views import TableView, csv_cell, jsonable, records_csv

if TYPE_CHECKING:  # pandas is imported when a table is printed: the CLI starts faster
    import pandas as pd


class Format(str, Enum):
    table = "table"
    csv = "csv"
    json = "json"


PIPED_WIDTH = 240  # a file or a pager has no width of its own


# Any console's reader may go (``2>&1 | head -3``, ``--help | head -1``: typer's own help
# console too): what is left is dropped, the exit status the command's (``reader_gone``)
Console.on_broken_pipe = reader_gone  # type: ignore[method-assign]


class _Out(Console):
    """stdout as wide as ``COLUMNS`` says when it is printed to (not when gpuscale was
    imported: rich 13 and 15 read it at different times), else the terminal's, else
    ``PIPED_WIDTH``; sentences are never hard-wrapped (``soft_wrap``), so what a line says
    does not depend on the width or on how wide the numbers before it came out."""

    @property
    def size(self) -> ConsoleDimensions:
        if (width := _columns()) is None and self.is_terminal:
            return super().size
        return ConsoleDimensions(width or PIPED_WIDTH, super().size.height)

    @size.setter
    def size(self, new_size: tuple[int, int]) -> None:
        Console.size.fset(self, new_size)  # type: ignore[attr-defined]


def _write(console: Console, text: str) -> None:
    """JSON and CSV as they are, past rich (no wrapping, no markup), a reader gone alike."""
    try:
        console.file.write(text)
        console.file.flush()
    except BrokenPipeError:
        console.on_broken_pipe()


# the running command's options (set as it is parsed): what it prints names no other one
OPTIONS: ContextVar[frozenset[str]] = ContextVar("OPTIONS", default=frozenset())
# emoji=False: names and errors are the user's text, never ":smile:" turned into a face
out = _Out(soft_wrap=True, emoji=False)
# Messages are never hard-wrapped (a terminal wraps them itself; a log keeps each whole).
err = Console(stderr=True, soft_wrap=True, emoji=False)


def _columns() -> int | None:
    """The width ``COLUMNS`` gives, read when printing (None: none, or not a width)."""
    columns = os.environ.get("COLUMNS", "")
    return int(columns) if columns.isdigit() and int(columns) > 0 else None


def note(*texts: str) -> None:
    """A ``note: ...`` line on stderr for each of ``texts`` (a ``WARNING: ...`` or a
    ``warning: ...`` as itself), plain text (names in it are never markup), folded at a
    terminal's width (:func:`say`)."""
    said = [t if t.startswith(("WARNING: ", "warning: ")) else f"note: {t}" for t in texts]
    say(said, stderr=True)


def fail(message: str, code: int = 2) -> NoReturn:
    """Print a one-line error (no traceback) and exit. The message is plain text: paths
    and names in it are never read as rich markup."""
    err.print(f"[bold red]error:[/] {escape(message)}", highlight=False, markup=True)
    raise typer.Exit(code)


@contextmanager
def fail_on(
    *errors: type[Exception], options: dict[str, str] | None = None, option: str | None = None
) -> Iterator[None]:
    """End the command with the message of any of ``errors`` raised inside the block (a
    request the library refuses: a bad option value, a name it does not know); a field
    refused (:class:`FieldError`) is named by its option (``options``: field -> option
    where the command spells it otherwise), a name that is none by ``option``, the one
    the block reads (``--benchmark bret: unknown benchmark (did you mean 'bert'?)``)."""
    try:
        yield
    except errors as exc:
        if isinstance(exc, FieldError):
            fail(exc.as_options(options))
        fail(exc.as_option(option) if option and isinstance(exc, UnknownNameError) else str(exc))


def print_json(console: Console, document: object) -> None:
    """A JSON document (two-space indent, plain values: :func:`jsonable`) on the console's
    file, as is: no markup, no wrapping."""
    _write(console, json.dumps(jsonable(document), indent=2) + "\n")


def print_frame(
    console: Console,
    frame: pd.DataFrame,
    fmt: Format,
    *,
    title: str = "",
    formats: dict[str, str] | None = None,
    drop_order: Sequence[str] | None = None,
    every: str = "",
    rest: str = "",
) -> None:
    """Print a DataFrame as a rich table, CSV or a JSON list of records. ``formats``:
    a format spec per column for the terminal table (``{"busbw (GB/s)": ".2f"}``, as
    nccl-tests prints it); other numbers get four significant digits.

    A table wider than the terminal drops its lowest-priority columns first
    (``drop_order``, the caller's priorities) and says which, so it stays a table; a
    table that cannot fit even then is printed as records. ``every``: how to get the
    columns the caller left out of ``frame`` (said with the dropped ones); ``rest``: where
    a short answer's dropped columns are, said in place of ``--columns`` and ``-f csv``."""
    if fmt is Format.json:
        print_json(console, frame.to_dict("records"))
        return
    if fmt is Format.csv:  # the table's tuple cells: as its numbers (``text_table.cell_text``)
        _write(console, frame.map(csv_cell).to_csv(index=False))
        return
    from pandas.api.types import is_numeric_dtype  # lazy: pandas, not needed for --help

    numeric = [is_numeric_dtype(frame[c]) or numeric_cells(frame[c], empty=False) for c in frame]
    values = [list(row) for row in frame.itertuples(index=False)]
    columns = [str(c) for c in frame.columns]
    _print_cells(console, columns, numeric, values, title, formats, drop_order, every, rest)


def print_records(
    console: Console,
    records: list[dict[str, object]],
    fmt: Format,
    *,
    title: str = "",
    formats: dict[str, str] | None = None,
    drop_order: Sequence[str] | None = None,
    rest: str = "",
) -> None:
    """:func:`print_frame` for plain records (dicts with the same keys, in column order),
    without pandas: CSV (NaN and None empty, as pandas writes them), JSON records, or the
    rich table (a column is numeric when every value is a number, not a flag)."""
    columns = list(next(iter(records), []))
    if fmt is Format.csv:
        _write(console, records_csv(records))
        return
    if fmt is Format.json:
        print_json(console, records)
        return
    numeric = [numeric_cells([r[c] for r in records]) for c in columns]
    values = [[r[c] for c in columns] for r in records]
    _print_cells(console, columns, numeric, values, title, formats, drop_order, rest=rest)


def _print_cells(
    console: Console,
    columns: list[str],
    numeric: list[bool],
    values: list[list[object]],
    title: str,
    formats: dict[str, str] | None,
    drop_order: Sequence[str] | None,
    every: str = "",
    rest: str = "",
) -> None:
    """The terminal table of :func:`print_frame` and :func:`print_records` (a short
    answer's, ``rest`` given: its title and dropped columns folded at the width)."""
    soft_wrap = None  # a log keeps the line on dropped columns whole
    if rest or console.is_terminal:  # folded on a terminal and in a short answer
        title, soft_wrap = textwrap.fill(title, console.width), False
    headers = [column_label(c) for c in columns]  # wraps at the spaces; units as SI's
    specs = [(formats or {}).get(c) for c in columns]
    rows = cells_text(values, specs, columns)
    keep, widths, dropped = columns_that_fit(
        console.width, columns, headers, rows, numeric, drop_order
    )
    shown_headers = [headers[i] for i in keep]
    shown_rows = [[r[i] for i in keep] for r in rows]
    if vertical := widths is None and len(keep) > 2:
        _print_vertical(console, shown_headers, shown_rows, title)
    else:
        _print_table(console, title, shown_headers, shown_rows, [numeric[i] for i in keep], widths)
    if said := text_table.left_out_note(dropped, rest, every, OPTIONS.get(), vertical=vertical):
        console.print(said, markup=False, highlight=False, style="dim", soft_wrap=soft_wrap)


def _print_table(
    console: Console,
    title: str,
    headers: list[str],
    rows: list[list[str]],
    numeric: list[bool],
    widths: list[int] | None,
) -> None:
    """A rich table: numbers right-aligned and never split across lines, text folded;
    cells are Text, not markup, so rich markup in untrusted names is shown as typed."""
    table = Table(title=escape(title) or None, show_lines=False, header_style="bold")
    for k, header in enumerate(headers):
        table.add_column(
            Text(header, overflow="fold"),  # headers wrap at their spaces
            justify="right" if numeric[k] else "left",
            overflow="fold",
            width=widths[k] if widths else None,
        )
    for row in rows:
        table.add_row(
            *(Text(v, no_wrap=True) if n else Text(v) for v, n in zip(row, numeric, strict=True))
        )
    console.print(table)


def _print_vertical(
    console: Console, headers: list[str], rows: list[list[str]], title: str
) -> None:
    """One block per row, ``column  value`` lines: for tables wider than the terminal."""
    if title:
        console.print(escape(title), style="bold", highlight=False)
    key_width = max(len(h) for h in headers)
    for index, row in enumerate(rows):
        if index:
            console.print()
        grid = Table.grid(padding=(0, 2))
        grid.add_column(style="bold", no_wrap=True, min_width=key_width)
        grid.add_column(overflow="fold")
        for header, value in zip(headers, row, strict=True):
            grid.add_row(escape(header), escape(value))
        console.print(grid)


def show(
    view: TableView, fmt: Format, columns: str | None = None, *, rest: str = "", nothing: int = 0
) -> None:
    """A library's :class:`~gpuscale.tables.views.TableView`: its notes on stderr, then
    the table (``columns`` where asked, else its own; CSV, JSON: every one), its headline
    above and sentences under it (CSV and JSON: on stderr, stdout one document); an empty
    view says why and exits ``nothing`` where given, stdout then empty as the table's (CSV's
    header, JSON's ``[]``: with an exit 0 only).
    JSON of a view with a ``document``: that alone. ``rest``: the view is a short answer
    (its lines folded at the terminal's width) and this says where the rest is."""
    if fmt is Format.json and view.document is not None:
        print_json(out, view.document)
        return
    # the columns asked (names.resolve_columns), checked before any note is said; else the
    # terminal's, or CSV's and JSON's every one (lossless)
    default = list(view.shown) if fmt is Format.table else view.every_column
    with fail_on(UnknownNameError, option="--columns"):
        shown = resolve_columns(columns, default, list(view.frame.columns), view.renamed)
    note(*view.notes)
    wrap = bool(rest) or None  # a short answer's lines folded at the terminal's width
    document = fmt is not Format.table  # CSV, JSON: stdout one document, the words on stderr
    if not view.empty:  # the answer first, then the detail
        say(view.headline, wrap=wrap, stderr=document)
    if not view.empty or (document and not nothing):  # an empty CSV: the header; JSON: []
        print_frame(
            out,
            view.frame[shown],
            fmt,
            title=view.title,
            drop_order=[] if columns else view.drop_order,
            every=view.every,
            formats=view.formats,
            rest=rest,
        )
    if view.empty:
        fail(view.empty, nothing) if nothing else say([view.empty], stderr=True)
    say(view.said_apart if document else view.said, wrap=wrap, stderr=document)  # each whole


def say(lines: Iterable[str], *, stderr: bool = False, wrap: bool | None = None) -> None:
    """Sentences on stdout (or stderr), each as plain text (names in it are never markup),
    folded at stdout's width (``report.text_table.fold``) on a terminal (a log keeps each
    sentence whole: it is grepped by sentence), or always with ``wrap`` (a short answer's
    lines, none wider than the output), or never with ``wrap=False``."""
    folded = out.is_terminal if wrap is None else wrap
    for line in lines:
        (err if stderr else out).print(
            fold(line, out.width) if folded and line else line, markup=False, highlight=False
        )

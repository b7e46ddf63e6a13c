"""A text table laid out for a terminal of a given width: each cell's text, the widths of
the columns, and which columns to leave out when even their least widths do not fit.
Pure text in, numbers out; the CLI draws the table (``gpuscale.cli.output``)."""

from __future__ import annotations

import math
import numbers
import textwrap
from collections.abc import Container, Iterable, Mapping, Sequence

from gpuscale.quantities import (
    TABLE_DIGITS,
    column_label,
    filled,
    measure_column,
    number,
    share_text,
)


class LeftOut(list[str]):
    """The columns a terminal table leaves out: those dropped for width, in order (the
    list); ``empty``: those of ``drop_order`` with no value in any row, left out first
    (width or not: a column of blanks tells nothing and costs its header's width)."""

    def __init__(self, width: Iterable[str] = (), empty: Iterable[str] = ()) -> None:
        super().__init__(width)
        self.empty = list(empty)


def columns_that_fit(
    width: int,
    columns: list[str],
    headers: list[str],
    rows: list[list[str]],
    numeric: list[bool],
    drop_order: Sequence[str] | None,
) -> tuple[list[int], list[int] | None, LeftOut]:
    """The columns kept (indices), their widths (None when even their least widths are too
    wide) and the names left out (:class:`LeftOut`): a column of ``drop_order`` empty in
    every row first, then the lowest-priority columns of ``drop_order``, one at a time,
    until the table fits ``width`` (or two columns are left). A table that fits no width
    even so is shown a row at a time, a line per column (more than two columns): width
    drops nothing there, every column with a value kept. A column asked for by name
    (``--columns``: no ``drop_order``) is shown, empty or not; CSV and JSON keep every one."""
    least = [least_width(headers[i], [r[i] for r in rows], numeric[i]) for i in range(len(headers))]
    order = [str(c) for c in drop_order or ()]
    blank = [
        c for i, c in enumerate(columns) if c in order and rows and not any(r[i] for r in rows)
    ]
    keep = [i for i, c in enumerate(columns) if c not in blank]
    dropped = LeftOut(empty=blank)
    while True:
        widths = fit_widths(
            [headers[i] for i in keep],
            [[r[i] for i in keep] for r in rows],
            [least[i] for i in keep],
            width - 3 * len(keep) - 1,
        )
        left = [c for c in order if c in columns and columns.index(c) in keep]
        if widths is not None:
            return keep, widths, dropped
        if len(keep) <= 2 or not left:  # fits no width: a line per column, all of them
            if len(columns) > 2:
                return (
                    [i for i, c in enumerate(columns) if c not in blank],
                    None,
                    LeftOut([], blank),
                )
            return keep, None, dropped
        keep.remove(columns.index(left[0]))
        dropped.append(left[0])


# what a left-out note says of each way to the columns it leaves out, where the command
# has the option (no command is told of an option it lacks: advise has no --columns)
WAYS = (("--columns", "--columns to choose"), ("-f", "-f csv prints every column"))


def left_out_note(
    dropped: list[str], rest: str, every: str, options: Container[str], *, vertical: bool
) -> str:
    """What a terminal table says under it of the columns it leaves out: those dropped for
    width, those empty in every row (``dropped.empty``, a :class:`LeftOut`), and where
    they are (``rest``, else each of :data:`WAYS` whose option is among the command's
    ``options``, then ``every``: where the columns beyond the table's are); a table shown
    a line per column, which drops none for width, says ``every`` alone; "" where nothing
    is left out."""
    empty = getattr(dropped, "empty", [])
    if dropped or empty:
        why = [
            f"{reason}: {', '.join(column_label(c) for c in names)}"
            for reason, names in (("for width", dropped), ("empty in every row", empty))
            if names
        ]
        ways = ", ".join(way for option, way in WAYS if option in options)
        how = rest or "; ".join(filter(None, (ways, every)))
        return f"(not shown, {'; '.join(why)}{filled('; {}', how)})"
    return f"({every})" if vertical and every else ""


def cell_text(value: object, spec: str | None, *, measure: bool = False) -> str:
    """One cell as text: the column's format spec where it has one (significant figures,
    ``g``, with their trailing zeros: 1.90 beside 3.59), else ``number`` to
    :data:`TABLE_DIGITS` significant figures, trailing zeros kept (every terminal table's
    one rule: 3.360 beside 0.3928 and 30.63; JSON and CSV keep the full number). A share
    (a ``%`` spec) that is not 0 is never shown as one: below the spec's last place it
    gets the places of its first figure (``.0%`` of 0.0026: 0.3%, not 0%). A tuple (every
    repeat's samples/s, a row's kinds): its items so, "; "-separated (``843.9; 1,504``).
    ``measure``: the column holds fractions (:func:`holds_fractions`), so a whole float in
    it is a measure's figures, 2.000 beside 3.500, not the count 2."""
    if isinstance(value, tuple):
        return "; ".join(cell_text(item, spec, measure=measure) for item in value)
    if spec is None or value is None or (isinstance(value, float) and value != value):
        return number(value, digits=TABLE_DIGITS, zeros=True, measure=measure)
    if spec.endswith("g") and "#" not in spec:  # a column's own figures, zeros kept alike
        return format(value, f"#{spec}").rstrip(".")
    return share_text(value, spec) if spec.endswith("%") else format(value, spec)


def holds_fractions(values: Iterable[object]) -> bool:
    """Whether a column holds a finite float with a fraction (or a tuple of them): its
    whole floats are then measures (:func:`cell_text`'s ``measure``)."""
    items = (i for v in values for i in (v if isinstance(v, tuple) else (v,)))
    reals = (
        float(i)
        for i in items
        if isinstance(i, numbers.Real) and not isinstance(i, numbers.Integral)
    )
    return any(math.isfinite(r) and not r.is_integer() for r in reals)


def cells_text(
    rows: list[list[object]], specs: list[str | None], columns: Sequence[str] = ()
) -> list[list[str]]:
    """A table's rows as text (:func:`cell_text`), a column's whole floats as measures
    where it holds fractions (``fixed excess ms``: 0, 2.000, 3.000, 3.500) or its name
    says a measure (``columns``, :func:`~gpuscale.quantities.measure_column`: a
    ``convergence factor`` of 1.000 at every count beside efficiencies)."""
    named = [measure_column(c) for c in columns] or [False] * len(specs)
    measures = [named[k] or holds_fractions(row[k] for row in rows) for k in range(len(specs))]
    return [
        [cell_text(v, spec, measure=m) for v, spec, m in zip(row, specs, measures, strict=True)]
        for row in rows
    ]


def columns_text(
    records: Sequence[Mapping[str, object]], columns: Sequence[str]
) -> list[dict[str, str]]:
    """Each record's ``columns`` as a terminal table writes them (:func:`cells_text`:
    every number of a column to the same significant figures, trailing zeros kept, 33.98
    beside 0.6360): the report's tables read as the terminal's, each value unchanged."""
    rows = [[record[c] for c in columns] for record in records]
    texts = cells_text(rows, [None] * len(columns), columns)
    return [dict(zip(columns, row, strict=True)) for row in texts]


def least_width(header: str, cells: list[str], is_number: bool) -> int:
    """The narrowest a column may be: its longest number whole, else its longest word
    (capped: long names wrap), and the header's longest word."""
    words = [len(w) for w in header.split()]
    if is_number:
        return max([*words, *(len(c) for c in cells), 1])
    longest = max((len(w) for c in cells for w in c.split()), default=1)
    return max([*words, min(longest, 16), 1])


def fit_widths(
    headers: list[str], rows: list[list[str]], least: list[int], budget: int
) -> list[int] | None:
    """Column widths within ``budget`` characters: each column's natural width, the
    widest shrunk first, none below its least width; None when even that is too wide."""
    widths = [max([len(h), *(len(r[i]) for r in rows)]) for i, h in enumerate(headers)]
    if sum(widths) <= budget:
        return widths
    if sum(least) > budget:
        return None
    excess = sum(widths) - budget
    while excess > 0:
        k = max(range(len(widths)), key=lambda i: widths[i] - least[i])
        step = min(excess, widths[k] - least[k], max(1, (widths[k] - least[k]) // 2))
        widths[k] -= step
        excess -= step
    return widths


def numeric_cells(values: Iterable[object], *, empty: bool = True) -> bool:
    """Whether a column's cells are numbers, right-aligned as numbers are: every cell with
    a value (None and NaN have none) a number, not a flag, or ``none`` (a criterion that
    picks no count); ``empty``: what a column with no value is."""
    found = [v for v in values if v is not None and v == v]  # NaN != NaN: no value
    count = [v for v in found if isinstance(v, numbers.Number) and not isinstance(v, bool)]
    if not found:
        return empty
    return bool(count) and len(count) + sum(v == "none" for v in found) == len(found)


def fold(line: str, width: int) -> str:
    """``line`` folded at ``width`` at its spaces (never inside a word, a path or a
    hyphenated name), its later lines indented two spaces; each of its own lines alike."""
    return "\n".join(
        textwrap.fill(
            part, width, subsequent_indent="  ", break_long_words=False, break_on_hyphens=False
        )
        or part
        for part in line.split("\n")
    )

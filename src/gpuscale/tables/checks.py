"""The tables the public functions are given, checked where they are given: the right type
(a pandas DataFrame, a RoundTables), the columns each kind of table needs (from the schema
here: ``SCORES_COLUMNS``, ``SCALING_COLUMNS``) and no time to train or accelerator count
that cannot be true.

A wrong type is a TypeError naming the parameter and the type expected; a missing column
or an impossible time a ValueError saying which and how many. One line each.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from gpuscale.quantities import counted, joined, noun_for
from gpuscale.tables.analysis import SCALING_COLUMNS, SYSTEM_COLUMNS
from gpuscale.tables.rounds import SCORES_COLUMNS, RoundTables

if TYPE_CHECKING:
    import pandas as pd

# Columns of the scores schema added after tables were first written: the analysis fills
# them in where an older table lacks them (``analysis.metrics``), so none is required.
FILLED_IN = ("convergence_unit", "samples_to_converge_flag", "score_reason")
# What the scaling table adds to a scores table, and an equilibrium reads of it.
SCALING_MEASURES = ("speedup", "efficiency", "normalized_efficiency", "accelerator_hours")
# Each measure as a refusal names it ("... : a speedup cannot be").
_MEASURED = ("a speedup", "an efficiency", "an E'", "a count of accelerator-hours")

# The columns each kind of table must have: a scores table those a scaling table carries
# over from it; a scaling table the systems' names and counts and the measures.
REQUIRED_COLUMNS: dict[str, tuple[str, ...]] = {
    "scores": tuple(c for c in SCORES_COLUMNS if c in SCALING_COLUMNS and c not in FILLED_IN),
    "scaling": ("workload", *SYSTEM_COLUMNS, *SCALING_MEASURES),
}
# Where each kind comes from, as the messages say it.
_MADE_BY = {
    "scores": "e.g. load_round('v4.1').scores",
    "scaling": "scaling_table(scores, workload)'s output",
    "bench": "e.g. gpuscale.bench.results.load_bench(path).table",
}


def check_frame(frame: object, kind: str, parameter: str) -> pd.DataFrame:
    """``frame`` (given as ``parameter``), or TypeError unless it is a pandas DataFrame,
    naming where a ``kind`` table comes from; its columns are not checked."""
    import pandas as pd  # lazy: the tables package is imported by the CLI at start

    if not isinstance(frame, pd.DataFrame):
        raise TypeError(
            f"{parameter} must be a pandas DataFrame ({_MADE_BY[kind]}), not {type(frame).__name__}"
        )
    return frame


def check_text(value: object, parameter: str, *, optional: bool = False, like: str = "") -> None:
    """TypeError unless ``value`` (given as ``parameter``) is a str, or None where
    ``optional``: "round_name must be a str like 'v4.1' or None, not int (5)", ``like``
    giving an example or the values allowed."""
    if isinstance(value, str) or (optional and value is None):
        return
    wanted = " ".join(filter(None, ("a str", like, "or None" if optional else "")))
    shown = f" ({value!r:.60})" if isinstance(value, int | float) else ""
    raise TypeError(f"{parameter} must be {wanted}, not {type(value).__name__}{shown}")


def check_families(families: object) -> tuple[str, ...] | None:
    """``families`` (a filter: one family as text, a list or tuple of them, or None) as a
    tuple, or None where none is given; TypeError naming ``families`` otherwise."""
    if families is None or isinstance(families, str):
        return None if families is None else (families,)
    if isinstance(families, list | tuple) and all(isinstance(f, str) for f in families):
        return tuple(families) or None
    raise TypeError(f"families must be a str, a list of str or None, not {families!r:.60}")


def check_table(frame: object, kind: str, parameter: str) -> None:
    """Raise unless ``frame`` (given as ``parameter``) is a ``kind`` table (``scores`` or
    ``scaling``): TypeError when it is no DataFrame; ValueError when it lacks a column
    :data:`REQUIRED_COLUMNS` names (a scores table given for a scaling table is said to
    be one) or has a ``time_to_train_min`` that is not a positive finite number (missing
    is allowed: not scored) or an ``accelerators`` that is no whole count
    (:func:`check_counts`); a scaling table's :data:`SCALING_MEASURES` likewise each a
    positive finite number or missing."""
    frame = check_frame(frame, kind, parameter)
    check_columns(frame, REQUIRED_COLUMNS[kind], kind, parameter)
    check_times(frame, parameter)
    check_counts(frame, parameter)
    if kind == "scaling":  # text ("1.07") failed deep inside pandas' arithmetic
        for column, noun in zip(SCALING_MEASURES, _MEASURED, strict=True):
            _check_numbers(frame, column, parameter, _positive, "a positive finite number", noun)


def check_columns(frame: pd.DataFrame, required: Sequence[str], kind: str, parameter: str) -> None:
    """ValueError naming each of ``required`` that ``frame`` (a ``kind`` table, given as
    ``parameter``) lacks, and where such a table comes from; a scores table given for a
    scaling table is said to be one."""
    missing = [c for c in required if c not in frame.columns]
    if not missing:
        return
    # a table of another kind lacks most: the first few named, the rest counted
    columns = (
        joined(missing)
        if len(missing) <= 6
        else f"{', '.join(missing[:5])} and {len(missing) - 5} more"
    )
    if kind == "scaling" and all(c in frame for c in REQUIRED_COLUMNS["scores"]):
        raise ValueError(
            f"{parameter} is a scores table, not a scaling table (no {columns}): "
            f"pass {_MADE_BY['scaling']}"
        )
    raise ValueError(
        f"{parameter} lacks the {kind} table's {noun_for(len(missing), 'column')} {columns} "
        f"({_MADE_BY[kind]} has them)"
    )


def check_times(frame: pd.DataFrame, parameter: str) -> None:
    """ValueError when some ``time_to_train_min`` of ``frame`` is not a positive finite
    number: how many rows, and the first values. gpuscale's own reader never scores such
    a run (it is not counted, with the reason in ``problems``), so a table holding one was
    made or edited by hand: refused, not silently dropped."""
    _check_numbers(
        frame,
        "time_to_train_min",
        parameter,
        lambda t: (t > 0) & (t < math.inf),
        "a positive finite number",
        "a time to train",
    )


def check_counts(frame: pd.DataFrame, parameter: str) -> None:
    """ValueError when some ``accelerators`` of ``frame`` is text, or a number that is no
    whole count of at least 0 (missing and 0 are allowed: a system without an accelerator
    count, which the analysis leaves out, as it does a CPU-only one): how many rows, and
    the first values. gpuscale's reader never writes such a count, and the analysis
    compares with ``>`` and divides by it, so one is refused here, not dropped unsaid."""
    _check_numbers(
        frame,
        "accelerators",
        parameter,
        lambda n: (n >= 0) & (n < math.inf) & (n == n.round()),
        "a whole count of at least 0",
        "an accelerator count",
    )


def check_bench_numbers(frame: pd.DataFrame, parameter: str = "bench") -> None:
    """ValueError where a run recorded ok in a bench table (``bench_table``'s rows, as
    ``gpuscale.advise`` takes them) has a rate or a step time that is text or no positive
    finite number, or an accelerator count that is no whole number of at least 1: how
    many rows, and the first values. gpuscale's reader skips such a record (saying why),
    so a table holding one was edited; the advice divides by each and takes its log, so
    it is refused here, not failed deep inside. A column the table lacks is left to the
    advice's own refusal, which names them all."""
    ok = frame[(frame["status"] == "ok").to_numpy(bool)] if "status" in frame else frame
    # A missing rate, step or count is refused too: the reader skips an ok record lacking
    # one, and the advice takes each count as an integer.
    for column, noun in (("samples_per_s", "a throughput"), ("step_ms_mean", "a step time")):
        if column in ok:
            _check_numbers(
                ok, column, parameter, _positive, "a positive finite number", noun, missing_ok=False
            )
    if "accelerators" in ok:
        _check_numbers(
            ok,
            "accelerators",
            parameter,
            lambda n: (n >= 1) & (n < math.inf) & (n == n.round()),
            "a whole count of at least 1",
            "an accelerator count",
            missing_ok=False,
        )


def _positive(values: pd.Series) -> pd.Series:
    return (values > 0) & (values < math.inf)


def _check_numbers(
    frame: pd.DataFrame,
    column: str,
    parameter: str,
    fits: Callable[[pd.Series], pd.Series],
    must_be: str,
    noun: str,
    missing_ok: bool = True,
) -> None:
    """ValueError where some value of ``column`` is text (numbers as text, ``"5.39"``:
    arithmetic on them fails deep inside) or a number ``fits`` refuses, saying how many
    rows and the first three; missing values pass where ``missing_ok``."""
    import numpy as np  # lazy: as pandas
    import pandas as pd  # lazy: as above

    values = frame[column]
    text = values[values.map(lambda v: isinstance(v, str | bytes))].tolist()
    if text:
        raise ValueError(
            f"{parameter} has {counted(len(text), 'row')} whose {column} is text "
            f"({_first(text)}), not a number: convert the column (pd.to_numeric)"
        )
    # a bool is no count nor measure, though pandas reads True as 1 (sizes.number_or_none)
    flags = values[values.map(lambda v: isinstance(v, bool | np.bool_))].tolist()
    if flags:
        raise ValueError(
            f"{parameter} has {counted(len(flags), 'row')} whose {column} is a bool "
            f"({_first(flags)}), not a number ({noun}): drop or fix those rows"
        )
    numbers = pd.to_numeric(values, errors="coerce").astype(float)
    bad = values[(values.notna() | (not missing_ok)) & ~fits(numbers)].tolist()
    if bad:
        raise ValueError(
            f"{parameter} has {counted(len(bad), 'row')} whose {column} is not {must_be} "
            f"({_first(bad)}): {noun} cannot be; drop or fix those rows"
        )


def _first(values: list[object]) -> str:
    return ", ".join(map(repr, values[:3])) + (", ..." if len(values) > 3 else "")


def check_round_tables(tables: object, parameter: str = "tables") -> None:
    """TypeError unless ``tables`` is a RoundTables (``load_round``, ``read_round``); its
    scores checked as :func:`check_table` checks a scores table."""
    if not isinstance(tables, RoundTables):
        raise TypeError(
            f"{parameter} must be a gpuscale.tables.RoundTables (load_round('v4.1') or "
            f"read_round(path)), not {type(tables).__name__}"
        )
    check_table(tables.scores, "scores", f"{parameter}.scores")

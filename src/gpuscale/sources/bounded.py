"""Reading a user's file within a stated size: a results file, a saved topology, a sweep.

A path may name anything: a file of any size, a pipe, ``/dev/zero``. These readers stop at
the stated limit and say so (:class:`TooLarge`, a ``ValueError``), so memory and time are
bounded by the limit, never by the input. A JSON-lines file (bench results, collectives
sweeps) is read by :func:`json_lines`, its nesting bounded too (``tables.json_depth``).
"""

from __future__ import annotations

import codecs
import json
from collections.abc import Iterator, Sequence
from pathlib import Path

from gpuscale.quantities import counted
from gpuscale.tables import json_depth
from gpuscale.tables.commands import quoted_path
from gpuscale.tables.json_depth import JSON


class TooLarge(ValueError):
    """A file past its stated limit; ``lines`` complete lines were read before it."""

    def __init__(self, message: str, lines: int = 0) -> None:
        super().__init__(message)
        self.lines = lines


def read_at_most(path: Path, limit_bytes: int, what: str) -> bytes:
    """The bytes of ``path``; :class:`TooLarge` when it holds more than ``limit_bytes``
    (``what`` names it in the message); ``OSError`` when it cannot be read."""
    with path.open("rb") as handle:
        data = handle.read(limit_bytes + 1)
    if len(data) > limit_bytes:
        raise TooLarge(f"{quoted_path(path)} holds more than {limit_bytes:,} bytes: not {what}")
    return data


def saved_text(data: bytes) -> str:
    """The text of bytes a person saved: UTF-16 where they begin with its byte-order mark
    (Windows PowerShell 5's ``>``, as ``ssh node nvidia-smi topo -m > topo.txt`` writes
    it), else UTF-8, a leading byte-order mark dropped (Notepad's); bytes that decode to
    nothing replaced, never an error."""
    if data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        return data.decode("utf-16", errors="replace")
    return data.decode("utf-8-sig", errors="replace")


def head(path: Path, size: int) -> bytes:
    """At most the first ``size`` bytes of ``path`` (empty when it cannot be read)."""
    try:
        with path.open("rb") as handle:
            return handle.read(size)
    except OSError:
        return b""


def lines_at_most(path: Path, limit_bytes: int) -> Iterator[tuple[int, bytes]]:
    """(line number, line) of ``path``, read one at a time; :class:`TooLarge` once more
    than ``limit_bytes`` were read (a line longer than that included); ``OSError`` when
    it cannot be read."""
    total = number = 0
    with path.open("rb") as handle:
        while line := handle.readline(limit_bytes - total + 1):
            total += len(line)
            if total > limit_bytes:
                raise TooLarge(f"{quoted_path(path)} holds more than {limit_bytes:,} bytes", number)
            number += 1
            yield number, line


def json_lines(path: Path, limit_bytes: int) -> Iterator[tuple[int, JSON, str | None]]:
    """(line number, value, problem) of each line of a JSON-lines file that is not blank,
    read one at a time (:func:`lines_at_most`: :class:`TooLarge`, ``OSError``). ``problem``
    says why a line holds no JSON value (not UTF-8 text; not JSON, e.g. a line cut short;
    nested deeper than ``json_depth.MAX_DEPTH``), ``value`` then None; else None."""
    for number, line in lines_at_most(path, limit_bytes):
        if not line.strip():
            continue
        value, problem = None, None
        try:
            value = json_depth.loads(line.decode("utf-8"))
        except UnicodeDecodeError:
            problem = "not UTF-8 text"
        except json.JSONDecodeError as exc:
            problem = f"not JSON ({_decode_error(exc)}; a cut line?)"
        except json_depth.TooDeep as exc:
            problem = str(exc)
        yield number, value, problem


def _decode_error(exc: json.JSONDecodeError) -> str:
    """The parser's message whole: those that end in "at" ("Unterminated string starting
    at", "Invalid control character at") with the column they point to."""
    return f"{exc.msg} column {exc.colno:,}" if exc.msg.endswith(" at") else exc.msg


def schema_of(value: JSON) -> str:
    """The ``schema`` a JSON-lines value names (``gpuscale.bench/2``), "" when it names
    none (not an object, no text there): how a reader tells what a file holds from a
    line it has read, without reading the file again."""
    if isinstance(value, dict) and isinstance(value.get("schema"), str):
        return value["schema"]
    return ""


# The records a results file holds: (their schema's start, what they are, in words).
BENCH_FILE = ("gpuscale.bench/", "`gpuscale bench` results")
COLLECTIVES_FILE = ("gpuscale.collectives/", "`gpuscale collectives` sweeps")
# A first line longer than this is no record of ours (one is a few kB).
_FIRST_LINE_BYTES = 16 << 20


def first_schema(path: Path) -> str | None:
    """The schema of a file's first record: None when it has no line but blank ones,
    "" when its first line is no record (not JSON, too long, no schema); ``OSError``
    when it cannot be read. How every reader and writer tells what a file holds."""
    try:
        first = next(json_lines(path, _FIRST_LINE_BYTES), None)
    except TooLarge:
        return ""
    if first is None:
        return None
    return schema_of(first[1])  # a line of no JSON: value None, schema ""


def results_file_given_as_round(path: Path) -> str | None:
    """Why ``path``, given where an MLPerf round goes, is none: a file of gpuscale's own
    results (its first record's schema), with the option that reads it; None for any
    other path (one that cannot be read: its reader says why)."""
    try:
        schema = first_schema(path) if path.is_file() else None
    except OSError:
        return None
    quoted = quoted_path(path)
    if schema and schema.startswith(BENCH_FILE[0]):
        return (
            f"{quoted} holds {BENCH_FILE[1]}, not an MLPerf round: give it as "
            f"--bench {quoted} (gpuscale analyze, report or advise)"
        )
    if schema and schema.startswith(COLLECTIVES_FILE[0]):
        return (
            f"{quoted} holds {COLLECTIVES_FILE[1]}, not an MLPerf round: give it as "
            f"--collectives {quoted} to gpuscale advise"
        )
    return None


def skipped_lines(problems: Sequence[str], most: int = 5) -> list[str]:
    """A file's lines a reader skipped as a command says them: one warning each for the
    first ``most``, then a count of the rest (a bench file's, a collectives file's)."""
    rest = len(problems) - most
    more = [f"warning: {counted(rest, 'more line')} skipped"] if rest > 0 else []
    return [f"warning: {problem}" for problem in problems[:most]] + more

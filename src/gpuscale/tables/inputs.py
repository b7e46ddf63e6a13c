"""Every input file a command names that is not there, said in one message before any is
read: a user who gave two missing files (``advise --bench results.jsonl --collectives
collectives.jsonl``) learns both at once, not the second after fixing the first. Each
file is said as its own reader says it (its hint: the command that writes one), so one
missing file reads as before: the readers are passed in, but for a bench results file,
said here (:func:`no_results_file`) for the round readers that cannot import the bench's.
Pure Python."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from pathlib import Path

from gpuscale.tables.commands import quoted_path, suggested_command
from gpuscale.tables.round_requests import round_hint
from gpuscale.tables.writable import make_folder

# A path of ``-`` (many tools' standard input): no reader here reads standard input, and a
# file of that name would be written by the command a refusal suggests
STDIN_UNREAD = "-: standard input is not read; save it to a file and give that file's path"


class MissingInputsError(ValueError):
    """Input files a command names that are not there (:func:`refuse_missing`)."""


def missing_input(
    path: str | os.PathLike[str] | None,
    read: Callable[[Path], object],
    errors: tuple[type[Exception], ...] = (ValueError, OSError),
) -> str | None:
    """What ``read`` says of ``path`` where no such file is (a reader refuses a missing
    file at once, before reading anything), raising one of ``errors``; None where
    ``path`` is None (not given), is there (read later, as the command reads it; a broken
    link too: its reader says what it is), or ``read`` takes it after all."""
    if path is None or Path(path).exists() or Path(path).is_symlink():
        return None
    if str(path) == "-":
        return STDIN_UNREAD
    try:
        read(Path(path))
    except errors as exc:
        return str(exc)
    return None


def refuse_missing(said: Iterable[str | None]) -> None:
    """Raise :class:`MissingInputsError` with every message of ``said`` (one per missing
    input, None for one that is there), joined by ``; `` in the order given; nothing where
    each is None."""
    missing = [s for s in said if s]
    if missing:
        raise MissingInputsError("; ".join(dict.fromkeys(missing)))


def no_results_file(path: Path, takes_round: bool = True) -> str:
    """``results.jsonl: no such results file (`gpuscale bench --out results.jsonl` writes
    one)``; a name that is a round's (``v5.0``) told how to give the round
    (``round_hint``; ``takes_round``: the command takes ``--round``)."""
    if str(path) == "-":
        return STDIN_UNREAD
    hint = round_hint([path], takes_round=takes_round) or written_by_bench(path)
    return f"{quoted_path(path)}: no such results file{hint}"


def missing_results(path: Path | None, takes_round: bool = True) -> str | None:
    """:func:`no_results_file` where ``path`` is given and not there, else None."""
    if path is None or Path(path).exists() or Path(path).is_symlink():
        return None
    return no_results_file(Path(path), takes_round)


def written_by_bench(path: Path) -> str:
    """What a refusal of a results file that is not there adds: `` (`gpuscale bench --out
    PATH` writes one)``, and before it the command that makes its folder where that is
    missing (bench makes none)."""
    bench = suggested_command("bench", "--out", path)
    if path.parent.is_dir():
        return f" ({bench} writes one)"
    make = make_folder(path.parent)
    return (
        f" (nor does its folder {quoted_path(path.parent)} exist: {make}, then {bench} writes one)"
    )

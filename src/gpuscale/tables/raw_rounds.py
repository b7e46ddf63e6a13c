"""Raw MLPerf round folders, found by their shape, so that nothing is written into one.

A raw round is the published tree of one round of MLPerf Training:
``<org>/results/<system>/<benchmark>/result_*.txt`` (``:::MLLOG`` lines) beside
``<org>/systems/*.json``, whatever the folder is called. A file gpuscale wrote there (a
report, tables, a results file) would be read with the round next time (a folder under
``<org>/results`` is taken for a system) and mixes gpuscale's output into data that are
read in place: every ``--out`` is refused inside one (:func:`check_out`), and the folder
writer refuses one too (``gpuscale.sources.atomic``). A folder that holds round archives,
or round folders side by side, is no round: writing beside them is allowed.
"""

from __future__ import annotations

import os
from itertools import islice
from pathlib import Path

from gpuscale.tables.commands import quoted_path
from gpuscale.tables.requests import FieldError

# the archive kinds a raw round is read from (``gpuscale.sources.archives``)
ARCHIVE_SUFFIXES = (".tar", ".tar.gz", ".tgz", ".tar.xz", ".txz", ".tar.bz2", ".zip")
MARK = b":::MLLOG"
_HEAD = 65_536  # bytes of a log read for the mark (its first line may be a shell's)
_LOOK = 64  # entries looked at per folder level: a round shows itself in its first ones


def is_archive(path: str | os.PathLike[str]) -> bool:
    """Whether ``path``'s name ends as an archive a round is read from does."""
    return str(path).lower().endswith(ARCHIVE_SUFFIXES)


def archive_stem(name: str) -> str:
    """``name`` without its archive suffix (``training_results_v4.1.tar.xz`` ->
    ``training_results_v4.1``); a name that has none as it is."""
    lowered = name.lower()
    return next((name[: -len(s)] for s in ARCHIVE_SUFFIXES if lowered.endswith(s)), name)


def _entries(folder: Path, limit: int = _LOOK) -> list[Path]:
    try:
        with os.scandir(folder) as found:
            return [Path(e.path) for e in islice(found, limit) if e.is_dir() or e.is_file()]
    except OSError:
        return []


def _is_log(path: Path) -> bool:
    try:
        with path.open("rb") as f:
            return MARK in f.read(_HEAD)
    except OSError:
        return False


def _holds_logs(results: Path) -> bool:
    """Whether ``<org>/results`` holds ``<system>/<benchmark>/*.txt`` MLLOG logs."""
    for system in _entries(results):
        for bench in _entries(system):
            logs = [p for p in _entries(bench) if p.suffix == ".txt"]
            if any(_is_log(p) for p in logs[:3]):
                return True
    return False


def is_raw_round(folder: Path) -> bool:
    """Whether ``folder`` is a raw round: a child ``<org>`` whose ``results`` hold logs."""
    try:
        with os.scandir(folder) as children:
            orgs = [Path(c.path) for c in children if c.is_dir()]
    except OSError:
        return False
    # os.path.isdir, not Path.is_dir: every ancestor of an --out has its children looked
    # at, and one this user may not enter (/root, another user's folder in /tmp or /home)
    # makes Path.is_dir raise PermissionError before Python 3.14; such a folder is no round
    return any(_holds_logs(org / "results") for org in orgs if os.path.isdir(org / "results"))


def raw_round_holding(path: Path) -> Path | None:
    """The raw round folder ``path`` is or lies in (links followed), or None."""
    here = Path(os.path.realpath(os.path.abspath(path)))
    return next((f for f in (here, *here.parents) if is_raw_round(f)), None)


def raw_round_out(path: Path) -> str | None:
    """Why ``path`` is no place for gpuscale's output (it is or lies in a raw round), in
    words; None where it may be written."""
    root = raw_round_holding(path)
    if root is None:
        return None
    where = f"lies in the raw MLPerf round {quoted_path(root)}"
    if Path(os.path.realpath(os.path.abspath(path))) == root:
        where = f"is the raw MLPerf round folder {quoted_path(root)}"
    return (
        f"{where} (<org>/results/<system>/<benchmark>/ result logs), read in place: "
        "gpuscale writes nothing into one (its next read would take the files for the "
        "round's); choose a folder outside it"
    )


def check_out(field: str, path: Path) -> None:
    """FieldError where an output path (``field``: ``out``) is or lies in a raw round."""
    why = raw_round_out(path)
    if why:
        raise FieldError(field, path, why)

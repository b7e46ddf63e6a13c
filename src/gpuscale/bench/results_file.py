"""Writing a bench results file: whether rows may be appended to it (a file of other
text or of the other command's records is refused before anything runs) and one row
appended whole, flushed to disk. Reading it back is ``bench.results``'s."""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
from collections.abc import Sequence
from pathlib import Path

from gpuscale.bench.results import (
    BENCH_FILE,
    COLLECTIVES_FILE,
    SCHEMA,
    ResultsError,
    first_schema,
    unused_name,
)
from gpuscale.quantities import filled
from gpuscale.tables.commands import quoted_path
from gpuscale.tables.out_paths import check_file_out
from gpuscale.tables.requests import FieldError, ref
from gpuscale.tables.writable import why_unwritable


def check_writable(path: Path, holds: tuple[str, str] = BENCH_FILE) -> None:
    """Raise :class:`ResultsError` now if rows could not be appended to ``path`` later
    (a folder or a device there, no permission, a read-only disk, a name too long, a file
    where a folder must be) or should not be: a file holding anything but the records
    ``holds`` names (a README given as ``--out`` had rows appended), before anything is
    measured."""
    try:  # is_file() too raises (a name too long)
        if path.is_file():
            _check_holds(path, holds)
        if path.is_dir():
            raise ResultsError(f"{quoted_path(path)} is a folder; give a file for the results")
        if path.exists() and not path.is_file():  # /dev/null, /dev/full, a pipe
            raise ResultsError(
                f"{quoted_path(path)} is not a regular file (a device or a pipe): results "
                "are appended to a file and read back from it; give a file"
            )
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("a", encoding="utf-8"):
            pass
    except OSError as exc:
        raise ResultsError(
            f"cannot write {quoted_path(path)}: {why_unwritable(exc, path)}; choose another "
            "output file"
        ) from None


def check_results_out(field: str, path: Path, holds: tuple[str, str], default: Path) -> None:
    """``field``'s :class:`FieldError` (``bench``'s and ``collectives``' ``out``) for a
    path that is no file of the records ``holds`` names, nor a new one
    (``gpuscale.tables.out_paths.check_file_out``, then :func:`other_records`), before
    anything runs; ``default``: the option's, named in a refusal."""
    check_file_out(field, path, holds=holds[1], default=default)
    if path.is_file() and (why := other_records(path, holds)):
        fresh = unused_name(path.parent, default.name)  # never the file refused
        raise FieldError(field, path, f"{why}: give a new file, e.g. {ref(field, str(fresh))}")


def other_records(path: Path, holds: tuple[str, str]) -> str | None:
    """Why rows of the kind ``holds`` names are not appended to the file ``path`` (its
    first line is another record, or none), in words; None for a file of them, an empty
    one, or one that cannot be read (the write check says why)."""
    prefix, what = holds
    try:
        schema = first_schema(path)
    except OSError:
        return None
    if schema is None or schema.startswith(prefix):
        return None
    other = next(
        (w for p, w in (BENCH_FILE, COLLECTIVES_FILE) if schema and schema.startswith(p)), None
    )
    said = filled("it holds {}", other) or "its first line is not one of them"
    return f"is not a file of {what} ({said}); rows are appended only to such a file or a new one"


def _check_holds(path: Path, holds: tuple[str, str]) -> None:
    """Refuse a non-empty file whose first line is not a record of the kind ``holds``
    names (an empty file is a new results file)."""
    if why := other_records(path, holds):
        raise ResultsError(f"{quoted_path(path)} {why}: choose another output file")


def append_result(path: Path, record: dict[str, object]) -> None:
    """Append one record and flush it to disk, so a crash later loses nothing. A last
    line cut short (no newline) is closed first, so the new row stays whole; readers
    report the broken line. A row that cannot be written whole (the disk fills) is
    taken back: the file is left as it was, and :class:`ResultsError` says why."""
    append_records(path, [{"schema": SCHEMA, **record}], sort_keys=True)


def append_records(
    path: Path, records: Sequence[dict[str, object]], *, sort_keys: bool = False
) -> None:
    """Append ``records`` as JSON lines (each with its own schema) in one write under the
    file's lock, flushed to disk: two commands appending to one file at once (two
    collectives sweeps) never interleave their lines. A last line cut short (a crash) is
    closed first; records that cannot be written whole are taken back, the file left as
    it was (:class:`ResultsError`)."""
    text = "".join(json.dumps(r, sort_keys=sort_keys, default=str) + "\n" for r in records)
    line = text.encode("utf-8")
    try:
        fd = os.open(path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o644)
    except OSError as exc:
        raise ResultsError(
            f"cannot write {quoted_path(path)}: {why_unwritable(exc, path)}"
        ) from None
    try:
        with contextlib.suppress(OSError):  # another appender's line ends before the check
            fcntl.flock(fd, fcntl.LOCK_EX)  # (a file system without locks: as before)
        size = os.fstat(fd).st_size
        if size and os.pread(fd, 1, size - 1) != b"\n":
            line = b"\n" + line
        try:
            view = memoryview(line)
            while view:
                view = view[os.write(fd, view) :]
            os.fsync(fd)
        except OSError as exc:
            with contextlib.suppress(OSError):
                os.ftruncate(fd, size)  # no cut row left behind
            lost = "that row was not written, the rows before it are kept"
            if len(records) > 1:
                lost = f"those {len(records)} rows were not written, the rows before them are kept"
            raise ResultsError(
                f"cannot append to {quoted_path(path)}: {why_unwritable(exc, path)}; {lost}"
            ) from None
    finally:
        os.close(fd)

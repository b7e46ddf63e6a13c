"""Whether an output path fits what its command writes, checked by every request that has
one before any work: :func:`check_folder_out` (``ingest``, ``dataset``, ``report``: a folder
of files) and :func:`check_file_out` (``bench``, ``collectives``: one results file of JSON
lines, appended). A misfit is the ``out`` field's :class:`FieldError`, one line that names
what to give, nothing written: a folder's ``--out x.csv`` (a file's name: it made a folder
named x.csv), a file's ``--out`` that is a folder, a path whose folder does not exist (it
was made, a mistyped folder hiding the output), one where nothing can be written (/proc,
no permission, a read-only disk) and one in a raw MLPerf round (``raw_rounds``).
The writers check again as they write (``gpuscale.sources.atomic``,
``gpuscale.bench.results_file``): what changes in between is said there.
"""

from __future__ import annotations

import os
import tempfile
from dataclasses import Field
from pathlib import Path

from gpuscale.tables.commands import quoted_path
from gpuscale.tables.raw_rounds import check_out
from gpuscale.tables.requests import FieldError, has_path, ref
from gpuscale.tables.writable import (
    existing_ancestor,
    is_mount_point,
    make_folder,
    why_unwritable,
)

# Names of files (data, pages, archives), never of an output folder; a folder's dot is
# no suffix here (out/v4.1 is a folder)
FILE_SUFFIXES = frozenset(
    {".csv", ".tsv", ".parquet", ".json", ".jsonl", ".txt", ".md", ".html", ".htm", ".pdf"}
    | {".png", ".svg", ".xlsx", ".zip", ".tar", ".gz", ".tgz", ".xz", ".bz2"}
)
# Names of files in another format than a results file's JSON lines (.json and .txt are
# taken: JSON lines are read as such whatever the name)
OTHER_FORMATS = FILE_SUFFIXES - {".json", ".jsonl", ".txt"}


def check_folder_out(field: str, path: Path, *, holds: str, default: Path) -> None:
    """:class:`FieldError` for ``path`` (``field``: ``out``) as a folder of output files
    (``holds``: what goes in it, e.g. "the dataset's files (results and runs, CSV and
    Parquet)"; ``default``: the option's, named beside a file): a file's name or an
    existing file, or a place that cannot take it."""
    check_out(field, path)  # never into raw logs, before any is read
    suffix = path.suffix.lower()
    if suffix in FILE_SUFFIXES:  # `--out x.html` must not become a folder named x.html
        raise FieldError(
            field,
            path,
            f"names a {suffix} file, but {holds} go in a folder: give a folder, e.g. "
            f"{ref(field, str(path.with_suffix('')))}",
        )
    if _kind(path) == "file":
        raise FieldError(
            field,
            path,
            f"is a file, but {holds} go in a folder: give a new folder or an existing one, "
            f"e.g. {ref(field, str(path.with_name(default.name)))}",
        )
    _check_place(field, path)


def check_file_out(field: str, path: Path, *, holds: str, default: Path) -> None:
    """:class:`FieldError` for ``path`` (``field``: ``out``) as one file of JSON lines,
    appended (``holds``: what goes in it, e.g. "the results"; ``default``: the option's,
    named in a folder given): a folder, a device, another format's name, or a place that
    cannot take it. What an existing file holds is its writer's check
    (``gpuscale.bench.results_file``)."""
    check_out(field, path)  # a results file never among raw logs
    kind, suffix = _kind(path), path.suffix.lower()
    if kind == "folder":
        raise FieldError(
            field,
            path,
            f"is a folder, but {holds} go in one file (JSON lines, appended): give a file, "
            f"e.g. {ref(field, str(path / default.name))}",
        )
    if kind == "other":  # /dev/null, a pipe: rows could not be read back
        raise FieldError(
            field,
            path,
            f"is not a regular file (a device or a pipe), but {holds} go in a file and are "
            f"read back from it: give a file, e.g. {ref(field, str(default))}",
        )
    if suffix in OTHER_FORMATS:
        raise FieldError(
            field,
            path,
            f"names a {suffix} file, but {holds} go in JSON lines: give e.g. "
            f"{ref(field, str(path.with_suffix('.jsonl')))}",
        )
    _check_place(field, path)


def _kind(path: Path) -> str | None:
    """ "folder", "file", "other" (a device, a pipe) or None (nothing there), links
    followed."""
    try:
        if not os.path.exists(path):
            return None
        if path.is_dir():
            return "folder"
        if path.is_file():
            return "file"
        return "other"
    except (OSError, ValueError):  # a name too long: said by the place's check
        return None


def _check_place(field: str, path: Path) -> None:
    """:class:`FieldError` where ``path`` cannot be made (a file on the way, a name too
    long), or the folder it goes in takes no new file (/proc, no permission, a read-only
    disk) or does not exist (it would be made: a mistyped name hides the output). Nothing
    is left there: the probe is an unnamed file (an unlinked one where the file system
    has none)."""
    here = Path(os.path.abspath(path))
    try:
        os.lstat(here)  # a name or a path too long
        # a volume (a mount point) is written inside, else beside: its parent takes it
        base = here if here.is_dir() and is_mount_point(here) else here.parent
    except (FileNotFoundError, NotADirectoryError):  # not there, or a file on the way
        base = here.parent
    except OSError as exc:
        raise FieldError(field, path, _unwritable(exc, path)) from None
    found = existing_ancestor(base)
    if found is None:  # never: the root exists
        return
    if not found.is_dir():  # notes.txt/x: a file on the way
        shown = found if path.is_absolute() else os.path.relpath(found)  # as it was given
        raise FieldError(
            field,
            path,
            f"{quoted_path(shown)} is a file, not a folder: give a path in a folder, e.g. "
            f"{ref(field, path.name)}",
        )
    try:
        with tempfile.TemporaryFile(dir=found):
            pass
    except OSError as exc:  # no new file in the nearest folder there: none further
        raise FieldError(field, path, _unwritable(exc, found / path.name)) from None
    if found != base:
        raise FieldError(
            field,
            path,
            f"its folder {quoted_path(path.parent)} does not exist (none is made on the "
            "way: a mistyped one would hide the output): create it first "
            f"({make_folder(path.parent)}), or give one that exists, e.g. {ref(field, path.name)}",
        )


def _unwritable(exc: OSError, path: Path) -> str:
    """Why ``path`` cannot be written (``gpuscale.tables.writable``), and what to give."""
    return f"cannot be written: {why_unwritable(exc, path)}; give a path where you can write"


class TypedPath(str):
    """A path as typed, its trailing separator kept (``Path`` drops it): a refusal names
    it as every path, quoted (``tables.refusals``)."""

    def __fspath__(self) -> str:
        return str.__str__(self)


def each_value(value: object) -> list | tuple:
    """An option's values: those of a repeatable option as they are, one value in a list."""
    return value if isinstance(value, list | tuple) else [value]


def typed_paths(f: Field, hints: dict[str, object], value: object) -> object:
    """An option's text (or texts) as its field's ``Path`` (``value`` unchanged for any
    other field). A text ending in a separator is a folder's name: refused where the field
    names one file to write (``one_file``), since ``Path`` drops the separator and the
    file would take the folder's name (``bench --out newdir/`` would write a file ``newdir``)."""
    if value is None or not has_path(f.metadata.get("cli", hints[f.name])):
        return value
    many = each_value(value)
    for text in many:
        if f.metadata.get("one_file") and str(text).endswith(("/", os.sep)):
            name = Path(f.default).name  # the option's default file
            raise FieldError(
                f.name,
                TypedPath(text),
                f"ends with {str(text)[-1]}, a folder's name, but it names one file: give a "
                f"file, e.g. {ref(f.name, str(text) + name)}",
            )
    return [Path(v) for v in many] if isinstance(value, list | tuple) else Path(value)

"""Reading a tree of files from a directory or a tar/zip archive, in place.

A source yields :class:`Entry` objects (a path relative to the tree's top folder and a
way to read its bytes) for the members a :class:`Layout` wants, and folders it marks.
Archives are never unpacked to disk. Nothing here raises on what is inside the source:
unsafe member names (absolute, ``..``), links, unreadable folders or members, names that
are not UTF-8 and damaged archives become :class:`Skipped` notes, and the rest is read.
Only a path that is not a source at all raises :class:`SourceError`. Archives are read
by ``gpuscale._io.archives``.
"""

from __future__ import annotations

import lzma
import os
import queue
import re
import tarfile
import threading
import zipfile
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

from gpuscale.tables import ProblemKind

ARCHIVE_SUFFIXES = (".tar", ".tar.gz", ".tgz", ".tar.xz", ".txz", ".tar.bz2", ".zip")
# What reading a damaged archive member or stream can raise.
ARCHIVE_ERRORS = (
    tarfile.TarError,
    zipfile.BadZipFile,
    OSError,
    EOFError,
    ValueError,
    lzma.LZMAError,
    zlib.error,
    RuntimeError,  # zipfile: an encrypted member
    NotImplementedError,  # zipfile: an unsupported compression method
)


class SourceError(Exception):
    """A path that cannot be read as a tree at all (missing, not a directory or archive)."""


@dataclass(frozen=True, slots=True)
class Layout:
    """Which members a reader wants: ``wanted(rel)`` for files, ``marked(rel)`` for
    folders to report even when empty, ``misplaced(rel, is_dir)`` a message for a member
    of the wrong kind (a file where a folder belongs), and ``top`` a leading folder name
    pattern to strip (``training_results_v4.1``). Functions must be module-level (they
    may travel to worker processes)."""

    wanted: Callable[[str], bool]
    marked: Callable[[str], bool]
    misplaced: Callable[[str, bool], str | None]
    top: re.Pattern[str] | None = None


@dataclass(frozen=True, slots=True)
class Entry:
    """A member: ``path`` is relative to the tree's top folder, '/'-separated."""

    path: str
    size: int  # bytes, where known (0 for directory sources: not worth a stat call)
    read: Callable[[], bytes]
    file: str | None = None  # the file on disk, for directory sources
    is_dir: bool = False  # a folder the layout marks (may be empty)


@dataclass(frozen=True, slots=True)
class Skipped:
    """A member that was not read (or read under an escaped name), and why."""

    path: str
    kind: ProblemKind
    message: str


def is_archive(path: str | os.PathLike[str]) -> bool:
    return str(path).lower().endswith(ARCHIVE_SUFFIXES)


def printable(name: str) -> str:
    """A path as text that any table or file can hold: bytes that were not UTF-8 (kept
    as surrogates by ``os`` and ``tarfile``) become ``\\xNN`` escapes."""
    try:
        name.encode("utf-8")
        return name
    except UnicodeEncodeError:
        return name.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")


def clean_name(rel: str, skipped: list[Skipped]) -> str:
    clean = printable(rel)
    if clean != rel:
        skipped.append(
            Skipped(
                clean,
                ProblemKind.BAD_FIELD,
                "file name is not UTF-8; read under this escaped name",
            )
        )
    return clean


def iter_source(path: Path, layout: Layout, skipped: list[Skipped]) -> Iterator[Entry]:
    """The wanted members of a directory or archive (see the module docstring)."""
    if path.is_dir():
        return iter_directory(path, layout, skipped)
    if path.is_file() and is_archive(path):
        from gpuscale._io.archives import iter_archive  # archives build on this module

        return iter_archive(path, layout, skipped)
    if not path.exists():
        raise SourceError(f"{path}: no such file or directory")
    raise SourceError(f"{path}: not a directory or a .tar/.tar.gz/.tar.xz/.zip archive")


def iter_directory(root: Path, layout: Layout, skipped: list[Skipped]) -> Iterator[Entry]:
    """The wanted files below ``root`` (or below its one child matching ``layout.top``),
    in ``os.walk`` order (a folder's files, sorted, then its sub-folders); links are
    reported, not followed. ``os.scandir`` tells files, folders and links apart without
    a stat call."""
    if layout.top is not None:
        try:
            tops = [c for c in root.iterdir() if c.is_dir() and layout.top.match(c.name)]
        except OSError:
            tops = []
        if len(tops) == 1:
            root = tops[0]
    yield from _scan(str(root), "", layout, skipped)


def _scan(folder: str, rel_dir: str, layout: Layout, skipped: list[Skipped]) -> Iterator[Entry]:
    try:
        with os.scandir(folder) as listing:
            found = sorted(listing, key=lambda e: e.name)
    except OSError as exc:
        if rel_dir:
            skipped.append(
                Skipped(
                    printable(rel_dir),
                    ProblemKind.UNREADABLE,
                    f"cannot list folder ({exc.strerror}); its files were not read",
                )
            )
        return
    if rel_dir and layout.marked(rel_dir):
        yield Entry(path=clean_name(rel_dir, skipped), size=0, read=bytes, is_dir=True)
    folders = []
    for item in found:
        rel = f"{rel_dir}/{item.name}" if rel_dir else item.name
        try:
            is_dir = item.is_dir(follow_symlinks=False)
            is_file = item.is_file(follow_symlinks=False)
        except OSError:
            is_dir = is_file = False
        problem = layout.misplaced(rel, is_dir)
        if problem:
            skipped.append(Skipped(printable(rel), ProblemKind.NOT_A_FILE, problem))
            continue
        if is_dir:
            folders.append(item)
        elif layout.wanted(rel):
            if not is_file:
                skipped.append(
                    Skipped(
                        printable(rel),
                        ProblemKind.NOT_A_FILE,
                        "a link or special file, not a regular file; not read",
                    )
                )
                continue
            yield Entry(
                path=clean_name(rel, skipped),
                size=0,
                read=partial(read_file, item.path),
                file=item.path,
            )
    for item in folders:
        yield from _scan(
            item.path, f"{rel_dir}/{item.name}" if rel_dir else item.name, layout, skipped
        )


def read_file(path: str) -> bytes:
    with open(path, "rb") as f:
        return f.read()


def read_ahead(entries: Iterator[Entry], depth: int = 16) -> Iterator[Entry]:
    """Iterate ``entries`` in a background thread, ``depth`` entries ahead.

    Decompression (lzma, zlib, bz2) releases the GIL, so it overlaps the main thread's
    work; the bounded queue keeps memory at a few files. An exception in the reader is
    re-raised here.
    """
    done = object()
    box: queue.Queue[Any] = queue.Queue(maxsize=depth)

    def pump() -> None:
        try:
            for entry in entries:
                box.put(entry)
        except BaseException as exc:  # handed to the consumer, not lost in the thread
            box.put(exc)
        box.put(done)

    threading.Thread(target=pump, name="gpuscale-archive-reader", daemon=True).start()
    while (item := box.get()) is not done:
        if isinstance(item, BaseException):
            raise item
        yield item

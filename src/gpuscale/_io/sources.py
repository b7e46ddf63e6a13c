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

import errno
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
    """A member that was not read (or read under an escaped name), and why;
    ``ends_read``: nothing after it was read (a damaged archive, a bomb)."""

    path: str
    kind: ProblemKind
    message: str
    ends_read: bool = False


# Caps on what one source may expand to: 16x the largest real result file (3.8 MB,
# v1.1) and 16x the largest real round (608 MB unpacked, v4.0).
MAX_FILE_BYTES = 64 << 20
MAX_ROUND_BYTES = 10 << 30


@dataclass(slots=True)
class Budget:
    """The bytes a source may expand to: ``file_bytes`` per member, ``round_bytes`` in
    all (members too large to read count too: a bomb is still decompressed to be
    skipped)."""

    file_bytes: int = MAX_FILE_BYTES
    round_bytes: int = MAX_ROUND_BYTES
    spent: int = 0

    def take(
        self, rel: str, size: int, skipped: list[Skipped], where: str, wanted: bool = True
    ) -> bool:
        """Whether a wanted member of ``size`` bytes may be read; else why not, in
        ``skipped`` (an unwanted one: False, silently).
        Raises :class:`BudgetSpent` when the source as a whole is past its cap."""
        self.spent += size
        if self.spent > self.round_bytes:
            raise BudgetSpent(
                Skipped(
                    where,
                    ProblemKind.UNREADABLE,
                    f"expands past the cap of {self.round_bytes:,} bytes at {printable(rel)} "
                    "(a bomb?); what came before was read, nothing after it "
                    "(raise max_round_bytes for a larger round)",
                    ends_read=True,
                )
            )
        if not wanted:
            return False
        if size > self.file_bytes:
            skipped.append(
                Skipped(
                    printable(rel),
                    ProblemKind.UNREADABLE,
                    f"{size:,} bytes, more than the cap of {self.file_bytes:,} per file; not "
                    "read (raise max_file_bytes for a larger file)",
                )
            )
            return False
        return True


class BudgetSpent(Exception):
    """A source expanded past its cap: the walk ends with this note."""

    def __init__(self, note: Skipped) -> None:
        super().__init__(note.message)
        self.note = note


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


def iter_source(
    path: Path, layout: Layout, skipped: list[Skipped], budget: Budget | None = None
) -> Iterator[Entry]:
    """The wanted members of a directory or archive (see the module docstring), within
    ``budget`` (default caps: :data:`MAX_FILE_BYTES`, :data:`MAX_ROUND_BYTES`)."""
    budget = budget or Budget()
    if path.is_dir():
        return _within(iter_directory(path, layout, skipped, budget), skipped)
    if path.is_file() and is_archive(path):
        from gpuscale._io.archives import iter_archive  # archives build on this module

        return _within(iter_archive(path, layout, skipped, budget), skipped)
    if not path.exists():
        raise SourceError(f"{path}: no such file or directory")
    raise SourceError(f"{path}: not a directory or a .tar/.tar.gz/.tar.xz/.zip archive")


def _within(entries: Iterator[Entry], skipped: list[Skipped]) -> Iterator[Entry]:
    """``entries`` until the budget is spent; then the note that says so."""
    try:
        yield from entries
    except BudgetSpent as spent:
        skipped.append(spent.note)


def iter_directory(
    root: Path, layout: Layout, skipped: list[Skipped], budget: Budget | None = None
) -> Iterator[Entry]:
    """The wanted files below ``root`` (or below its one child matching ``layout.top``),
    folder by folder (a folder's files, sorted, then its sub-folders), without recursion
    (any depth). A link that stays inside the tree is followed once (each real folder and
    file is read once, which also breaks loops); one that leaves the tree or leads
    nowhere is reported. What is not a regular file where a file is wanted (a folder, a
    FIFO, a socket, a dangling link) and archives inside the tree are reported."""
    if layout.top is not None:
        try:
            tops = [c for c in root.iterdir() if c.is_dir() and layout.top.match(c.name)]
        except OSError:
            tops = []
        if len(tops) == 1:
            root = tops[0]
    budget = budget or Budget()
    real_root = os.path.realpath(root)
    seen: dict[str, str] = {real_root: ""}
    links: list[tuple[str, str]] = []  # links to folders: followed after the real folders
    stack = [(str(root), "", real_root)]  # (folder, its path in the tree, its real path)
    while stack or links:
        if not stack:
            path, rel = links.pop(0)
            real = os.path.realpath(path)
            first = seen.setdefault(real, rel)
            if first != rel:
                skipped.append(_read_as(rel, first))
                continue
            stack.append((path, rel, real))
        folder, rel_dir, real_dir = stack.pop()
        found = _listing(folder, rel_dir, skipped)
        if found is None:
            continue
        if rel_dir and layout.marked(rel_dir):
            yield Entry(path=clean_name(rel_dir, skipped), size=0, read=bytes, is_dir=True)
        folders = []
        for item in found:
            rel = f"{rel_dir}/{item.name}" if rel_dir else item.name
            kind = _kind_of(item, rel, real_root, skipped)
            if kind is None:
                continue
            problem = layout.misplaced(rel, kind != "file" and kind != "other") or shape_problem(
                rel, "dir" if kind == "link-dir" else kind, layout.wanted(rel)
            )
            if problem:
                skipped.append(Skipped(printable(rel), ProblemKind.NOT_A_FILE, problem))
            elif kind == "link-dir":
                links.append((item.path, rel))
            elif kind == "dir":  # not a link: its real path is its parent's and its name
                real = f"{real_dir}/{item.name}"
                first = seen.setdefault(real, rel)
                if first == rel:
                    folders.append((item.path, rel, real))
                else:
                    skipped.append(_read_as(rel, first))
            elif kind == "file" and layout.wanted(rel):
                try:
                    size = os.stat(item.path).st_size
                except OSError:
                    size = 0  # reading it will say why
                if budget.take(rel, size, skipped, root.name):
                    yield Entry(
                        path=clean_name(rel, skipped),
                        size=size,
                        read=partial(read_file, item.path, budget.file_bytes),
                        file=item.path,
                    )
        stack.extend(reversed(folders))


def _read_as(rel: str, first: str) -> Skipped:
    return Skipped(
        printable(rel),
        ProblemKind.NOT_A_FILE,
        f"the same folder as {printable(first) or 'the top'} (a link), read once under "
        "that name; not read again",
    )


def shape_problem(rel: str, kind: str, wanted: bool) -> str | None:
    """Why a member of this kind (``file``, ``dir`` or ``other``) is not read, or None."""
    if wanted and kind == "dir":
        return "a folder where a file belongs; not read"
    if wanted and kind == "other":
        return "not a regular file (a FIFO, socket, device or link); not read"
    if kind == "file" and is_archive(rel):
        return "an archive inside the round; not read (give it as a path of its own)"
    return None


def _listing(folder: str, rel_dir: str, skipped: list[Skipped]) -> list[os.DirEntry] | None:
    try:
        with os.scandir(folder) as listing:
            return sorted(listing, key=lambda e: e.name)
    except OSError as exc:
        if rel_dir:
            skipped.append(
                Skipped(
                    printable(rel_dir),
                    ProblemKind.UNREADABLE,
                    f"cannot list folder ({exc.strerror}); its files were not read",
                )
            )
        return None


def _kind_of(item: os.DirEntry, rel: str, real_root: str, skipped: list[Skipped]) -> str | None:
    """``file``, ``dir``, ``link-dir`` (a link to a folder in the tree) or ``other`` for
    a listed item, a link to a file in the tree being a ``file``; None (reported) for a
    link leaving the tree. ``os.scandir`` tells plain kinds apart without a stat call."""
    try:
        if not item.is_symlink():
            if item.is_dir(follow_symlinks=False):
                return "dir"
            return "file" if item.is_file(follow_symlinks=False) else "other"
        target = os.path.realpath(item.path)
        is_dir = os.path.isdir(target)
        is_file = os.path.isfile(target)
    except OSError:
        return "other"
    if not (is_dir or is_file):
        return "other"  # a link to nothing (or to a FIFO...): reported where it is wanted
    if os.path.commonpath([real_root, target]) != real_root:
        skipped.append(
            Skipped(
                printable(rel),
                ProblemKind.UNSAFE_PATH,
                "a link leading outside the round; not followed",
            )
        )
        return None
    return "link-dir" if is_dir else "file"


def read_file(path: str, limit: int = MAX_FILE_BYTES) -> bytes:
    """A file's bytes; OSError (EFBIG) where it has grown past ``limit`` bytes."""
    with open(path, "rb") as f:
        data = f.read(limit + 1)
    if len(data) > limit:
        raise OSError(errno.EFBIG, f"more than the cap of {limit:,} bytes per file")
    return data


def read_ahead(entries: Iterator[Entry], depth: int = 4) -> Iterator[Entry]:
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

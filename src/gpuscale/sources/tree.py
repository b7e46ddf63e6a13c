"""Reading a tree of files from a directory or a tar/zip archive, in place.

A source yields :class:`Entry` objects (a path relative to the tree's top folder and a
way to read its bytes) for the members a :class:`Layout` wants, and folders it marks.
Archives are never unpacked to disk. Nothing here raises on what is inside the source:
unsafe member names (absolute, ``..``), links, unreadable folders or members, names that
are not UTF-8 and damaged archives become :class:`Skipped` notes, and the rest is read.
Only a path that is not a source at all raises :class:`SourceError`.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Iterator
from pathlib import Path

from gpuscale.sources.archives import iter_archive
from gpuscale.sources.directories import iter_directory
from gpuscale.sources.entries import (
    Budget,
    BudgetSpent,
    Entry,
    Layout,
    Reading,
    Skipped,
    SourceError,
    is_archive,
)
from gpuscale.tables.commands import quoted_path
from gpuscale.tables.raw_rounds import archive_stem


def iter_source(
    path: Path, layout: Layout, skipped: list[Skipped], budget: Budget | None = None
) -> Iterator[Entry]:
    """The wanted members of a directory or archive (see the module docstring), within
    ``budget`` (default caps: :data:`MAX_FILE_BYTES`, :data:`MAX_ROUND_BYTES`)."""
    reading = Reading(layout, skipped, budget or Budget())
    if path.is_dir():
        return _within(iter_directory(path, reading), skipped)
    if path.is_file() and is_archive(path):
        return _within(iter_archive(path, reading), skipped)
    raise not_a_source(path)


def not_a_source(path: Path) -> SourceError:
    """Why ``path``, neither a folder nor an archive, cannot be read as a round."""
    if not path.exists():
        return SourceError(f"{quoted_path(path)}: no such file or directory{_named_alike(path)}")
    return SourceError(
        f"{quoted_path(path)}: not a directory or a .tar/.tar.gz/.tar.xz/.zip archive"
    )


def _named_alike(path: Path) -> str:
    """`` (did you mean ...?)`` for a folder or archive beside a missing ``path`` whose name
    differs from its name only in the archive suffix (``training_results_v5.0.tar.gz``
    where the ``.tar.xz`` is, or the folder unpacked); "" where none is."""
    try:
        beside = sorted(path.parent.iterdir()) if path.parent.is_dir() else []
    except OSError:
        return ""
    alike = [
        p
        for p in beside
        if archive_stem(p.name) == archive_stem(path.name) and (p.is_dir() or is_archive(p))
    ]
    return f" (did you mean {quoted_path(alike[0])}?)" if alike else ""


def _within(entries: Iterator[Entry], skipped: list[Skipped]) -> Iterator[Entry]:
    """``entries`` until the budget is spent; then the note that says so."""
    try:
        yield from entries
    except BudgetSpent as spent:
        skipped.append(spent.note)


def read_ahead(entries: Iterator[Entry], depth: int = 4) -> Iterator[Entry]:
    """Iterate ``entries`` in a background thread, ``depth`` entries ahead.

    Decompression (lzma, zlib, bz2) releases the GIL, so it overlaps the main thread's
    work; the bounded queue keeps memory at a few files. An exception in the reader is
    re-raised here.
    """
    done = object()
    box: queue.Queue[Entry | BaseException | object] = queue.Queue(maxsize=depth)

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

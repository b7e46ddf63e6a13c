"""A directory tree read folder by folder, as :class:`~gpuscale.sources.entries.Entry`
objects (links followed once, unreadable folders and members become notes)."""

from __future__ import annotations

import errno
import os
import posixpath
from collections.abc import Iterator
from functools import partial
from pathlib import Path

from gpuscale.sources.entries import (
    MAX_FILE_BYTES,
    Budget,
    Entry,
    Layout,
    Reading,
    Skipped,
    clean_name,
    member_kind,
    note_unread,
    printable,
    skip_misfit,
)
from gpuscale.tables import ProblemKind


def iter_directory(root: Path, reading: Reading) -> Iterator[Entry]:
    """The wanted files below ``root`` (or below its one child matching ``layout.top``),
    folder by folder (a folder's files, sorted, then its sub-folders), without recursion
    (any depth). A link that stays inside the tree is followed once (each real folder and
    file is read once, which also breaks loops); one that leaves the tree or leads
    nowhere is reported. What is not a regular file where a file is wanted (a folder, a
    FIFO, a socket, a dangling link) and archives inside the tree are reported."""
    layout, skipped, budget = reading.layout, reading.skipped, reading.budget
    root = _top(root, layout)
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
            rel = posixpath.join(rel_dir, item.name)
            kind = _kind_of(item, rel, real_root, skipped)
            if kind is None:
                continue
            if skip_misfit(rel, _MISFIT_KIND.get(kind, kind), layout, skipped):
                continue
            if kind == "link-dir":
                links.append((item.path, rel))
            elif kind == "dir":  # not a link: its real path is its parent's and its name
                real = f"{real_dir}/{item.name}"
                first = seen.setdefault(real, rel)
                if first == rel:
                    folders.append((item.path, rel, real))
                else:
                    skipped.append(_read_as(rel, first))
            elif kind == "file" and layout.wanted(rel):
                entry = _file_entry(item.path, rel, budget, root.name, skipped)
                if entry is not None:
                    yield entry
            elif kind == "file":
                note_unread(rel, layout, skipped)
        stack.extend(reversed(folders))


# a link to a folder is placed and read as the folder it leads to
_MISFIT_KIND = {"link-dir": "dir"}


def _top(root: Path, layout: Layout) -> Path:
    """``root``'s one child matching ``layout.top`` when it has exactly one, else ``root``."""
    if layout.top is None:
        return root
    try:
        tops = [c for c in root.iterdir() if c.is_dir() and layout.top.match(c.name)]
    except OSError:
        tops = []
    return tops[0] if len(tops) == 1 else root


def _file_entry(
    path: str, rel: str, budget: Budget, source: str, skipped: list[Skipped]
) -> Entry | None:
    """The entry of a wanted file, None when the ``budget`` has no room for it."""
    try:
        size = os.stat(path).st_size
    except OSError:
        size = 0  # reading it will say why
    if not budget.take(rel, size, skipped, source):
        return None
    return Entry(
        path=clean_name(rel, skipped),
        size=size,
        read=partial(read_file, path, budget.file_bytes),
        file=path,
    )


def _read_as(rel: str, first: str) -> Skipped:
    return Skipped(
        printable(rel),
        ProblemKind.NOT_A_FILE,
        f"the same folder as {printable(first) or 'the top'} (a link), read once under "
        "that name; not read again",
    )


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
            return member_kind(
                item.is_dir(follow_symlinks=False), item.is_file(follow_symlinks=False)
            )
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

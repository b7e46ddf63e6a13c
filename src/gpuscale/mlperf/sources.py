"""Where a round's files come from: a directory, or a tar/zip archive read in place.

A source yields :class:`Entry` objects (a path relative to the round's top folder and a
way to read its bytes) for the files gpuscale reads: ``<org>/systems/*.json``,
``<org>/results/<system>/<benchmark>/result_*.txt``, ``scaling.json`` and power logs.
Archives are never unpacked to disk; unsafe member names (absolute, ``..``) are
reported and skipped, never opened.
"""

from __future__ import annotations

import bz2
import fnmatch
import gzip
import io
import lzma
import os
import queue
import re
import tarfile
import threading
import zipfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path, PurePosixPath
from typing import Any

from gpuscale.mlperf.xz import BlockReader, XzIndex

ARCHIVE_SUFFIXES = (".tar", ".tar.gz", ".tgz", ".tar.xz", ".txz", ".tar.bz2", ".zip")
_ROUND_RE = re.compile(r"v?(\d+\.\d+)")
_TOP_RE = re.compile(r"^training_results_v?\d+\.\d+$")
BLOCKSIZE = tarfile.BLOCKSIZE  # tar headers start at multiples of 512 bytes


class SourceError(Exception):
    """A path that cannot be read as a round (missing, not a directory or archive, corrupt)."""


@dataclass(frozen=True, slots=True)
class Entry:
    """A file of a round: ``path`` is relative to the round's top folder, '/'-separated."""

    path: str
    size: int  # bytes, where known (0 for directory sources: not worth a stat call)
    read: Callable[[], bytes]
    file: str | None = None  # the file on disk, for directory sources
    is_dir: bool = False  # a <org>/results/<system>/<benchmark> folder (may be empty)


@dataclass(frozen=True, slots=True)
class Skipped:
    """A member that was not read, and why (unsafe path, link, ...)."""

    path: str
    kind: str
    message: str


def round_name_from_path(path: str | os.PathLike[str]) -> str | None:
    """``.../training_results_v4.1.tar.xz`` -> ``v4.1``; None when the name has no version."""
    name = Path(path).name
    for suffix in ARCHIVE_SUFFIXES:
        if name.endswith(suffix):
            name = name[: -len(suffix)]
            break
    match = re.search(r"(?:^|[_\-])v(\d+\.\d+)$", name) or re.fullmatch(r"v(\d+\.\d+)", name)
    return f"v{match.group(1)}" if match else None


def normalise_round(name: str) -> str:
    """``4.1``, ``v4.1``, ``4.1.0`` -> ``v4.1``."""
    match = _ROUND_RE.match(name.strip())
    if not match:
        raise ValueError(f"not a round name: {name!r} (expected like v4.1)")
    return f"v{match.group(1)}"


def is_archive(path: str | os.PathLike[str]) -> bool:
    return str(path).lower().endswith(ARCHIVE_SUFFIXES)


def wanted(rel: str) -> bool:
    """Whether gpuscale reads this round-relative path."""
    parts = rel.split("/")
    if len(parts) == 3 and parts[1] == "systems":
        return parts[2].endswith(".json")
    if len(parts) >= 5 and parts[1] == "results":
        name = parts[-1]
        if len(parts) == 5:
            return fnmatch.fnmatchcase(name, "result_*.txt") or name == "scaling.json"
        # <org>/results/<system>/<benchmark>/power/<run stem>/<node|sw>_*.txt
        return len(parts) == 7 and parts[4] == "power" and name.endswith(".txt")
    return False


def _is_bench_dir(rel: str) -> bool:
    parts = rel.rstrip("/").split("/")
    return len(parts) == 4 and parts[1] == "results"


def _unsafe(name: str) -> str | None:
    if name.startswith(("/", "\\")) or re.match(r"^[A-Za-z]:[\\/]", name):
        return "absolute path"
    if ".." in PurePosixPath(name.replace("\\", "/")).parts:
        return "path escapes the archive ('..')"
    return None


def _strip_top(parts: list[str]) -> list[str]:
    """Drop a leading ``training_results_vX.Y`` folder (and a ``.``) from member parts."""
    while parts and parts[0] in ("", "."):
        parts = parts[1:]
    if parts and _TOP_RE.match(parts[0]):
        parts = parts[1:]
    return parts


def iter_directory(root: Path) -> Iterator[Entry]:
    """The wanted files below a round directory (or its parent holding one round), in
    ``os.walk`` order (a folder's files, sorted, then its sub-folders); links are not
    followed. ``os.scandir`` tells files, folders and links apart without a stat call."""
    children = [p for p in root.iterdir() if p.is_dir()] if root.is_dir() else []
    if not any((c / "results").is_dir() or (c / "systems").is_dir() for c in children):
        tops = [c for c in children if _TOP_RE.match(c.name)]
        if len(tops) == 1:
            root = tops[0]
    yield from _scan(str(root), "")


def _scan(folder: str, rel_dir: str) -> Iterator[Entry]:
    try:
        with os.scandir(folder) as listing:
            found = sorted(listing, key=lambda e: e.name)
    except OSError:
        return
    if rel_dir.count("/") == 3 and rel_dir.split("/")[1] == "results":
        yield Entry(path=rel_dir, size=0, read=bytes, is_dir=True)
    folders = []
    for item in found:
        if item.is_dir(follow_symlinks=False):
            folders.append(item)
            continue
        rel = f"{rel_dir}/{item.name}" if rel_dir else item.name
        if item.is_file(follow_symlinks=False) and wanted(rel):
            full = item.path
            yield Entry(path=rel, size=0, read=partial(read_file, full), file=full)
    for item in folders:
        yield from _scan(item.path, f"{rel_dir}/{item.name}" if rel_dir else item.name)


def read_file(path: str) -> bytes:
    with open(path, "rb") as f:
        return f.read()


def iter_archive(path: Path, skipped: list[Skipped]) -> Iterator[Entry]:
    """The wanted members of a tar or zip archive, in archive order, read in memory.

    Tar archives are streamed (``r|*``): each member's bytes must be read before the
    next entry is requested, which the ingest does.
    """
    if path.name.lower().endswith(".zip"):
        yield from _iter_zip(path, skipped)
        return
    try:
        tar = tarfile.open(fileobj=_decompressed(path), mode="r|")  # noqa: SIM115
    except (tarfile.TarError, OSError, EOFError, lzma.LZMAError) as exc:
        raise SourceError(f"{path}: not a readable tar archive ({exc})") from exc
    with tar:
        try:
            for member in tar:
                entry = _tar_entry(tar, member, skipped)
                if entry is not None:
                    yield entry
        except (tarfile.TarError, OSError, EOFError, ValueError, lzma.LZMAError) as exc:
            skipped.append(
                Skipped(
                    str(path.name),
                    "corrupt archive",
                    f"archive ends early or is damaged ({exc}); the files "
                    "before the damage were read",
                )
            )


def _tar_entry(
    tar: tarfile.TarFile, member: tarfile.TarInfo, skipped: list[Skipped]
) -> Entry | None:
    """The entry for a tar member gpuscale reads (its bytes read now), else None."""
    rel = _member_rel(member.name, skipped)
    if rel is not None and member.isdir() and _is_bench_dir(rel):
        return Entry(path=rel.rstrip("/"), size=0, read=bytes, is_dir=True)
    if rel is None or not wanted(rel):
        return None
    if not member.isfile():
        skipped.append(
            Skipped(rel, "not a file", "archive member is a link or special file; not read")
        )
        return None
    if member.isreg() and not member.sparse:
        # A plain file's bytes lie in one run: one read, not tarfile's 8 KiB pieces.
        tar.fileobj.seek(member.offset_data)
        data = tar.fileobj.read(member.size)
        if len(data) != member.size:
            raise tarfile.ReadError("unexpected end of data")
    else:
        handle = tar.extractfile(member)
        data = handle.read() if handle is not None else b""
    return Entry(path=rel, size=member.size, read=partial(bytes, data))


@dataclass(slots=True)
class TarBlockBounds:
    """Where a block's walk started and stopped, for checking that blocks chain up.

    ``first_header``: offset of the first member header found in the block (None: none
    before the end of the block or an all-zero 512-byte block). ``end_marker``: offset of
    that all-zero block (tar's end-of-archive) when it came first. ``next_header``:
    offset of the header after the last member read (None: the walk met the archive's
    end). ``global_pax``: pax global header fields it met.
    """

    first_header: int | None = None
    end_marker: int | None = None
    next_header: int | None = None
    global_pax: dict[str, str] = field(default_factory=dict)


_ZERO_BLOCK = bytes(BLOCKSIZE)


def _find_tar_header(reader: BlockReader, stop: int, bounds: TarBlockBounds) -> None:
    """Find the first 512-aligned ustar header (or all-zero block) at or after the
    reader's position and before ``stop``; the reader is left at a header found.

    File contents can hold a header-shaped block (a tar inside a file) or zeros; the
    caller checks the chain of blocks, so such a find costs speed, never correctness.
    """
    pos = reader.seek(-(-reader.tell() // BLOCKSIZE) * BLOCKSIZE)
    while pos < stop:
        chunk = reader.read(BLOCKSIZE)
        if len(chunk) < BLOCKSIZE:
            return
        if chunk == _ZERO_BLOCK:
            bounds.end_marker = pos
            return
        if chunk[257:262] == b"ustar":
            try:
                tarfile.TarInfo.frombuf(chunk, tarfile.ENCODING, "surrogateescape")
            except tarfile.HeaderError:
                pass
            else:
                reader.unread(chunk)
                bounds.first_header = pos
                return
        pos += BLOCKSIZE


def iter_tar_block(
    path: Path, index: XzIndex, number: int, skipped: list[Skipped], bounds: TarBlockBounds
) -> Iterator[Entry]:
    """The wanted members whose headers lie in block ``number`` of an indexed .tar.xz.

    Block 0 starts at the archive's start; a later block at the first header found in
    it. The walk reads on into the next blocks for its last member and stops before a
    header that lies past its block. ``bounds`` is filled in for the caller to check
    that the blocks' walks chain up; errors (a corrupt block, a truncated archive) are
    raised, for the caller to read the archive sequentially instead.
    """
    block = index.blocks[number]
    with BlockReader(path, index, block.start) as reader:
        if number == 0:
            bounds.first_header = block.start
        else:
            _find_tar_header(reader, block.end, bounds)
        if bounds.first_header is None:
            return
        with tarfile.open(fileobj=reader, mode="r:") as tar:
            while (member := tar.next()) is not None:
                entry = _tar_entry(tar, member, skipped)
                if entry is not None:
                    yield entry
                if tar.offset >= block.end:
                    bounds.next_header = tar.offset
                    break
            bounds.global_pax = dict(tar.pax_headers)


def _decompressed(path: Path) -> io.BufferedReader:
    """A large-buffered, decompressed stream of a tar archive.

    Decompressing through ``lzma``/``gzip``/``bz2`` file objects with a 1 MiB buffer is
    about 15% faster than tarfile's own ``r|xz`` stream, which reads 10 KiB at a time.
    """
    with path.open("rb") as probe:
        magic = probe.read(6)
    opener: Any
    if magic.startswith(b"\xfd7zXZ"):
        opener = lzma.LZMAFile
    elif magic.startswith(b"\x1f\x8b"):
        opener = gzip.GzipFile
    elif magic.startswith(b"BZh"):
        opener = bz2.BZ2File
    else:
        return io.BufferedReader(io.FileIO(path), buffer_size=1 << 20)
    return io.BufferedReader(opener(path), buffer_size=1 << 20)


def _member_rel(name: str, skipped: list[Skipped]) -> str | None:
    reason = _unsafe(name)
    if reason:
        skipped.append(Skipped(name, "unsafe path", f"{reason}; member skipped"))
        return None
    parts = _strip_top(name.replace("\\", "/").split("/"))
    return "/".join(parts) if parts else None


def _iter_zip(path: Path, skipped: list[Skipped]) -> Iterator[Entry]:
    try:
        archive = zipfile.ZipFile(path)
    except (zipfile.BadZipFile, OSError) as exc:
        raise SourceError(f"{path}: not a readable zip archive ({exc})") from exc
    with archive:
        for info in archive.infolist():
            rel = _member_rel(info.filename, skipped)
            if rel is not None and info.is_dir() and _is_bench_dir(rel):
                yield Entry(path=rel.rstrip("/"), size=0, read=bytes, is_dir=True)
                continue
            if rel is None or info.is_dir() or not wanted(rel):
                continue
            try:
                data = archive.read(info)
            except (zipfile.BadZipFile, OSError, EOFError, ValueError) as exc:
                skipped.append(Skipped(rel, "corrupt archive", f"member unreadable ({exc})"))
                continue
            yield Entry(path=rel, size=info.file_size, read=lambda data=data: data)


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

"""gpuscale's caches on disk, in the user's cache folder: the tables a raw round was read
into (``gpuscale.mlperf.load``), and what a report's figure drew and what a workload's slow
analysis half found (``gpuscale.report``), each keyed by what it was made from and by the
code that made it.

A key is the SHA-256 of the code's fingerprint (every source and data file of the
installed ``gpuscale``: a raw round's tables depend on the data that names accelerators
and workloads as much as on the code; and the versions of the libraries that read,
score, draw and analyse: mlperf-logging's rules above all) and of the pickled inputs
(the same tables pickle to the same bytes), so a changed log, option or line of code is
a miss, never a stale figure. Entries are pickles written atomically, each after the
SHA-256 of its bytes; an entry that cannot be read or whose bytes no longer match it (a
damaged disk block: one flipped bit in a pickled table is a wrong number, not an error)
is a miss, and a cache that cannot be written is no cache (the work is done all the same,
and no partial file is left). At most ``Cache.most`` entries are kept
(:data:`MAX_ENTRIES` unless said), the least recently used (read or written) dropped
first. A writer killed before it could remove its partial file (SIGKILL) leaves a
``.tmp`` behind: each write removes those not written to for :data:`STALE_TMP_S` (no live
writer takes that long to write one entry).
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import logging
import os
import pickle
import tempfile
import time
from dataclasses import dataclass
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)

MAX_ENTRIES = 2000  # ~100 reports' figures, ~60 KB each
DIGEST_BYTES = 32  # an entry's SHA-256, before its pickle
STALE_TMP_S = 3600.0  # a partial entry untouched this long has no live writer
# the libraries that draw and analyse, and those a raw round is read and scored with:
# mlperf-logging's rules of every round (a newer one checks and scores the same logs
# otherwise), and the parsers of its logs and rule files
LIBRARIES = (
    "numpy",
    "pandas",
    "matplotlib",
    "scipy",
    "jinja2",
    "mlperf-logging",
    "PyYAML",
    "pyarrow",
    "msgspec",
    "orjson",
)
# the package's code and data (the accelerator catalogue, epoch sizes... read into a round's
# tables); the inputs themselves are hashed apart
SOURCES = (".py", ".c", ".html", ".css", ".js", ".csv", ".json", ".parquet")


def default_folder(kind: str = "report") -> Path:
    """``$XDG_CACHE_HOME/gpuscale/KIND``, else ``~/.cache/gpuscale/KIND`` (``report``: a
    report's figures and analyses; ``tables``: raw rounds read). A relative
    ``$XDG_CACHE_HOME`` is ignored, as the XDG rules say: ``~/.cache`` quoted in a config
    file would make a folder named ``~`` in whatever folder a command ran in."""
    base = os.environ.get("XDG_CACHE_HOME", "")
    if not os.path.isabs(base):
        base = str(Path.home() / ".cache")
    return Path(base) / "gpuscale" / kind


@functools.cache
def code_fingerprint() -> bytes:
    """SHA-256 of every source and data file of the ``gpuscale`` package and of the
    versions of the libraries it reads, scores, draws and analyses with (~40 ms on the
    loaded 2-core machine, once a process)."""
    return fingerprint_of(Path(__file__).resolve().parents[1])  # the gpuscale package


def fingerprint_of(root: Path) -> bytes:
    """SHA-256 of the files under ``root`` whose suffix is in :data:`SOURCES` (their
    paths and bytes) and of the libraries' versions."""
    digest = hashlib.sha256()
    for path in sorted(p for p in root.rglob("*") if p.suffix in SOURCES):
        digest.update(str(path.relative_to(root)).encode())
        digest.update(path.read_bytes())
    for name in LIBRARIES:
        try:
            digest.update(f"{name}={version(name)}".encode())
        except PackageNotFoundError:
            digest.update(f"{name}=none".encode())
    return digest.digest()


@dataclass(frozen=True, slots=True)
class Cache:
    """A cache folder, or ``None`` for none (every ``get`` a miss, ``put`` a no-op), keeping
    at most ``most`` entries."""

    folder: Path | None = None
    most: int = MAX_ENTRIES

    def key(self, *inputs: object) -> str:
        """The key of a result made from ``inputs`` (picklable) by this code; ``""``
        without a folder (nothing to look up: the inputs are not even pickled)."""
        if self.folder is None:
            return ""
        digest = hashlib.sha256(code_fingerprint())
        digest.update(pickle.dumps(inputs, protocol=5))
        return digest.hexdigest()

    def has(self, key: str) -> bool:
        """Whether an entry is stored under ``key`` (unread: it may yet prove damaged). A
        folder this user may not enter holds none (``os.path.isfile``: False where
        ``Path.is_file`` raises PermissionError, as ``get`` misses and ``put`` stores none)."""
        entry = self.folder / f"{key}.pickle" if self.folder is not None and key else None
        return entry is not None and os.path.isfile(entry)

    def get(self, key: str) -> Any | None:
        """The value stored under ``key``, or None (always without a folder or a key)."""
        if self.folder is None or not key:
            return None
        entry = self.folder / f"{key}.pickle"
        try:
            stored = entry.read_bytes()
            digest, payload = stored[:DIGEST_BYTES], memoryview(stored)[DIGEST_BYTES:]
            if hashlib.sha256(payload).digest() != digest:
                raise ValueError("its bytes do not match their SHA-256")
            value = pickle.loads(payload)
        except FileNotFoundError:
            return None
        except Exception as exc:  # a damaged entry is a miss, rewritten after the work
            log.info("cache entry %s unreadable (%s): recomputed", key, exc)
            return None
        with contextlib.suppress(OSError):  # used now: outlives the entries read once since
            os.utime(entry)
        return value

    def put(self, key: str, value: object) -> None:
        """Store ``value`` under ``key`` (atomically; a folder that refuses it is no cache;
        no key: nothing stored)."""
        if self.folder is None or not key:
            return
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            payload = pickle.dumps(value, protocol=5)
            fd, name = tempfile.mkstemp(dir=self.folder, suffix=".tmp")
            try:
                with open(fd, "wb") as out:  # closing flushes: a full disk may refuse then
                    out.write(hashlib.sha256(payload).digest())
                    out.write(payload)
                os.replace(name, self.folder / f"{key}.pickle")
            except BaseException:  # a full disk, Ctrl-C: no .tmp left behind
                with contextlib.suppress(OSError):
                    os.unlink(name)
                raise
            self._trim()
        except OSError as exc:
            log.info("cache %s not written (%s)", self.folder, exc)

    def _trim(self) -> None:
        """Drop the least recently used entries beyond ``most``, and the partial entries
        of killed writers (``.tmp`` untouched for :data:`STALE_TMP_S`)."""
        assert self.folder is not None
        stale = time.time() - STALE_TMP_S
        for partial in self.folder.glob("*.tmp"):
            with contextlib.suppress(OSError):  # gone already, or not ours to remove
                if partial.stat().st_mtime < stale:
                    partial.unlink()
        entries = list(self.folder.glob("*.pickle"))
        if len(entries) <= self.most:
            return
        entries.sort(key=lambda p: p.stat().st_mtime)
        for old in entries[: len(entries) - self.most * 3 // 4]:
            old.unlink(missing_ok=True)


def source_identity(path: Path) -> tuple[object, ...] | None:
    """What a raw source is, for a cache key: an archive's resolved path, size and
    modification time (ns); a folder's resolved path and each file's relative path, size
    and modification time under it (links to files followed, as the readers follow them; a
    link to a folder, or one that leads nowhere, by where it points: the readers report
    or follow it, and a folder holding one is kept all the same). None where any of it
    cannot be read (no key: read afresh)."""
    try:
        root = path.resolve()
        if not root.is_dir():
            stat = root.stat()
            return (str(root), stat.st_size, stat.st_mtime_ns)
        files: list[tuple[object, ...]] = []
        for folder, dirs, names in os.walk(root):
            for name in (*names, *dirs):
                item = Path(folder) / name
                rel = os.path.relpath(item, root)
                if item.is_symlink() and (name in dirs or not item.exists()):
                    files.append((rel, "link", os.readlink(item)))
                elif name in names:
                    stat = item.stat()
                    files.append((rel, stat.st_size, stat.st_mtime_ns))
        return (str(root), tuple(sorted(files)))  # each relative path once
    except OSError:
        return None

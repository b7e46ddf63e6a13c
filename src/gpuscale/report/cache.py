"""The report's cache on disk: what a figure drew and what a workload's slow analysis
half found, keyed by what they were made from and by the code that made them.

A key is the SHA-256 of the code's fingerprint (every source file of the installed
``gpuscale`` and the versions of the libraries that draw and analyse) and of the pickled
inputs (the same tables pickle to the same bytes), so a changed log, option or line of
code is a miss, never a stale figure. Entries are pickles written atomically; an entry
that cannot be read is a miss, and a cache that cannot be written is no cache (the
report is written all the same). At most :data:`MAX_ENTRIES` are kept, the least
recently written dropped first.
"""

from __future__ import annotations

import functools
import hashlib
import logging
import os
import pickle
import tempfile
from dataclasses import dataclass
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

import gpuscale

log = logging.getLogger(__name__)

MAX_ENTRIES = 2000  # ~100 reports' figures, ~60 KB each
LIBRARIES = ("numpy", "pandas", "matplotlib", "scipy", "jinja2")
SOURCES = (".py", ".c", ".html", ".css", ".js")  # the inputs are hashed themselves


def default_folder() -> Path:
    """``$XDG_CACHE_HOME/gpuscale/report``, else ``~/.cache/gpuscale/report``."""
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "gpuscale" / "report"


@functools.cache
def code_fingerprint() -> bytes:
    """SHA-256 of every source and data file of the ``gpuscale`` package (~5 ms) and of
    the versions of the libraries it draws and analyses with."""
    digest = hashlib.sha256()
    root = Path(gpuscale.__file__).parent
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
    """A cache folder, or ``None`` for none (every ``get`` a miss, ``put`` a no-op)."""

    folder: Path | None = None

    def key(self, *inputs: object) -> str:
        """The key of a result made from ``inputs`` (picklable) by this code; ``""``
        without a folder (nothing to look up: the inputs are not even pickled)."""
        if self.folder is None:
            return ""
        digest = hashlib.sha256(code_fingerprint())
        digest.update(pickle.dumps(inputs, protocol=5))
        return digest.hexdigest()

    def has(self, key: str) -> bool:
        """Whether an entry is stored under ``key`` (unread: it may yet prove damaged)."""
        return self.folder is not None and bool(key) and (self.folder / f"{key}.pickle").is_file()

    def get(self, key: str) -> Any | None:
        """The value stored under ``key``, or None (always without a folder or a key)."""
        if self.folder is None or not key:
            return None
        try:
            return pickle.loads((self.folder / f"{key}.pickle").read_bytes())
        except FileNotFoundError:
            return None
        except Exception as exc:  # a damaged entry is a miss, rewritten after the work
            log.info("cache entry %s unreadable (%s): recomputed", key, exc)
            return None

    def put(self, key: str, value: object) -> None:
        """Store ``value`` under ``key`` (atomically; a folder that refuses it is no cache)."""
        if self.folder is None:
            return
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            with tempfile.NamedTemporaryFile(dir=self.folder, suffix=".tmp", delete=False) as f:
                f.write(pickle.dumps(value, protocol=5))
            os.replace(f.name, self.folder / f"{key}.pickle")
            self._trim()
        except OSError as exc:
            log.info("report cache %s not written (%s)", self.folder, exc)

    def _trim(self) -> None:
        assert self.folder is not None
        entries = list(self.folder.glob("*.pickle"))
        if len(entries) <= MAX_ENTRIES:
            return
        entries.sort(key=lambda p: p.stat().st_mtime)
        for old in entries[: len(entries) - MAX_ENTRIES * 3 // 4]:
            old.unlink(missing_ok=True)

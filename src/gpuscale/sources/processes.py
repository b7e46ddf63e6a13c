"""One process tree, one fate: children that end with their parent, and private working
folders that a killed run's successor removes.

* :func:`die_with_parent` (in a child; :func:`die_with_runner` in a rank) and
  :func:`lifeline` (a ``preexec_fn`` for ``subprocess.Popen``): the child is killed
  when its parent ends, however it ends (SIGKILL included). Linux: the kernel's
  parent-death signal (``prctl(PR_SET_PDEATHSIG)``); elsewhere a thread that watches
  the parent's pid and ends the child when it changes.
* :func:`run_folder`: a fresh folder that its process holds locked (``flock``) while it
  lives and removes when it is done; :func:`remove_stale` removes the folders of a
  pattern that no live process holds (their owner was killed before it could), and
  :func:`remove_stale_runs` the run folders so left.
* :func:`limit_memory`: a cap on the memory a process running a user's code allocates.
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import fcntl
import os
import resource
import shutil
import signal
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

_PR_SET_PDEATHSIG = 1
# Where the parent folder cannot be locked (:func:`_making_in`), an empty folder younger
# than this is never taken for stale: its owner may be between creating it and locking it.
# One holding anything (beyond the marker) was locked before it was written to.
_GRACE_S = 2.0


def _prctl() -> Callable[..., int] | None:
    """libc's ``prctl`` (Linux), resolved now: a ``preexec_fn`` must not load libraries."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or None, use_errno=True)
        return libc.prctl
    except (OSError, AttributeError):
        return None


_PRCTL = _prctl()


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # exists, someone else's (reused pid: rare, harmless)
        return True
    return True


def _watch(parent: int, also: int | None, interval_s: float) -> None:
    while os.getppid() == parent and (also is None or _alive(also)):
        time.sleep(interval_s)
    os._exit(128 + signal.SIGKILL)


def die_with_parent(
    also: int | None = None,
    *,
    parent: int | None = None,
    watch: bool = False,
    interval_s: float = 1.0,
) -> None:
    """End this process when its parent ends (and, where ``also`` is given, when that
    process ends too: e.g. a rank's runner, two levels up). The parent-death signal on
    Linux; a watching thread elsewhere, for ``also``, and with ``watch`` (the kernel's
    signal fires when the parent's *thread* that started this process ends: a process
    pool's workers, started by whichever thread first used the pool, watch instead).

    A process whose parent died before this call was already handed to another (init):
    the signal would never come. It ends now where ``parent`` (its starter's pid, passed
    down) is given and is no longer its parent, or where ``also`` is already gone."""
    expected = os.getppid() if parent is None else parent
    armed = not watch and _PRCTL is not None
    armed = armed and _PRCTL(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0) == 0  # type: ignore[misc]
    if os.getppid() != expected or (also is not None and not _alive(also)):
        os._exit(128 + signal.SIGKILL)  # the parent (or ``also``) died before this call
    if armed and also in (None, expected):
        return
    threading.Thread(
        target=_watch, args=(expected, also, interval_s), name="gpuscale-lifeline", daemon=True
    ).start()


RUNNER_PID = "GPUSCALE_RUNNER_PID"


def die_with_runner() -> None:
    """In a rank (started by torchrun, itself started by a ``gpuscale`` command): end
    with its launcher, and with the command whose pid the launcher's environment carries
    (``RUNNER_PID``): a rank still starting when the launcher was killed never armed the
    launcher's death signal, and ends when it finds the command gone."""
    runner = os.environ.get(RUNNER_PID, "")
    die_with_parent(also=int(runner) if runner.isdigit() else None)


def lifeline(parent: int | None = None) -> Callable[[], None] | None:
    """A ``preexec_fn`` that has the child killed (SIGKILL) when ``parent`` (this
    process) ends; None where the kernel offers no parent-death signal (the child must
    then watch for itself: :func:`die_with_parent`)."""
    if _PRCTL is None:
        return None
    pid = parent or os.getpid()
    prctl = _PRCTL

    def arm() -> None:
        prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        if os.getppid() != pid:  # the parent was gone before the signal was armed
            os._exit(128 + signal.SIGKILL)

    return arm


def _locked(folder: Path) -> int | None:
    """An open descriptor of ``folder`` holding its exclusive lock, or None when another
    process holds it (or the folder is gone)."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(fd)
        return None
    return fd


@contextlib.contextmanager
def _making_in(parent: Path) -> Iterator[bool]:
    """Hold ``parent``'s own lock (``flock`` on the folder) while a folder is made and
    locked in it (:func:`new_folder`) or its folders are judged (:func:`remove_stale`):
    a folder found unlocked then is no live process's, however young (its maker locked it
    before letting go). Yields False where ``parent`` cannot be locked (no such folder,
    no permission): the judge then keeps young empty folders (``_GRACE_S``)."""
    try:
        fd = os.open(parent, os.O_RDONLY)
    except OSError:
        yield False
        return
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)  # held by a maker for microseconds
        except OSError:
            yield False
            return
        yield True
    finally:
        os.close(fd)


def new_folder(parent: Path, prefix: str) -> tuple[Path, int]:
    """A fresh folder ``parent/PREFIX*`` and the descriptor that holds it locked
    (:func:`hold`) while it stays open: no other run takes it for a killed run's."""
    with _making_in(parent):
        folder = Path(tempfile.mkdtemp(prefix=prefix, dir=parent))
        return folder, hold(folder)


def _holds_anything(folder: Path, besides: str | None = None) -> bool:
    try:
        return any(entry.name != besides for entry in folder.iterdir())
    except OSError:
        return True  # unreadable: the lock decides


def hold(folder: Path) -> int:
    """Lock ``folder`` (just created by this process) for as long as the returned
    descriptor stays open: :func:`remove_stale` then leaves it alone."""
    fd = _locked(folder)
    if fd is None:
        raise OSError(f"cannot lock {folder}")
    return fd


def remove_stale(parent: Path, pattern: str, marker: str | None = None) -> list[Path]:
    """Remove the folders of ``parent`` matching ``pattern`` (and holding the file
    ``marker``, where given) that no live process holds (:func:`hold`); return them.
    Another user's, or one that cannot be removed, is left as it is."""
    with _making_in(parent) as judged_alone:
        return _remove_unheld(parent, pattern, marker, grace=not judged_alone)


def _remove_unheld(parent: Path, pattern: str, marker: str | None, grace: bool) -> list[Path]:
    """:func:`remove_stale`'s work; ``grace``: keep young empty folders (their maker may
    not have locked them yet)."""
    removed: list[Path] = []
    try:
        candidates = list(parent.glob(pattern))
    except OSError:
        return removed
    now = time.time()
    for folder in candidates:
        try:
            info = folder.lstat()
        except OSError:
            continue
        if not folder.is_dir() or folder.is_symlink() or info.st_uid != os.getuid():
            continue
        if marker is not None and not (folder / marker).is_file():
            continue  # not one of ours, whatever its name
        young = now - info.st_mtime < _GRACE_S and now - info.st_ctime < _GRACE_S
        if grace and young and not _holds_anything(folder, besides=marker):
            continue
        fd = _locked(folder)
        if fd is None:
            continue  # a live run holds it
        try:
            shutil.rmtree(folder, ignore_errors=True)
        finally:
            os.close(fd)
        if not folder.exists():
            removed.append(folder)
    return removed


RUN_PREFIX = "gpuscale-run-"
_RUN_MARKER = ".gpuscale-run"


def remove_stale_runs(parent: Path | None = None) -> list[Path]:
    """Remove the run folders (:func:`run_folder`) that processes killed before they
    could clean up left in ``parent`` (default: the temporary directory)."""
    base = Path(parent or tempfile.gettempdir())
    return remove_stale(base, f"{RUN_PREFIX}*", marker=_RUN_MARKER)


@contextlib.contextmanager
def run_folder(kind: str, parent: Path | None = None) -> Iterator[Path]:
    """A fresh folder ``parent/gpuscale-run-KIND-*`` (default: the temporary directory)
    for one run (a bench launch, a parameter count), locked while the run lives and
    removed after it; run folders of earlier runs whose process died without removing
    them (SIGKILL) are removed first."""
    base = Path(parent or tempfile.gettempdir())
    remove_stale_runs(base)
    folder, fd = new_folder(base, f"{RUN_PREFIX}{kind}-")
    try:
        (folder / _RUN_MARKER).touch()
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)
        os.close(fd)


def physical_memory() -> int | None:
    """Bytes of memory this host has (None where the system does not say)."""
    try:
        return os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return None


def available_memory() -> int | None:
    """Bytes of memory this host can give now without swapping (Linux's ``MemAvailable``:
    free memory and the caches it can drop), else its free pages; None where the system
    says neither."""
    try:
        with open("/proc/meminfo", encoding="ascii") as meminfo:
            for line in meminfo:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return None


def limit_memory(limit_bytes: int | None) -> None:
    """Cap the memory this process may allocate at ``limit_bytes`` (its data segment:
    heap and private mappings, where Python and PyTorch allocate; shared libraries and a
    GPU's memory are not counted): past it an allocation fails (``MemoryError``, or
    PyTorch's "can't allocate memory") instead of the host running out. None: no cap."""
    if limit_bytes is None:
        return
    kind = resource.RLIMIT_DATA if sys.platform.startswith("linux") else resource.RLIMIT_AS
    _, hard = resource.getrlimit(kind)
    soft = limit_bytes if hard == resource.RLIM_INFINITY else min(limit_bytes, hard)
    resource.setrlimit(kind, (soft, hard))

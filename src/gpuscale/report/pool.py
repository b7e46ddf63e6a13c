"""The processes a report runs in: this one (the analysis) and forked figure workers.

The analysis runs in this process: with the clusters in numpy
(``gpuscale.analysis.clusters``) it has nothing slow to import, so a worker forked to
import ahead of the load would cost more CPU than it saves.
"""

from __future__ import annotations

import atexit
import multiprocessing
import os
import shutil
import signal
import tempfile
from collections.abc import Callable
from concurrent.futures import Executor, Future, ProcessPoolExecutor
from functools import partial

from gpuscale.sources.processes import die_with_parent


class Inline(Executor):
    """Runs each task at once, in this process (one worker, or no ``fork``)."""

    def submit(self, fn, /, *args, **kwargs):  # type: ignore[no-untyped-def]
        future: Future = Future()
        try:
            future.set_result(fn(*args, **kwargs))
        except BaseException as exc:  # handed to whoever asks for the result
            future.set_exception(exc)
        return future


class Later:
    """A call made here when its result is asked for: work that could be a worker's
    :class:`Future`, done in this process at the point its result is needed."""

    def __init__(self, fn: Callable[..., object], /, *args: object) -> None:
        self._call = partial(fn, *args)

    def result(self) -> object:
        return self._call()


def _worker_signals(main: int, then: Callable[[], None] | None = None) -> None:
    """In a worker: it ends with the main process however that ends (SIGKILL included:
    a pool worker would otherwise wait on its task pipe forever); Ctrl-C (sent to the
    whole process group) is the main process's to handle, and SIGTERM ends the worker at
    once (no traceback from either); then ``then``. ``main``: the main process's pid (a
    worker forked just before the main process died has another parent already)."""
    die_with_parent(parent=main, watch=True, interval_s=0.5)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    if then is not None:
        then()


def _forked(workers: int, initializer: Callable[[], None] | None = None) -> Executor:
    if "fork" not in multiprocessing.get_all_start_methods():
        return Inline()
    return ProcessPoolExecutor(
        max_workers=workers,
        mp_context=multiprocessing.get_context("fork"),
        initializer=partial(_worker_signals, os.getpid(), initializer),
    )


def figure_executor(workers: int) -> Executor:
    """``workers - 1`` processes forked from this one (they inherit its imports and
    data) to draw figures while this one analyses, or the inline executor for one
    worker or no ``fork``; matplotlib given a folder it can write (:func:`matplotlib_home`)."""
    matplotlib_home()
    return _forked(workers - 1) if workers > 1 else Inline()


def matplotlib_home() -> None:
    """``MPLCONFIGDIR``, where unset and matplotlib cannot make and write its folders (its
    config: ``$XDG_CONFIG_HOME/matplotlib``, else ``~/.config/matplotlib``; its cache, the
    font list: ``$XDG_CACHE_HOME/matplotlib``, else ``~/.cache/matplotlib``), set to a
    temporary one removed at exit, as matplotlib itself then does, without the two lines
    it prints about it into a report's output (a home or cache folder it cannot write)."""
    if os.environ.get("MPLCONFIGDIR"):  # set (empty is unset, to matplotlib too)
        return
    bases = (("XDG_CONFIG_HOME", "~/.config"), ("XDG_CACHE_HOME", "~/.cache"))
    folders = [
        os.path.join(os.environ.get(name) or os.path.expanduser(home), "matplotlib")
        for name, home in bases
    ]
    if not all(map(_writable_folder, folders)):
        folder = tempfile.mkdtemp(prefix="gpuscale-matplotlib-")
        atexit.register(shutil.rmtree, folder, ignore_errors=True)  # forked workers: not theirs
        os.environ["MPLCONFIGDIR"] = folder


def _writable_folder(folder: str) -> bool:
    """Whether ``folder`` is, or can be made, a folder this process can write."""
    try:
        os.makedirs(folder, exist_ok=True)
    except OSError:
        return False
    return os.path.isdir(folder) and os.access(folder, os.W_OK)

"""The processes a report runs in: figure workers, and one analysis worker started early.

Importing this module is cheap (no pandas, matplotlib or scikit-learn), so a caller can
start :func:`analysis_executor` before its own heavy imports: the worker imports pandas
and scikit-learn (the clusters) on the second core while the caller imports pandas and
matplotlib and loads its data on the first.
"""

from __future__ import annotations

import multiprocessing
import os
import signal
from collections.abc import Callable
from concurrent.futures import Executor, Future, ProcessPoolExecutor
from functools import partial

from threadpoolctl import threadpool_limits

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


def _worker_signals(then: Callable[[], None] | None = None) -> None:
    """In a worker: it ends with the main process however that ends (SIGKILL included:
    a pool worker would otherwise wait on its task pipe forever); Ctrl-C (sent to the
    whole process group) is the main process's to handle, and SIGTERM ends the worker at
    once (no traceback from either); then ``then``."""
    die_with_parent(watch=True, interval_s=0.5)
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
        initializer=partial(_worker_signals, initializer),
    )


def figure_executor(workers: int) -> Executor:
    """``workers`` processes forked from this one (they inherit its imports and data)
    to draw figures, or the inline executor for one worker or no ``fork``."""
    return _forked(workers) if workers > 1 else Inline()


def _analysis_worker_init() -> None:
    # lazy: the slow import (scikit-learn) a forked analysis worker loads once, here
    import sklearn.cluster
    import sklearn.metrics

    import gpuscale.analysis.analyze  # loaded once per worker too, beside those

    del sklearn, gpuscale  # imported for their side effect: loaded in this process
    # One thread for OpenMP and BLAS: a forked child must not use the OpenMP thread pool
    # of a parent that already ran K-means (GNU libgomp then waits forever on threads
    # that were not forked), and a few dozen points need no threads anyway.
    threadpool_limits(1)


def analysis_executor() -> Executor:
    """One forked process that imports the analysis' heavy libraries now, for
    ``build_report(analysis=...)``; inline where there is one core or no ``fork``."""
    if (os.cpu_count() or 1) < 2:
        return Inline()
    pool = _forked(1, _analysis_worker_init)
    pool.submit(int)  # start the process (and its imports) now, not at the first task
    return pool

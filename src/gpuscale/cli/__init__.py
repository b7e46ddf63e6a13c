"""The ``gpuscale`` command line: parse options, call the library, print. Nothing else.

``common`` holds the app and what the commands share, ``output`` prints tables
(``analysis_output``, ``bench_output``: per table kind); ``rounds`` (MLPerf), ``energy_trends``
(energy, trends), ``bench``,
``interconnect`` (collectives, topo), ``advice`` and ``plan`` register their commands on import.
"""

from __future__ import annotations

import contextlib
import gc
import multiprocessing
import os
import signal
import sys

# Import order is registration order, the order --help lists the commands in.
# isort: off
from gpuscale.cli import rounds  # noqa: F401
from gpuscale.cli import energy_trends  # noqa: F401
from gpuscale.cli import bench  # noqa: F401
from gpuscale.cli import interconnect  # noqa: F401
from gpuscale.cli import advice  # noqa: F401
from gpuscale.cli import plan  # noqa: F401

# isort: on
from gpuscale.cli.common import app, err
from gpuscale.cli.options import help_paragraphs

for _registered in app.registered_commands:  # every command's help, however registered
    _doc = _registered.help or (_registered.callback and _registered.callback.__doc__)
    _registered.help = help_paragraphs(_doc) if _doc else None

__all__ = ["app", "main"]


# The signals that end a command cleanly, and what it then says.
_SIGNALS = {signal.SIGINT: "interrupted", signal.SIGTERM: "terminated"}
if hasattr(signal, "SIGHUP"):  # the terminal closed, the ssh session dropped
    _SIGNALS[signal.SIGHUP] = "hung up"


class Stopped(BaseException):
    """SIGINT, SIGTERM or SIGHUP: unwinds the command (``finally`` blocks remove temporary
    folders; Click's ``Abort`` handling does not catch it) to a one-line message."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.code = 128 + signum


def _stop(signum: int, frame: object) -> None:
    for each in _SIGNALS:  # one message, however often pressed
        signal.signal(each, signal.SIG_IGN)
    raise Stopped(signum)


def _exit_now(code: int) -> None:
    """Leave at once after a signal: the command has unwound (its ``finally`` blocks removed
    temporary folders), so end the worker processes and skip the interpreter's shutdown,
    where a process pool's manager thread, stopped mid-task, could abort the interpreter
    (seen once under load: SIGABRT instead of exit 130)."""
    for child in multiprocessing.active_children():
        child.kill()
    for child in multiprocessing.active_children():
        child.join(timeout=5)
    with contextlib.suppress(OSError):
        sys.stdout.flush()
        sys.stderr.flush()
    os._exit(code)


def main() -> None:
    """Console-script entry point: SIGINT, SIGTERM and SIGHUP end the command with one
    line and exit 130/143/129, temporary folders removed, the previous output intact.
    (SIGKILL cannot be caught: the children end with this process all the same, and the
    next run removes the temporary folders; see ``gpuscale.sources.processes``.)"""
    for signum in _SIGNALS:
        signal.signal(signum, _stop)
    try:
        app()
    except (Stopped, KeyboardInterrupt) as exc:
        code = exc.code if isinstance(exc, Stopped) else 130
        with contextlib.suppress(OSError):  # a hung-up terminal takes no message
            err.print(_SIGNALS.get(code - 128, "terminated"), highlight=False)
        _exit_now(code)
    finally:
        # The interpreter's final garbage collection walks every object of the scientific
        # stack (~0.3 s after a report) just before the memory is handed back anyway.
        gc.freeze()

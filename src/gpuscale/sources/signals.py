"""A command that ends cleanly on the signals that stop a program from outside: SIGINT
(Ctrl-C), SIGTERM (``kill``) and SIGHUP (the terminal closed, the ssh session dropped).

:func:`run_until_signalled` unwinds the command at the first of them (``finally`` blocks
remove temporary folders), says so in one line and exits with 128 + the signal's number;
its worker processes end with it. SIGKILL cannot be caught: children end with the process
all the same (``processes.die_with_parent``) and the next run removes what it left.
"""

from __future__ import annotations

import contextlib
import gc
import multiprocessing
import os
import signal
import sys
from collections.abc import Callable

from gpuscale.quantities import filled
from gpuscale.tables.commands import quoted_path

# The signals that end a command cleanly, and what it then says.
SIGNALS = {signal.SIGINT: "interrupted", signal.SIGTERM: "terminated"}
if hasattr(signal, "SIGHUP"):
    SIGNALS[signal.SIGHUP] = "hung up"


class Stopped(BaseException):
    """SIGINT, SIGTERM or SIGHUP: unwinds the command (Click's ``Abort`` handling does not
    catch a ``BaseException``) to a one-line message."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.code = 128 + signum


_NOTES: list[Callable[[], str]] = []  # what the command's line says after the signal's word


def note_on_stop(note: Callable[[], str]) -> None:
    """Have the line a signal ends this command with go on with ``note()`` (e.g. the rows
    a sweep kept and how to measure the rest), computed when the signal comes."""
    _NOTES.append(note)


def _notes() -> str:
    said = ""
    for note in _NOTES:
        with contextlib.suppress(Exception):  # a note that fails leaves the line as it was
            said += note()
    return said


def _stop(signum: int, frame: object) -> None:
    for each in SIGNALS:  # one message, however often pressed
        signal.signal(each, signal.SIG_IGN)
    raise Stopped(signum)


def _exit_now(code: int) -> None:
    """Leave at once after a signal: the command has unwound, so end the worker processes
    and skip the interpreter's shutdown, where a process pool's manager thread, stopped
    mid-task, could abort the interpreter (seen once under load: SIGABRT, not exit 130)."""
    for child in multiprocessing.active_children():
        child.kill()
    for child in multiprocessing.active_children():
        child.join(timeout=5)
    with contextlib.suppress(OSError):
        sys.stdout.flush()
        sys.stderr.flush()
    os._exit(code)


def reader_gone(console: object) -> None:
    """A console whose reader went (``| head -1``) says no more and its file writes to
    /dev/null, so no later flush fails again; the command goes on, its exit status its own
    (rich's ``Console.on_broken_pipe``, which this replaces, exits with 1 and no word)."""
    console.quiet = True  # type: ignore[attr-defined]
    _to_devnull(console.file)  # type: ignore[attr-defined]


def _to_devnull(file: object) -> None:
    with contextlib.suppress(OSError, ValueError):  # closed already: nothing to drop
        os.dup2(os.open(os.devnull, os.O_WRONLY), file.fileno())  # type: ignore[attr-defined]


def run_until_signalled(command: Callable[[], object], say: Callable[[str], None]) -> None:
    """Run ``command``; SIGINT, SIGTERM and SIGHUP end it with one line (``say``:
    "interrupted", "terminated", "hung up") and exit 130/143/129, temporary folders
    removed, the previous output intact; what the machine refuses to read or write (a
    full disk, a name too long for the file system) with one line and exit 2, never a
    traceback."""
    for signum in SIGNALS:
        signal.signal(signum, _stop)
    _NOTES.clear()
    try:
        command()
    except (Stopped, KeyboardInterrupt) as exc:
        code = getattr(exc, "code", 130)  # a KeyboardInterrupt: SIGINT's
        with contextlib.suppress(OSError):  # a hung-up terminal takes no message
            say(SIGNALS.get(code - 128, "terminated") + _notes())
        _exit_now(code)
    except OSError as exc:  # what the machine refused: a full disk, a name too long
        name = quoted_path(exc.filename) if exc.filename else ""
        if len(name) > 60:
            name = f"{name[:60]}..."
        with contextlib.suppress(OSError):
            say(f"error: {exc.strerror or exc}{filled(': {}', name)}")
        _to_devnull(sys.stdout)  # stdout's own last flush
        raise SystemExit(2) from None
    finally:
        # The interpreter's final garbage collection walks every object of the scientific
        # stack (~0.3 s after a report) just before the memory is handed back anyway.
        gc.freeze()

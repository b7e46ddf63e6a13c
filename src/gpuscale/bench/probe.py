"""A user's model code runs only where it is guarded: the parameter count of a model that
is not on the ladder (``FILE.py:FACTORY``, ``PKG.MODULE:FACTORY``, ``torchvision:``,
``timm:``) is taken in a child process, never in the ``gpuscale`` process itself.

The child (``python -m gpuscale.bench.probe``) ends with its parent, caps its memory
(``--memory-limit``), builds the model on PyTorch's meta device (no parameter memory;
for real where the factory cannot build there) and writes the count, or what went
wrong, to a file. The parent gives the model's code ``--timeout`` seconds, counted from
when the child has started (Python and PyTorch loaded: up to ``STARTUP_S`` more, as a
launch's ranks get to come up), and reads how it ended: a
factory that hangs, exits (``sys.exit``, ``os._exit``), allocates past the cap, raises
(``KeyboardInterrupt`` too) or is killed is a :class:`ModelError` whose ``status``
(``timeout``, ``oom``, ``error``, ``crashed``) and message become its row. Importing
this module does not import torch.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from gpuscale.bench.config import ModelError
from gpuscale.bench.launch_events import is_out_of_memory, killed
from gpuscale.quantities import filled, format_bytes
from gpuscale.sources.processes import die_with_parent, lifeline, limit_memory, run_folder
from gpuscale.tables import BenchStatus

# The parameter count's memory cap when none is given: PyTorch's import and a model's
# construction on the meta device, where its parameters take no memory. On an H100 host
# (16 cores, CUDA PyTorch 2.11) importing torch and torchvision and building ResNet-50
# reached 1.5 GB of data segment with OpenBLAS's default threads; at a 1 GiB cap OpenBLAS
# gave up, under it with one thread (CHILD_THREADS) it did not.
PROBE_MEMORY_BYTES = 2 << 30
# A count needs no parallel BLAS: each OpenBLAS/OpenMP thread reserves its own buffers.
CHILD_THREADS = {"OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
# What a child's last line says when an allocation failed under the cap (OpenBLAS, C++, libc)
OUT_OF_MEMORY_SAID = ("memory allocation", "bad_alloc", "cannot allocate memory", "out of memory")
# The child's own start (Python, PyTorch's import: seconds, a minute on a loaded host),
# before the model's code runs: not the model's time, as torchrun's start in a launch.
STARTUP_S = 60.0


def count_parameters(name: str, *, timeout_s: float, memory_bytes: int | None) -> int:
    """Trainable parameters of model ``name``, counted in a guarded child (see the module
    docstring); :class:`ModelError` (with its ``status``) when that fails."""
    limit = memory_bytes or PROBE_MEMORY_BYTES
    with run_folder("probe") as folder:
        result, log = folder / "result.json", folder / "log"
        command = [sys.executable, "-m", "gpuscale.bench.probe", name, str(result), str(limit)]
        started = result.with_suffix(".started")  # the child touches it before the model
        with log.open("wb") as sink:
            proc = subprocess.Popen(
                command,
                stdout=sink,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                env={**os.environ, **CHILD_THREADS, "TMPDIR": str(folder)},
                preexec_fn=lifeline(),
                start_new_session=True,  # a terminal's Ctrl-C is the CLI's to handle
            )
            try:
                ended = _ended_in_time(proc, started, timeout_s)
            finally:
                _end(proc)
            if not ended:
                raise ModelError(
                    _late(name, timeout_s, started.exists()), status=BenchStatus.TIMEOUT
                )
        return _outcome(name, result, log, proc.returncode, limit)


def _ended_in_time(proc: subprocess.Popen[bytes], started: Path, timeout_s: float) -> bool:
    """Whether the child ended within ``timeout_s`` of the model's code starting (the
    ``started`` file), with ``STARTUP_S`` allowed before it starts."""
    deadline = time.monotonic() + STARTUP_S + timeout_s
    seen = False
    while (left := deadline - time.monotonic()) > 0:
        try:
            proc.wait(timeout=min(left, 0.1))
            return True
        except subprocess.TimeoutExpired:
            pass
        if not seen and started.exists():
            seen = True
            deadline = min(deadline, time.monotonic() + timeout_s)
    return False


def _late(name: str, timeout_s: float, began: bool) -> str:
    if began:
        return f"{name}: building the model ran past --timeout ({timeout_s:g} s) and was stopped"
    return (
        f"{name}: the process to build the model did not start within {STARTUP_S:g} s + "
        f"--timeout ({timeout_s:g} s) and was stopped (the host is busy?)"
    )


def _end(proc: subprocess.Popen[bytes]) -> None:
    """Kill the child and whatever it started (its own session), and reap it."""
    if proc.poll() is None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)  # the factory's own children, if any


def _outcome(name: str, result: Path, log: Path, code: int, limit: int) -> int:
    try:
        found = json.loads(result.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        found = None
    if isinstance(found, dict) and isinstance(found.get("params"), int):
        return found["params"]
    if isinstance(found, dict) and found.get("error"):
        status = found.get("status") or BenchStatus.ERROR
        raise ModelError(str(found["error"]), status=status)
    said = _last_line(log)
    if any(words in said.lower() for words in OUT_OF_MEMORY_SAID):
        raise ModelError(
            f"{name}: building the model failed to allocate memory under the "
            f"{format_bytes(limit)} memory limit (--memory-limit; give more); it printed: {said}",
            status=BenchStatus.OOM,
        )
    if code < 0:
        raise ModelError(
            f"{name}: the process building the model was {killed(-code)}"
            + filled("; it printed: {}", said),
            status=BenchStatus.CRASHED,
        )
    raise ModelError(
        f"{name}: the process building the model exited with code {code} before it was "
        "built (os._exit in the model's code?)" + filled("; it printed: {}", said),
        status=BenchStatus.CRASHED,
    )


def _last_line(log: Path) -> str:
    try:
        text = log.read_bytes()[-2000:].decode("utf-8", errors="replace")
    except OSError:
        return ""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return (lines or [""])[-1][:300]


def _count(name: str, limit: int, started: Path) -> dict[str, object]:
    """What the child writes: ``{"params": N}`` or ``{"status": ..., "error": ...}``;
    ``started`` is touched once PyTorch is loaded, when the model's code (and its
    ``--timeout``) begins."""
    # lazy: torch, in the child only (the CLI never imports the user's code)
    import torch

    from gpuscale.bench.models import load_model  # lazy: torch, as above

    started.touch()

    def counted(module: torch.nn.Module) -> dict[str, object]:
        params = sum(p.numel() for p in module.parameters() if p.requires_grad)
        if params == 0:  # refused here, not by DDP in every rank after launch
            return {
                "status": BenchStatus.ERROR,
                "error": f"{name} has no trainable parameter: nothing to train or synchronise "
                "across devices (give a model with parameters)",
            }
        return {"params": params}

    try:
        try:
            with torch.device("meta"):
                return counted(load_model(name).module)
        except Exception as exc:  # cannot build on the meta device? build it for real
            if is_out_of_memory(exc):
                raise
            return counted(load_model(name).module)
    except SystemExit as exc:
        return {"status": BenchStatus.ERROR, "error": f"{name} called sys.exit({exc.code!r})"}
    except BaseException as exc:  # KeyboardInterrupt, or any error of the model's code
        if is_out_of_memory(exc):
            return _oom(name, limit)
        if isinstance(exc, ModelError):
            return {"status": BenchStatus.ERROR, "error": str(exc)}
        said = filled(": {}", str(exc))
        return {"status": BenchStatus.ERROR, "error": f"{name} raised {type(exc).__name__}{said}"}


def _oom(name: str, limit: int) -> dict[str, object]:
    return {
        "status": BenchStatus.OOM,
        "error": f"{name}: building the model allocated past the {format_bytes(limit)} memory "
        "limit (--memory-limit)",
    }


def main(argv: list[str] | None = None) -> int:
    name, result, limit = argv or sys.argv[1:]
    die_with_parent()
    limit_memory(int(limit))
    outcome = _count(name, int(limit), Path(result).with_suffix(".started"))
    Path(result).write_text(json.dumps(outcome), encoding="utf-8")
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)  # threads the model's code started must not keep the child alive


if __name__ == "__main__":
    sys.exit(main())

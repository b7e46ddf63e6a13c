"""What a torchrun launch of the bench worker leaves behind, read by the runner: the log's
tail, the ranks' error files, and from them the cause of a failure (``oom``, ``error``,
``crashed``, ``timeout``) as the row that records it. (The worker's progress events per
node, ``started``, ``skipped``, ``row``, are read as they come: ``gpuscale.bench.launch``.)"""

from __future__ import annotations

import json
import re
import signal
from datetime import datetime, timezone
from pathlib import Path

from gpuscale.tables import BenchStatus


def is_out_of_memory(exc: BaseException | None) -> bool:
    """Whether an exception, or one it was raised from, says memory ran out: a device's
    (PyTorch's ``OutOfMemoryError``, "CUDA out of memory") or the host's (``MemoryError``,
    PyTorch's "can't allocate memory" under a memory limit)."""
    for _ in range(8):  # the chain of causes, never a loop
        if exc is None:
            return False
        text = str(exc).lower()
        if type(exc).__name__ in ("OutOfMemoryError", "MemoryError"):
            return True
        if "out of memory" in text or "can't allocate memory" in text:
            return True
        exc = exc.__cause__ or exc.__context__
    return False


def log_tail(log: Path) -> str:
    """The last 4000 characters of a launch's log (empty when there is none)."""
    return log.read_text(errors="replace")[-4000:] if log.exists() else ""


_NOISE = re.compile(r"^\s*([=\-*]{5,}|\[?W\d|warnings\.warn|\*{3,}|.*OMP_NUM_THREADS).*$")


_PEER = re.compile(r"connection (reset|closed)|broken pipe|timed out|peer|socket", re.I)


def _is_peer_failure(error: dict) -> bool:
    """A rank's error that only says another rank went away."""
    kind = str(error.get("type", ""))
    return kind.startswith("Dist") or bool(_PEER.search(str(error.get("message", ""))))


_ROOT_CAUSE = re.compile(
    r"Root Cause.*?rank\s*:\s*(\d+).*?exitcode\s*:\s*(-?\d+)", re.DOTALL | re.IGNORECASE
)


def killed(signum: int) -> str:
    """How a process ended by a signal is said: ``killed (signal 9: likely out of
    memory)`` (the kernel's OOM killer sends SIGKILL), ``killed (signal 11, SIGSEGV)``."""
    if signum == signal.SIGKILL:
        return f"killed (signal {signum}: likely out of memory)"
    name = signal.Signals(signum).name if signum in signal.valid_signals() else "?"
    return f"killed (signal {signum}, {name})"


def exit_cause(log_tail: str, status: str = "") -> tuple[str, str] | None:
    """The failing rank and how it ended, from torchrun's summary (its root cause: the
    first rank that failed, not the ranks torchrun then stopped)."""
    found = _ROOT_CAUSE.search(log_tail)
    if found is None:
        codes = re.findall(r"exitcode\s*:\s*(-?\d+)", log_tail)
        if not codes:
            return None
        rank, code = "?", int(codes[0])
    else:
        rank, code = found.group(1), int(found.group(2))
    if code < 0:
        return BenchStatus.CRASHED, f"rank {rank} was {killed(-code)}"
    return BenchStatus.CRASHED, (
        f"rank {rank} exited with code {code} without raising an exception (os._exit in "
        "the model's code, or a crash)"
    )


def cause(folder: Path, log_tail: str, status: str, started: bool = True) -> tuple[str, str]:
    """(row status, error message) of a failed launch. Out of memory on any rank is
    ``oom``; an exception of the model's own is ``error`` with its type and message; a rank
    killed by a signal or ending without an exception is ``crashed`` (the others then only
    report a lost peer), with the rank and its exit code or signal; otherwise the last
    meaningful line torchrun printed (never a separator line). ``started``: whether a
    model had started (a timeout before that is the launch's own)."""
    errors = []
    for path in sorted(folder.glob("error-*.json")):
        try:
            errors.append(json.loads(path.read_text(encoding="utf-8")))
        except (OSError, ValueError):
            continue
    if status == "timeout":
        if not started:
            return BenchStatus.TIMEOUT, (
                "the launch did not start its first model within --timeout + 60 s (torchrun's "
                "rendezvous or the process group hung) and was stopped"
            )
        return BenchStatus.TIMEOUT, "the model ran past --timeout and was stopped"

    def said(e: dict) -> str:
        kind = "" if e.get("type") == "ModelError" else f"{e.get('type')}: "
        limit = e.get("memory_limit")
        cap = f" (past its memory limit, {limit}: --memory-limit)" if e.get("host_oom") else ""
        return f"rank {e.get('rank')}: {kind}{e.get('message')}{cap}".rstrip(": ")

    oom = [e for e in errors if e.get("oom")]
    if oom:
        return BenchStatus.OOM, said(oom[0])
    own = [e for e in errors if not _is_peer_failure(e)]
    if own:
        return BenchStatus.ERROR, said(own[0])
    # the rank torchrun saw fail first here raised only a lost peer: the first failure was
    # elsewhere, on another node (a node's own rank that ended first is its root cause)
    root = _ROOT_CAUSE.search(log_tail)
    lost = [e for e in errors if root is not None and str(e.get("rank")) == root.group(1)]
    if lost:
        return BenchStatus.CRASHED, (
            "a rank lost its peers (a process on another node ended, or the connection to it "
            f"dropped): {said(lost[0])}"
        )
    ended = exit_cause(log_tail, status)
    if ended is not None:
        return ended
    if errors:
        return BenchStatus.CRASHED, f"{status}: a rank lost its peers: {said(errors[0])}"
    lines = [x for x in log_tail.splitlines() if x.strip() and not _NOISE.match(x)]
    detail = (lines or ["the launch ended without a message"])[-1].strip()
    return BenchStatus.CRASHED, f"{status}: {detail}"


def failure_row(key: str, config: dict[str, object], status: str, error: str) -> dict:
    return {
        "key": key,
        "status": str(status),
        "error": error[-500:],
        "config": config,
        "started_at": datetime.now(timezone.utc).isoformat(),
        "duration_s": None,
        "environment": {},
    }

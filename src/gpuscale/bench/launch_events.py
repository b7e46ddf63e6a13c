"""What a torchrun launch of the bench worker leaves behind, read by the runner: the
worker's progress events per node (``started``, ``skipped``, ``wrote``), the log's tail,
and the cause of a failure (``oom``, ``error``, ``crashed``, ``timeout``) as the row that
records it."""

from __future__ import annotations

import json
import re
from datetime import datetime, timezone
from pathlib import Path

from gpuscale.tables import BenchStatus


def events(progress: Path) -> list[tuple[str, str, str]]:
    """(event, key, extra) lines the worker wrote for this node: ``started`` (extra: the
    row's config as JSON), ``skipped`` (``--resume``) and ``wrote`` (the writer only)."""
    if not progress.exists():
        return []
    out = []
    for line in progress.read_text().splitlines():
        event, _, rest = line.partition("\t")
        key, _, extra = rest.partition("\t")
        out.append((event, key, extra))
    return out


def started_keys(progress: Path) -> list[str]:
    return [key for event, key, _ in events(progress) if event == "started"]


def log_tail(log: Path) -> str:
    """The last 4000 characters of a launch's log (empty when there is none)."""
    return log.read_text(errors="replace")[-4000:] if log.exists() else ""


_NOISE = re.compile(r"^\s*([=\-*]{5,}|\[?W\d|warnings\.warn|\*{3,}|.*OMP_NUM_THREADS).*$")


_PEER = re.compile(r"connection (reset|closed)|broken pipe|timed out|peer|socket", re.I)


def _is_peer_failure(error: dict) -> bool:
    """A rank's error that only says another rank went away."""
    kind = str(error.get("type", ""))
    return kind.startswith("Dist") or bool(_PEER.search(str(error.get("message", ""))))


def cause(folder: Path, log_tail: str, status: str) -> tuple[str, str]:
    """(row status, error message) of a failed launch. Out of memory on any rank is
    ``oom``; an exception of the model's own is ``error`` with its type and message; a rank
    killed by a signal is ``crashed`` (the others then only report a lost peer);
    otherwise the last meaningful line torchrun printed (never a separator line)."""
    errors = []
    for path in sorted(folder.glob("error-*.json")):
        try:
            errors.append(json.loads(path.read_text(encoding="utf-8")))
        except (OSError, ValueError):
            continue
    if status == "timeout":
        return BenchStatus.TIMEOUT, "the model ran past --timeout and was stopped"

    def said(e: dict) -> str:
        return f"rank {e.get('rank')}: {e.get('type')}: {e.get('message')}"

    oom = [e for e in errors if e.get("oom")]
    if oom:
        return BenchStatus.OOM, said(oom[0])
    own = [e for e in errors if not _is_peer_failure(e)]
    if own:
        return BenchStatus.ERROR, said(own[0])
    signals = re.findall(r"Signal (\d+) \((\w+)\) received", log_tail)
    if signals:
        number, name = signals[-1]
        return BenchStatus.CRASHED, (
            f"{status}: a worker was killed by signal {number} ({name}): out of host memory, "
            "or killed"
        )
    if errors:
        return BenchStatus.CRASHED, f"{status}: a rank lost its peers: {said(errors[0])}"
    code = re.findall(r"exitcode\s*:\s*(-?\d+)", log_tail)
    if code:
        detail = f"a worker exited with code {code[-1]}"
    else:
        lines = [x for x in log_tail.splitlines() if x.strip() and not _NOISE.match(x)]
        detail = lines[-1].strip() if lines else "the launch ended without a message"
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

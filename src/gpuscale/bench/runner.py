"""The sweep: for each world size, launch torchrun with the worker; nothing is ever lost.

The worker appends a row as each model finishes. The runner watches the node's progress
file: a model that started and did not finish in ``timeout_s`` is stopped and recorded
as ``timeout``; a launch that dies mid-model gets one row for that model, with the
cause the failing rank wrote (``oom`` when any rank ran out of memory); models that never
started are never recorded, they run in a fresh launch. Ctrl-C stops the launch and keeps
every row already written.

Several nodes: run the same ``gpuscale bench`` on every node with ``--nnodes``,
``--node-rank`` and ``--rdzv-endpoint`` (torchrun's c10d rendezvous); ``--nproc`` is then
the processes per node. Global rank 0 appends the rows (keep the results file on a shared
filesystem); the runner of node 0 records failures.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

from gpuscale.bench.config import BenchConfig, model_of_key, resolved_config, run_key
from gpuscale.bench.results import append_result, check_writable, done_keys, read_results
from gpuscale.quantities import number
from gpuscale.tables import BenchStatus


@dataclass(frozen=True, kw_only=True, slots=True)
class SweepConfig:
    """What to run: ``models`` at each of ``nproc`` processes per node, on ``nnodes``
    nodes, every run configured by ``bench``."""

    models: tuple[str, ...]
    nproc: tuple[int, ...]
    out: Path
    bench: BenchConfig = field(default_factory=BenchConfig)
    resume: bool = False
    nnodes: int = 1
    node_rank: int = 0
    rdzv_endpoint: str | None = None
    worker: str = "gpuscale.bench.worker"  # the module torchrun runs (tests inject faults)

    def __post_init__(self) -> None:
        if not self.models:
            raise ValueError("no model selected (check --models / --max-params)")
        if not self.nproc or min(self.nproc) < 1:
            raise ValueError("--nproc needs positive world sizes, e.g. 1,2")
        if self.nnodes < 1 or not 0 <= self.node_rank < self.nnodes:
            raise ValueError("--node-rank must be in 0 .. --nnodes - 1")
        if self.nnodes > 1 and not self.rdzv_endpoint:
            raise ValueError("several nodes need --rdzv-endpoint HOST:PORT (node 0's address)")


@dataclass
class SweepReport:
    """What happened on this node: rows it appended (``measured`` of them ``ok`` runs;
    0 on a node that is not the writer), configurations skipped by --resume, failures."""

    appended: int = 0
    measured: int = 0
    skipped: int = 0
    failures: list[str] = field(default_factory=list)
    interrupted: bool = False


Progress = Callable[[str], None]


def device_kind(backend: str) -> str:
    """``cuda`` where torch sees a GPU (and the backend is not gloo), else ``cpu``."""
    if backend == "gloo":
        return "cpu"
    try:
        import torch  # torch: only for a command that runs devices

        return "cuda" if torch.cuda.is_available() else "cpu"
    except ImportError:
        return "cpu"


def local_devices() -> int:
    """The processes one node runs by default: its GPUs, else up to two CPU processes
    (one without torch)."""
    try:
        import torch  # torch: only for a command that runs devices
    except ImportError:
        return 1
    return torch.cuda.device_count() or min(2, os.cpu_count() or 1)


def torchrun_command(
    world: int,
    module: str,
    *,
    nnodes: int = 1,
    node_rank: int = 0,
    rdzv_endpoint: str | None = None,
    rdzv_id: str = "gpuscale",
) -> list[str]:
    """``python -m torch.distributed.run ... -m MODULE``: ``--standalone`` on one node,
    torchrun's c10d rendezvous on several (the caller appends the module's arguments)."""
    if nnodes == 1:
        launch = ["--standalone"]
    else:
        launch = [
            f"--nnodes={nnodes}",
            f"--node-rank={node_rank}",
            "--rdzv-backend=c10d",
            f"--rdzv-endpoint={rdzv_endpoint}",
            f"--rdzv-id={rdzv_id}",
            f"--rdzv-conf=is_host={'true' if node_rank == 0 else 'false'}",
        ]
    return [
        sys.executable,
        "-m",
        "torch.distributed.run",
        *launch,
        f"--nproc-per-node={world}",
        "-m",
        module,
    ]


def _events(progress: Path) -> list[tuple[str, str, str]]:
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


def _started(progress: Path) -> list[str]:
    return [key for event, key, _ in _events(progress) if event == "started"]


def _kill(proc: subprocess.Popen[bytes]) -> None:
    """End the launcher and its workers (they share its process group)."""
    try:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=10)
    except (ProcessLookupError, subprocess.TimeoutExpired):
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()


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
        return BenchStatus.TIMEOUT, "timeout: the model ran past --timeout and was stopped"

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


def _failure_row(key: str, config: dict[str, object], status: str, error: str) -> dict:
    return {
        "key": key,
        "status": str(status),
        "error": error[-500:],
        "config": config,
        "started_at": datetime.now(timezone.utc).isoformat(),
        "duration_s": None,
        "environment": {},
    }


def record_broken(cfg: SweepConfig, broken: dict[str, str]) -> list[str]:
    """One ``error`` row per model that could not even be built (its cause), keyed at the
    sweep's smallest world size (``--resume`` tries it again); node 0 writes them."""
    from gpuscale.bench.models import family_of  # torch: only with a model to name

    device = device_kind(cfg.bench.backend)
    threads = cfg.bench.resolved_threads(max(cfg.nproc)) if device == "cpu" else 0
    world = min(cfg.nproc) * cfg.nnodes
    lines = []
    for name, why in broken.items():
        config = resolved_config(
            cfg.bench,
            model=name,
            family=family_of(name),
            params=None,
            accelerators=world,
            nnodes=cfg.nnodes,
            device=device,
            threads=threads,
        )
        key = run_key(
            cfg.bench,
            model=name,
            accelerators=world,
            nnodes=cfg.nnodes,
            device=device,
            threads=threads,
        )
        if cfg.node_rank == 0:
            append_result(cfg.out, _failure_row(key, config, BenchStatus.ERROR, why))
        lines.append(f"{name}: error: {why}")
    return lines


def run_sweep(
    cfg: SweepConfig,
    sizes: dict[str, int],
    *,
    on_event: Progress | None = None,
    broken: dict[str, str] | None = None,
) -> SweepReport:
    """Run every (model, world size): all of them, or with ``cfg.resume`` those not yet
    measured (an ``ok`` row with the same key, i.e. the same configuration) in ``cfg.out``.

    ``sizes`` maps each model to its parameter count; ``broken`` maps models that could
    not be built to why (recorded once as ``error`` rows, the others run). ``on_event``
    gets one line per event (started, done, failed), for a progress display. Raises
    ``ResultsError`` when the results file cannot be written, before anything runs.
    """
    check_writable(cfg.out)
    report = SweepReport()
    notify = on_event or (lambda _msg: None)
    for line in record_broken(cfg, broken or {}):
        report.failures.append(line)
        report.appended += cfg.node_rank == 0
        notify(f"failed {line}")
    skip = done_keys(cfg.out) if cfg.resume else set()
    sweep_id = uuid.uuid4().hex[:12]
    for per_node in cfg.nproc:
        world = per_node * cfg.nnodes
        todo = list(cfg.models)
        while todo:
            with tempfile.TemporaryDirectory() as tmp:
                folder = Path(tmp)
                status = _launch(cfg, per_node, todo, folder, skip, notify, sweep_id)
                tail = _tail(folder / "log")
                events = _events(folder / "progress")
                row_status, message = cause(folder, tail, status)
            wrote = [k for e, k, _ in events if e == "wrote"]
            skipped = [k for e, k, _ in events if e == "skipped"]
            started = {k: extra for e, k, extra in events if e == "started"}
            report.appended += len(wrote)
            report.measured += len(wrote)
            report.skipped += len(skipped)
            if wrote:
                latest = {r["key"]: r for r in read_results(cfg.out)[0]}
                for key in wrote:
                    if key in latest:
                        notify(_done_line(latest[key]))
            if status == "interrupted":
                report.interrupted = True
                return report
            # a node that did not write learns what finished from the next start
            order = list(started)
            done = {model_of_key(k) for k in (*skipped, *wrote)}
            done |= {model_of_key(k) for k in order[:-1]}
            if status == "ok":
                break
            # Only a model that started and did not finish failed; the rest never ran.
            failed = next((k for k in reversed(order) if model_of_key(k) not in done), None)
            if failed is None:
                report.failures.append(f"launch on {world} failed before any model started")
                notify(f"launch on {world} failed: {message}")
                break
            model = model_of_key(failed)
            if cfg.node_rank == 0:
                config = json.loads(started[failed]) if started[failed] else {"model": model}
                row = _failure_row(failed, config, row_status, message)
                append_result(cfg.out, {**row, "sweep_id": sweep_id})
                report.appended += 1
            report.failures.append(f"{model} on {world}: {row_status}: {message}")
            notify(f"failed {model} x{world}: {row_status}: {message}")
            todo = [m for m in todo if m not in done and m != model]
    return report


def _tail(log: Path) -> str:
    return log.read_text(errors="replace")[-4000:] if log.exists() else ""


def _done_line(record: dict) -> str:
    config, timing = record["config"], record.get("timing") or {}
    text = f"done {config.get('model')} x{config.get('accelerators')}: {record['status']}"
    if timing.get("step_ms_mean"):
        step, rate = number(timing["step_ms_mean"]), number(timing["samples_per_s"], 4)
        text += f", {step} ms/step, {rate} samples/s"
    return text


def _launch(
    cfg: SweepConfig,
    per_node: int,
    models: list[str],
    folder: Path,
    skip: set[str],
    notify: Progress,
    sweep_id: str = "",
) -> str:
    """Run one torchrun launch; return its status (``ok``, ``exit N``, ``timeout``,
    ``interrupted``); the worker notes its events in ``folder / "progress"``."""
    progress, log = folder / "progress", folder / "log"
    world = per_node * cfg.nnodes
    largest = max(cfg.nproc)
    command = [
        *torchrun_command(
            per_node,
            cfg.worker,
            nnodes=cfg.nnodes,
            node_rank=cfg.node_rank,
            rdzv_endpoint=cfg.rdzv_endpoint,
            rdzv_id=f"gpuscale-{world}-{len(models)}",
        ),
        *("--models", ",".join(models), "--jsonl", str(cfg.out)),
        *("--config", cfg.bench.to_json(), "--threads", str(cfg.bench.threads)),
        *("--largest-local", str(largest), "--sweep-id", sweep_id),
        *("--progress", str(progress), "--skip-keys", ";".join(sorted(skip))),
    ]
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    if device_kind(cfg.bench.backend) == "cpu":  # the worker sets its own once it knows
        env["OMP_NUM_THREADS"] = str(cfg.bench.resolved_threads(largest))  # the whole host
    with log.open("wb") as sink:
        proc = subprocess.Popen(
            command, stdout=sink, stderr=subprocess.STDOUT, env=env, start_new_session=True
        )
        seen: list[str] = []
        since = time.monotonic()
        try:
            while proc.poll() is None:
                started = _started(progress)
                if len(started) > len(seen):
                    for key in started[len(seen) :]:
                        notify(f"started {model_of_key(key)} x{world}")
                    seen, since = started, time.monotonic()
                # Before the first model starts, allow a minute for torchrun to come up.
                if time.monotonic() - since > cfg.bench.timeout_s * cfg.bench.repeat + (
                    0 if seen else 60
                ):
                    _kill(proc)
                    return "timeout"
                time.sleep(0.2)
        except KeyboardInterrupt:
            _kill(proc)
            return "interrupted"
        except BaseException:  # the CLI's SIGINT/SIGTERM (or any error): no orphan ranks
            _kill(proc)
            raise
    return "ok" if proc.returncode == 0 else f"exit {proc.returncode}"

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
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from gpuscale.bench.config import BenchConfig, model_of_key, resolved_config, run_key
from gpuscale.bench.launch_events import (
    cause,
    events,
    failure_row,
    log_tail,
    started_keys,
)
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
        if not self.nproc or min(self.nproc) < 1:
            raise ValueError("--nproc needs positive world sizes, e.g. 1,2")
        if self.nnodes < 1 or not 0 <= self.node_rank < self.nnodes:
            raise ValueError("--node-rank must be in 0 .. --nnodes - 1")
        if self.nnodes > 1 and not self.rdzv_endpoint:
            raise ValueError("several nodes need --rdzv-endpoint HOST:PORT (node 0's address)")
        if self.bench.backend == "nccl" and device_kind("nccl") != "cuda":
            raise ValueError(
                "--backend nccl needs CUDA devices; none is visible: use --backend gloo or auto"
            )


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


def _kill(proc: subprocess.Popen[bytes]) -> None:
    """End the launcher and its workers (they share its process group)."""
    try:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=10)
    except (ProcessLookupError, subprocess.TimeoutExpired):
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()


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
            append_result(cfg.out, failure_row(key, config, BenchStatus.ERROR, why))
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
    not be built to why (recorded once as ``error`` rows, the others run; ``cfg.models``
    may then be empty). ``on_event`` gets one line per event (started, done, failed), for
    a progress display. Raises ``ResultsError`` when the results file cannot be written
    and ``ValueError`` when there is nothing to run or record, before anything runs.
    """
    if not cfg.models and not broken:
        raise ValueError("no model selected (check --models / --max-params)")
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
        todo: list[str] | None = list(cfg.models)
        while todo:
            todo = _launch_and_record(cfg, per_node, todo, skip, notify, sweep_id, report)
            if todo is None:
                report.interrupted = True
                return report
    return report


def _launch_and_record(
    cfg: SweepConfig,
    per_node: int,
    todo: list[str],
    skip: set[str],
    notify: Progress,
    sweep_id: str,
    report: SweepReport,
) -> list[str] | None:
    """One launch of ``todo`` at ``per_node`` processes per node, counted into
    ``report``, with the row of the model that failed; the models still to run (the
    launch stopped at the failure), or None when interrupted."""
    world = per_node * cfg.nnodes
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        status = _launch(cfg, per_node, todo, folder, skip, notify, sweep_id)
        found = events(folder / "progress")
        row_status, message = cause(folder, log_tail(folder / "log"), status)
    wrote = [k for e, k, _ in found if e == "wrote"]
    skipped = [k for e, k, _ in found if e == "skipped"]
    started = {k: extra for e, k, extra in found if e == "started"}
    report.appended += len(wrote)
    report.measured += len(wrote)
    report.skipped += len(skipped)
    if status == "interrupted":
        return None
    # a node that did not write learns what finished from the next start
    order = list(started)
    done = {model_of_key(k) for k in (*skipped, *wrote)}
    done |= {model_of_key(k) for k in order[:-1]}
    if status == "ok":
        return []
    # Only a model that started and did not finish failed; the rest never ran.
    failed = next((k for k in reversed(order) if model_of_key(k) not in done), None)
    if failed is None:
        report.failures.append(f"launch on {world} failed before any model started")
        notify(f"launch on {world} failed: {message}")
        return []
    model = model_of_key(failed)
    if cfg.node_rank == 0:
        config = json.loads(started[failed]) if started[failed] else {"model": model}
        row = failure_row(failed, config, row_status, message)
        append_result(cfg.out, {**row, "sweep_id": sweep_id})
        report.appended += 1
    report.failures.append(f"{model} on {world}: {row_status}: {message}")
    notify(f"failed {model} x{world}: {row_status}: {message}")
    return [m for m in todo if m not in done and m != model]


def _say_events(out: Path, new: list[tuple[str, str, str]], world: int, notify: Progress) -> bool:
    """Say each new event in the order the worker noted it: a model ``started``, its row
    ``done`` as soon as the writer appended it (the models of a launch run one after
    another); True when a model started (its timeout starts then)."""
    wrote = {key for event, key, _ in new if event == "wrote"}
    latest = {r["key"]: r for r in read_results(out)[0] if r["key"] in wrote} if wrote else {}
    for event, key, _ in new:
        if event == "started":
            notify(f"started {model_of_key(key)} x{world}")
        elif event == "wrote" and key in latest:
            notify(_done_line(latest[key]))
    return any(event == "started" for event, _, _ in new)


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
        seen = 0  # events said so far
        since = time.monotonic()
        try:
            while proc.poll() is None:
                found = events(progress)
                if _say_events(cfg.out, found[seen:], world, notify):
                    since = time.monotonic()
                # Before the first model starts, allow a minute for torchrun to come up.
                if time.monotonic() - since > cfg.bench.timeout_s * cfg.bench.repeat + (
                    0 if started_keys(progress) else 60
                ):
                    _kill(proc)
                    return "timeout"
                seen = len(found)
                time.sleep(0.2)
            _say_events(cfg.out, events(progress)[seen:], world, notify)
        except KeyboardInterrupt:
            _kill(proc)
            return "interrupted"
        except BaseException:  # the CLI's SIGINT/SIGTERM (or any error): no orphan ranks
            _kill(proc)
            raise
    return "ok" if proc.returncode == 0 else f"exit {proc.returncode}"

"""The sweep: for each world size, launch torchrun with the worker; nothing is ever lost.

The worker appends a row as each model finishes. The runner watches the worker's progress
file: a model that started and did not finish in ``timeout_s`` is killed and recorded as
``timeout``; a launch that dies mid-model gets a ``crashed`` row (with the end of its
output); the remaining models continue in a fresh launch. Ctrl-C stops the launch and
keeps every row already written.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

from gpuscale.bench.results import append_result, config_key, done_keys, read_results


@dataclass(frozen=True, kw_only=True, slots=True)
class SweepConfig:
    """What to run. ``nproc``: world sizes on this machine (processes per node)."""

    models: tuple[str, ...]
    nproc: tuple[int, ...]
    out: Path
    backend: str = "auto"
    steps: int = 20
    warmup: int = 3
    batch: int | None = None  # per device; default 32 on GPU, 8 on CPU
    scaling: str = "weak"
    global_batch: int = 64
    precision: str = "fp32"
    bucket_mb: float = 25.0
    timeout_s: float = 600.0
    resume: bool = False
    threads: int = 0
    worker: str = "gpuscale.bench.worker"  # the module torchrun runs (tests inject faults)

    def __post_init__(self) -> None:
        if not self.models:
            raise ValueError("no model selected (check --models / --max-params)")
        if not self.nproc or min(self.nproc) < 1:
            raise ValueError("--nproc needs positive world sizes, e.g. 1,2")
        if self.steps < 1 or self.warmup < 0:
            raise ValueError("--steps must be >= 1 and --warmup >= 0")
        if self.timeout_s <= 0:
            raise ValueError("--timeout must be positive")
        if self.scaling not in ("weak", "strong"):
            raise ValueError("--scaling is weak or strong")


@dataclass
class SweepReport:
    """What happened: rows appended, configurations skipped by --resume, failures."""

    appended: int = 0
    skipped: int = 0
    failures: list[str] = field(default_factory=list)
    interrupted: bool = False


Progress = Callable[[str], None]


def _device_kind(backend: str) -> str:
    if backend == "gloo":
        return "cpu"
    try:
        import torch

        return "cuda" if torch.cuda.is_available() else "cpu"
    except ImportError:
        return "cpu"


def expected_key(model: str, world: int, cfg: SweepConfig, device: str) -> str:
    """The key the worker will give this configuration (for --resume and failure rows)."""
    batch = cfg.batch or (32 if device == "cuda" else 8)
    per_device = cfg.global_batch // world if cfg.scaling == "strong" else batch
    backend = "nccl" if device == "cuda" and cfg.backend in ("auto", "nccl") else "gloo"
    return config_key(
        {
            "model": model,
            "world_size": world,
            "nnodes": 1,
            "backend": backend,
            "device": device,
            "scaling": cfg.scaling,
            "batch_per_device": per_device,
            "global_batch": per_device * world,
            "precision": cfg.precision,
            "bucket_mb": cfg.bucket_mb,
            "steps": cfg.steps,
        }
    )


def torchrun_command(world: int, module: str) -> list[str]:
    """``python -m torch.distributed.run --standalone --nproc-per-node=N -m MODULE`` (one
    node; the caller appends the module's own arguments)."""
    return [
        sys.executable,
        "-m",
        "torch.distributed.run",
        "--standalone",
        f"--nproc-per-node={world}",
        "-m",
        module,
    ]


def _command(
    cfg: SweepConfig, world: int, models: list[str], progress: Path, skip: set[str], device: str
) -> list[str]:
    batch = cfg.batch or (32 if device == "cuda" else 8)
    return [
        *torchrun_command(world, cfg.worker),
        "--models",
        ",".join(models),
        "--jsonl",
        str(cfg.out),
        "--progress",
        str(progress),
        "--backend",
        cfg.backend,
        "--steps",
        str(cfg.steps),
        "--warmup",
        str(cfg.warmup),
        "--batch",
        str(batch),
        "--scaling",
        cfg.scaling,
        "--global-batch",
        str(cfg.global_batch),
        "--precision",
        cfg.precision,
        "--bucket-mb",
        str(cfg.bucket_mb),
        "--threads",
        str(cfg.threads),
        "--collective-timeout",
        str(cfg.timeout_s),
        "--skip-keys",
        ";".join(sorted(skip)),
    ]


def _started(progress: Path) -> list[str]:
    if not progress.exists():
        return []
    return [
        line.split("\t", 1)[1]
        for line in progress.read_text().splitlines()
        if line.startswith("started\t")
    ]


def _kill(proc: subprocess.Popen[bytes]) -> None:
    """End the launcher and its workers (they share its process group)."""
    try:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=10)
    except (ProcessLookupError, subprocess.TimeoutExpired):
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()


def _failure_row(key: str, config: dict[str, object], status: str, error: str) -> dict:
    return {
        "key": key,
        "status": status,
        "error": error,
        "config": config,
        "started_at": datetime.now(timezone.utc).isoformat(),
        "duration_s": None,
        "environment": {},
    }


def run_sweep(
    cfg: SweepConfig, sizes: dict[str, int], *, on_event: Progress | None = None
) -> SweepReport:
    """Run every (model, world size) not yet in ``cfg.out`` (when resuming).

    ``sizes`` maps each model to its parameter count. ``on_event`` gets one line per
    event (started, done, failed), for a progress display.
    """
    report = SweepReport()
    device = _device_kind(cfg.backend)
    notify = on_event or (lambda _msg: None)
    already = done_keys(cfg.out) if cfg.resume else set()
    for world in cfg.nproc:
        keys = {m: expected_key(m, world, cfg, device) for m in cfg.models}
        todo = [m for m in cfg.models if keys[m] not in already]
        report.skipped += len(cfg.models) - len(todo)
        while todo:
            before = done_keys(cfg.out)
            with tempfile.TemporaryDirectory() as tmp:
                progress = Path(tmp) / "progress"
                log = Path(tmp) / "log"
                status, current = _launch(cfg, world, todo, progress, log, device, notify)
                tail = log.read_text(errors="replace")[-2000:] if log.exists() else ""
            after = done_keys(cfg.out)
            finished = {m for m in todo if keys[m] in after - before}
            report.appended += len(after - before)
            if after - before:  # failure rows the worker wrote itself (oom, error, ...)
                report.failures += [
                    f"{r['config'].get('model')} on {world}: {r['status']}"
                    for r in read_results(cfg.out)[0]
                    if r["key"] in after - before and r.get("status") != "ok"
                ]
            if status == "interrupted":
                report.interrupted = True
                return report
            if status == "ok" and not set(todo) - finished:
                todo = []
                continue
            # The launch ended early: the model it was on failed (if it wrote no row).
            failed = current if current in todo and current not in finished else None
            if failed is None:
                failed = next((m for m in todo if m not in finished), None)
            if failed is not None and keys[failed] not in after:
                config = {
                    "model": failed,
                    "params": sizes[failed],
                    "world_size": world,
                    "device": device,
                    "scaling": cfg.scaling,
                }
                last_line = tail.strip().splitlines()[-1] if tail.strip() else ""
                # The schema's statuses: a launch that ended badly is "crashed", its exit
                # code goes into the message.
                row_status = "timeout" if status == "timeout" else "crashed"
                message = f"{status}: {last_line}" if last_line else status
                append_result(
                    cfg.out,
                    _failure_row(keys[failed], config, row_status, message[-500:]),
                )
                report.appended += 1
            if failed is not None:
                report.failures.append(f"{failed} on {world}: {status}")
                notify(f"failed {failed} x{world}: {status}")
            todo = [m for m in todo if m not in finished and m != failed]
    return report


def _launch(
    cfg: SweepConfig,
    world: int,
    models: list[str],
    progress: Path,
    log: Path,
    device: str,
    notify: Progress,
) -> tuple[str, str | None]:
    """Run one torchrun launch; return (status, model in progress when it ended)."""
    skip = done_keys(cfg.out) if cfg.out.exists() else set()
    command = _command(cfg, world, models, progress, skip, device)
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
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
                        notify(f"started {key.split('|')[0].split('=')[1]} x{world}")
                    seen, since = started, time.monotonic()
                # Before the first model starts, allow a minute for torchrun to come up.
                if time.monotonic() - since > cfg.timeout_s + (0 if seen else 60):
                    _kill(proc)
                    return "timeout", _model_of(seen)
                time.sleep(0.2)
        except KeyboardInterrupt:
            _kill(proc)
            return "interrupted", _model_of(seen)
    seen = _started(progress)
    return ("ok" if proc.returncode == 0 else f"crashed (exit {proc.returncode})", _model_of(seen))


def _model_of(started: list[str]) -> str | None:
    return started[-1].split("|")[0].split("=", 1)[1] if started else None

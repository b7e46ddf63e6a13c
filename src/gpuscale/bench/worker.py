"""The torchrun worker: DDP training steps of ladder models, timed, one JSONL row per model.

Run under torchrun (one process per device), e.g. on two nodes::

    torchrun --nnodes 2 --nproc-per-node 8 --rdzv-backend c10d --rdzv-endpoint HOST:29500 \\
        -m gpuscale.bench.worker --models tf-30m,tf-100m --jsonl results.jsonl

How a step is measured. A barrier starts the timed phase on every rank together; there is
no barrier inside it, because one per step would align the ranks and hide the straggler
wait that real training pays inside the all-reduce (``benchmarks/bench_overhead.py``
measured that bias at -8% on a 6 ms step). The clock is CUDA events on GPUs (read after
``synchronize``) and ``perf_counter`` on CPUs.
Each timed step is run twice with the same data, interleaved (order alternating):
normally (DDP all-reduces gradients in buckets, overlapped with backward) and inside
``ddp.no_sync()`` (no communication at all). The forward, backward and optimizer times
come from the no-sync steps (pure compute); **exposed communication** = mean synchronised
step - mean no-sync step: the part of the all-reduce that backward could not hide.
Warm-up steps are dropped. Per-rank raw times are kept; the reported time of a step is
the slowest rank's.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import resource
import sys
import time
import traceback
from collections.abc import Callable, Iterator
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel as DDP

from gpuscale.bench.models import BY_NAME, ModelSpec, parameter_count
from gpuscale.bench.results import StepStats, append_result, config_key
from gpuscale.bench.telemetry import NvmlSampler, machine_environment

Clock = Callable[[], Any]


def _clock(device: torch.device) -> tuple[Clock, Callable[[Any, Any], float]]:
    """(mark, elapsed_ms): CUDA events on GPU, perf_counter on CPU."""
    if device.type == "cuda":

        def mark() -> Any:
            event = torch.cuda.Event(enable_timing=True)
            event.record()
            return event

        return mark, lambda a, b: a.elapsed_time(b)
    return time.perf_counter, lambda a, b: (b - a) * 1e3


def _loss(spec: ModelSpec, out: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
    if spec.family == "mlp":
        return F.cross_entropy(out, target)
    return F.cross_entropy(out.reshape(-1, out.shape[-1]), target.reshape(-1))


def _one_step(
    ddp: DDP,
    spec: ModelSpec,
    optimizer: torch.optim.Optimizer,
    batch: tuple,
    sync: bool,
    mark: Clock,
    autocast: torch.dtype | None,
    device: torch.device,
) -> tuple[Any, Any, Any, Any]:
    x, y = batch
    context = contextlib.nullcontext() if sync else ddp.no_sync()
    with context:
        t0 = mark()
        with torch.autocast(device.type, dtype=autocast, enabled=autocast is not None):
            loss = _loss(spec, ddp(x), y)
        t1 = mark()
        loss.backward()
        t2 = mark()
    optimizer.step()
    optimizer.zero_grad(set_to_none=True)
    t3 = mark()
    if device.type == "cuda":
        torch.cuda.synchronize(device)
    return t0, t1, t2, t3


def timed_steps(
    ddp: DDP,
    spec: ModelSpec,
    optimizer: torch.optim.Optimizer,
    batch: tuple,
    *,
    steps: int,
    warmup: int,
    device: torch.device,
    autocast: torch.dtype | None,
) -> dict[str, dict[str, list[float]]]:
    """Warm-up, then ``steps`` synchronised and ``steps`` no-sync steps, interleaved (the
    order alternating) so both kinds see the same machine state; per-step ms of forward,
    backward, optimizer and the whole step for each kind."""
    mark, elapsed = _clock(device)
    times = {
        kind: {"forward": [], "backward": [], "optimizer": [], "step": []}
        for kind in ("synced", "nosync")
    }
    for i in range(warmup + steps):
        if i == warmup:
            dist.barrier()  # the timed phase starts together on every rank
        order = (True, False) if i % 2 == 0 else (False, True)
        for sync in order:
            t0, t1, t2, t3 = _one_step(ddp, spec, optimizer, batch, sync, mark, autocast, device)
            if i < warmup:
                continue
            kind = times["synced" if sync else "nosync"]
            kind["forward"].append(elapsed(t0, t1))
            kind["backward"].append(elapsed(t1, t2))
            kind["optimizer"].append(elapsed(t2, t3))
            kind["step"].append(elapsed(t0, t3))
    return times


def _gather(values: Any) -> list[Any]:
    out: list[Any] = [None] * dist.get_world_size()
    dist.all_gather_object(out, values)
    return out


def _slowest_rank(per_rank: list[list[float]]) -> list[float]:
    return [max(step) for step in zip(*per_rank, strict=True)]


def run_model(spec: ModelSpec, args: argparse.Namespace, device: torch.device) -> dict[str, Any]:
    """Measure one model at this world size; return the record (same on every rank)."""
    world = dist.get_world_size()
    if args.scaling == "strong":
        if args.global_batch % world:
            raise ValueError(f"global batch {args.global_batch} not divisible by {world}")
        per_device = args.global_batch // world
    else:
        per_device = args.batch
    autocast = {"fp32": None, "bf16": torch.bfloat16, "fp16": torch.float16}[args.precision]
    torch.manual_seed(0)
    model = spec.build().to(device)
    ddp = DDP(
        model,
        device_ids=[device.index] if device.type == "cuda" else None,
        bucket_cap_mb=args.bucket_mb,
    )
    optimizer = torch.optim.AdamW(ddp.parameters(), lr=1e-4)
    batch = spec.batch(per_device, device)
    if device.type == "cuda":
        torch.cuda.reset_peak_memory_stats(device)
    sampler: Any = contextlib.nullcontext()
    if device.type == "cuda" and not args.no_nvml:
        with contextlib.suppress(Exception):
            sampler = NvmlSampler(device.index)
    with sampler:
        measured = timed_steps(
            ddp,
            spec,
            optimizer,
            batch,
            steps=args.steps,
            warmup=args.warmup,
            device=device,
            autocast=autocast,
        )
    synced, nosync = measured["synced"], measured["nosync"]
    grad_bytes = sum(p.numel() * p.element_size() for p in model.parameters() if p.requires_grad)
    peak = (
        torch.cuda.max_memory_allocated(device)
        if device.type == "cuda"
        else resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    )
    gathered = _gather(
        {
            "synced": synced,
            "nosync": nosync,
            "peak": peak,
            "nvml": sampler.summary() if isinstance(sampler, NvmlSampler) else None,
        }
    )
    step = StepStats.from_values(_slowest_rank([g["synced"]["step"] for g in gathered]))
    plain = StepStats.from_values(_slowest_rank([g["nosync"]["step"] for g in gathered]))

    def phase(name: str) -> float:
        return StepStats.from_values(_slowest_rank([g["nosync"][name] for g in gathered])).mean

    exposed = max(0.0, step.mean - plain.mean)
    nvml = [g["nvml"] for g in gathered if g["nvml"]]
    return {
        "timing": {
            "step_ms_mean": step.mean,
            "step_ms_p50": step.p50,
            "step_ms_p95": step.p95,
            "samples_per_s": per_device * world / (step.mean / 1e3),
            "forward_ms": phase("forward"),
            "backward_ms": phase("backward"),
            "optimizer_ms": phase("optimizer"),
            "exposed_comm_ms": exposed,
            "nosync_step_ms_mean": plain.mean,
            "comm_fraction": exposed / step.mean if step.mean > 0 else 0.0,
        },
        "per_rank": {
            "step_ms": [g["synced"]["step"] for g in gathered],
            "nosync_step_ms": [g["nosync"]["step"] for g in gathered],
        },
        "grad_bytes_per_step": grad_bytes,
        "allreduce_bytes_per_step": grad_bytes if world > 1 else 0,
        "memory": {
            "peak_bytes": max(g["peak"] for g in gathered),
            "kind": "cuda_max_allocated" if device.type == "cuda" else "cpu_max_rss",
        },
        "nvml": (
            {
                "gpu_util_pct_mean": sum(n["gpu_util_pct_mean"] for n in nvml) / len(nvml),
                "power_w_mean": sum(n["power_w_mean"] for n in nvml) / len(nvml),
                "power_w_total": sum(n["power_w_mean"] for n in nvml),
            }
            if nvml
            else None
        ),
        "batch_per_device": per_device,
    }


def _config(spec: ModelSpec, args: argparse.Namespace, device: torch.device) -> dict[str, Any]:
    world = dist.get_world_size()
    per_device = args.global_batch // world if args.scaling == "strong" else args.batch
    return {
        "model": spec.name,
        "family": spec.family,
        "params": parameter_count(spec),
        "world_size": world,
        "nnodes": int(os.environ.get("GROUP_WORLD_SIZE", "1")),
        "backend": dist.get_backend(),
        "device": device.type,
        "scaling": args.scaling,
        "batch_per_device": per_device,
        "global_batch": per_device * world,
        "precision": args.precision,
        "bucket_mb": args.bucket_mb,
        "steps": args.steps,
        "warmup": args.warmup,
        "threads": torch.get_num_threads(),
        "seq_len": spec.seq_len or None,
    }


def _device(backend: str) -> torch.device:
    local_rank = int(os.environ.get("LOCAL_RANK", "0"))
    if backend == "nccl" or (backend == "auto" and torch.cuda.is_available()):
        torch.cuda.set_device(local_rank)
        return torch.device("cuda", local_rank)
    return torch.device("cpu")


@contextlib.contextmanager
def process_group(backend: str, timeout_s: float) -> Iterator[torch.device]:
    device = _device(backend)
    name = "nccl" if device.type == "cuda" and backend in ("auto", "nccl") else "gloo"
    dist.init_process_group(name, timeout=timedelta(seconds=timeout_s))
    try:
        yield device
    finally:
        dist.destroy_process_group()


_PEER_SIGNS = (
    "connection reset",
    "connection closed",
    "broken pipe",
    "timed out",
    "timeout",
    "peer",
    "socket",
)


def _peer_failure(exc: BaseException) -> bool:
    """Whether an exception means another rank died or stopped answering."""
    dist_error = getattr(dist, "DistError", ())
    return isinstance(exc, dist_error) or any(s in str(exc).lower() for s in _PEER_SIGNS)


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m gpuscale.bench.worker",
        description="gpuscale DDP scaling worker (run under torchrun)",
    )
    parser.add_argument("--models", required=True, help="comma-separated ladder names")
    parser.add_argument("--jsonl", required=True, type=Path, help="results file to append to")
    parser.add_argument("--progress", type=Path, help="file where rank 0 notes each start")
    parser.add_argument("--backend", default="auto", choices=["auto", "nccl", "gloo"])
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--batch", type=int, default=32, help="per-device batch (weak)")
    parser.add_argument("--scaling", default="weak", choices=["weak", "strong"])
    parser.add_argument("--global-batch", type=int, default=64, help="global batch (strong)")
    parser.add_argument("--precision", default="fp32", choices=["fp32", "bf16", "fp16"])
    parser.add_argument("--bucket-mb", type=float, default=25.0)
    parser.add_argument(
        "--threads",
        type=int,
        default=0,
        help="CPU threads per process (default: cores / local processes)",
    )
    parser.add_argument("--skip-keys", default="", help="configuration keys already done")
    parser.add_argument("--collective-timeout", type=float, default=600.0)
    parser.add_argument("--no-nvml", action="store_true")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    local = int(os.environ.get("LOCAL_WORLD_SIZE", "1"))
    torch.set_num_threads(args.threads or max(1, (os.cpu_count() or 1) // local))
    skip = set(filter(None, args.skip_keys.split(";")))
    with process_group(args.backend, args.collective_timeout) as device:
        rank = dist.get_rank()
        environment = machine_environment(device) if rank == 0 else {}
        for name in args.models.split(","):
            spec = BY_NAME[name]
            config = _config(spec, args, device)
            key = config_key(config)
            if key in skip:
                continue
            if rank == 0 and args.progress:
                with args.progress.open("a") as handle:
                    handle.write(f"started\t{key}\n")
            started = time.time()
            record: dict[str, Any] = {
                "key": key,
                "config": config,
                "environment": environment,
                "started_at": datetime.now(timezone.utc).isoformat(),
            }
            try:
                measured = run_model(spec, args, device)
            except torch.cuda.OutOfMemoryError as exc:
                record.update(status="oom", error=str(exc).splitlines()[0])
            except Exception as exc:  # recorded, then this launch ends
                status = "crashed" if _peer_failure(exc) else "error"
                record.update(status=status, error=f"{type(exc).__name__}: {exc}"[:500])
                traceback.print_exc()
            else:
                config["batch_per_device"] = measured.pop("batch_per_device")
                record.update(status="ok", **measured)
            record["duration_s"] = time.time() - started
            if rank == 0:
                append_result(args.jsonl, record)
            if record["status"] != "ok":
                return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

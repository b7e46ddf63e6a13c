"""One model measured at this world size, on every rank of the worker
(``gpuscale.bench.worker``, the torchrun entry point): the model built and wrapped
(DDP or FSDP) with its optimizer and batch (a :class:`~gpuscale.bench.steps.Job`), its
steps timed (``gpuscale.bench.steps``), at N = 1 the bare module too, and the ranks'
measurements gathered into the row's measured fields."""

from __future__ import annotations

import copy
import os
import resource
from dataclasses import replace

import torch
import torch.distributed as dist

from gpuscale.bench.config import BenchConfig
from gpuscale.bench.model_base import sample_digests
from gpuscale.bench.models import first_batch, load_model
from gpuscale.bench.ranks import Host, gather
from gpuscale.bench.steps import CommMeter, Job, count_flops, ddp, gradient_norms, timed_steps
from gpuscale.bench.summary import measured_fields
from gpuscale.bench.telemetry import GpuMeter, HostSample, open_cpu_meter, open_gpu_meter


def _wrap(job_module: torch.nn.Module, cfg: BenchConfig, device: torch.device, world: int):
    """The module wrapped for data parallelism, and the comm meter (DDP, N > 1)."""
    if cfg.strategy == "fsdp":
        # lazy: FSDP2's fully_shard is in torch >= 2.6 only; DDP runs on the older torch we allow
        from torch.distributed.fsdp import fully_shard

        for child in job_module.children():
            if any(p.requires_grad for p in child.parameters()):
                fully_shard(child)
        return fully_shard(job_module), None
    wrapped = ddp(job_module, device, cfg.ddp_bucket_mb)
    if world == 1:
        return wrapped, None
    meter = CommMeter(device, compress=cfg.grad_comm == "bf16")
    wrapped.register_comm_hook(dist.group.WORLD, meter.hook)
    return wrapped, meter


def run_model(
    name: str, cfg: BenchConfig, device: torch.device, host: Host | None = None
) -> dict[str, object]:
    """Measure one model at this world size; the record's measured fields (every rank
    returns the same). Every rank builds the same model (seed 0) and then draws its own
    data (seed 1 + rank): ranks see different samples, as in data-parallel training."""
    host = host or Host()
    world = dist.get_world_size()
    micro = cfg.per_device_batch(world, device.type)
    job, (flops, conv), uncounted_ops = _job(name, cfg, device, world, micro)
    if device.type == "cuda":
        torch.cuda.reset_peak_memory_stats(device)
    meter: GpuMeter | None = None
    if device.type == "cuda" and cfg.nvml:
        meter = open_gpu_meter(device)
    elif device.type == "cpu" and host.first_on_host:  # one package meter per host
        meter = open_cpu_meter(host.ranks_on_host)
    small = small_batch(micro)
    plain = plain_small = None
    if world == 1:
        # also time the bare module (no DDP wrapper): what a user pays on one device, and
        # at a quarter of the batch: the two give the fixed per-step cost
        plain = _bare(job)
        if small:
            plain_small = replace(plain, batch=job.bench.make_batch(small, device))
    samples: dict[str, object] = {}
    digests = sample_digests(job.batch)  # the timed batch's samples, before any step

    def on_start() -> None:
        samples["host_start"] = HostSample.now()
        if meter is not None:
            meter.__enter__()

    try:
        timings = timed_steps(
            job,
            steps=cfg.steps,
            warmup=cfg.warmup,
            on_start=on_start,
            plain=plain,
            plain_small=plain_small,
        )
    finally:
        if meter is not None and "host_start" in samples:
            meter.__exit__(None, None, None)
    host_end = HostSample.now()
    # the last timed step's loss (x accum: the whole batch's), read now: one sync, untimed
    loss = float(job.last_loss.float()) * cfg.accum if job.last_loss is not None else None
    local_sq, global_sq = gradient_norms(job, cfg.steps, micro)
    grad_bytes = sum(p.numel() * p.element_size() for p in job.bench.module.parameters())
    peak = (
        torch.cuda.max_memory_allocated(device)
        if device.type == "cuda"
        else resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    )
    gathered = gather(
        {
            "kinds": timings.kinds,
            "comm_ms": timings.comm_ms,
            "peak": peak,
            "meter": meter.summary() if meter is not None else None,
            "host": (samples.get("host_start"), host_end, os.uname().nodename),
            "local_sq": local_sq,
            "digests": digests,
        }
    )
    buckets = getattr(job.comm, "bucket_bytes", None)  # no communication hook: none
    measured = measured_fields(
        cfg, device.type, world, micro, flops, grad_bytes, buckets, gathered, global_sq, small
    )
    measured["flops"]["uncounted_ops"] = list(uncounted_ops)  # dense work left out of per_sample
    measured["flops"]["conv_per_sample"] = conv  # of per_sample: cuDNN's (TF32 by default)
    measured["loss_last"] = loss
    return measured


def small_batch(micro: int) -> int | None:
    """The second batch timed at N = 1: a quarter of the batch (half below 4), None at
    batch 1 (a larger batch might not fit in memory)."""
    small = micro // 4 or micro // 2
    return small if 1 <= small < micro else None


def _bare(job: Job) -> Job:
    """The job on the bare module. DDP wraps ``job.bench.module``, which stays bare; FSDP2's
    ``fully_shard`` shards it in place (``wrapped is bench.module``), so an FSDP job's bare
    module is an unsharded copy of its parameters, with an optimizer of its own (timing the
    sharded module as "bare" read FSDP's own work as 0: tf-30m on an H100, 36.2 ms step,
    36.5 ms "bare", 26.2 ms no-sync)."""
    if job.bare is None:
        return replace(job, wrapped=job.bench.module, comm=None)
    optimizer = torch.optim.AdamW(job.bare.parameters(), lr=1e-4)
    return replace(job, wrapped=job.bare, optimizer=optimizer, comm=None, fsdp=False)


def _job(
    name: str, cfg: BenchConfig, device: torch.device, world: int, micro: int
) -> tuple[Job, tuple[float | None, float | None], tuple[str, ...]]:
    """The model ``name`` on ``device``, wrapped, with its optimizer and this rank's
    batch; and its FLOPs per sample (counted on the bare module) and uncounted ops."""
    torch.manual_seed(0)
    bench = load_model(name)
    bench.module.to(device)
    torch.manual_seed(1 + dist.get_rank())
    batch = first_batch(bench, name, micro, device)
    flops, uncounted_ops, conv = count_flops(bench, batch, micro)
    # FSDP shards the module in place: the bare module timed at N = 1 is a copy made first
    bare = copy.deepcopy(bench.module) if cfg.strategy == "fsdp" and world == 1 else None
    wrapped, comm = _wrap(bench.module, cfg, device, world)
    autocast = {"fp32": None, "bf16": torch.bfloat16, "fp16": torch.float16}[cfg.precision]
    job = Job(
        bench=bench,
        wrapped=wrapped,
        optimizer=torch.optim.AdamW(wrapped.parameters(), lr=1e-4),
        batch=batch,
        device=device,
        accum=cfg.accum,
        autocast=autocast,
        scaler=torch.amp.GradScaler(device.type) if cfg.precision == "fp16" else None,
        fsdp=cfg.strategy == "fsdp",
        comm=comm,
        bare=bare,
    )
    return job, (flops, conv), uncounted_ops

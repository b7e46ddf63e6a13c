"""The torchrun worker: training steps of each model, timed; one JSONL row per model.

``gpuscale bench`` launches it (one process per device, on one node or many); run by
hand it is::

    torchrun --nproc-per-node 2 -m gpuscale.bench.worker --models mlp-1m \\
        --jsonl results.jsonl --config '{"steps": 30}'

How a step is measured: see ``gpuscale.bench.steps``. Every rank runs the same
configuration (threads per rank, DDP wrapper, warm-up) at every world size, and the
reported time of a step is its slowest rank's. Only global rank 0 writes rows: to
``--jsonl`` when run by hand, else into ``--progress`` for the runner to append (the runner
is then the only writer of the results file). Each rank ends with its launcher (and, where
the kernel cannot do that for the launcher, with the runner), and caps its memory on CPU.
A failure on any rank, before or after a model's ``started`` event, makes that rank write
its exception to ``error-<rank>.json`` beside the progress file and exit; torchrun then
stops the others and the runner records the failure (``oom`` when any rank ran out of
memory) from those files.
"""

from __future__ import annotations

import argparse
import copy
import json
import math
import os
import resource
import time
import traceback
from dataclasses import replace
from datetime import datetime, timezone
from pathlib import Path

import torch
import torch.distributed as dist

from gpuscale.bench.config import BenchConfig, tf32_flags
from gpuscale.bench.launch_events import is_out_of_memory
from gpuscale.bench.models import family_of, first_batch, load_model, parameter_count
from gpuscale.bench.ranks import Host, agreed_sweep_id, end_rank, gather, process_group
from gpuscale.bench.results import SCHEMA
from gpuscale.bench.results_file import append_result
from gpuscale.bench.row_keys import resolved_config, run_key
from gpuscale.bench.steps import CommMeter, Job, count_flops, ddp, gradient_norms, timed_steps
from gpuscale.bench.summary import measured_fields, median_run, mfu_fields
from gpuscale.bench.telemetry import (
    GpuMeter,
    HostSample,
    machine_environment,
    open_cpu_meter,
    open_gpu_meter,
)
from gpuscale.plausibility import loss_flags, run_flags
from gpuscale.quantities import format_bytes
from gpuscale.sources.processes import die_with_runner, limit_memory, physical_memory


def _wrap(job_module: torch.nn.Module, cfg: BenchConfig, device: torch.device, world: int):
    """The module wrapped for data parallelism, and the comm meter (DDP, N > 1)."""
    if cfg.strategy == "fsdp":
        # lazy: FSDP2's fully_shard is in torch >= 2.6 only; DDP runs on the older torch we allow
        from torch.distributed.fsdp import fully_shard

        for child in job_module.children():
            if any(p.requires_grad for p in child.parameters()):
                fully_shard(child)
        return fully_shard(job_module), None
    wrapped = ddp(job_module, device, cfg.bucket_mb)
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
    # N = 1: also time the bare module (no DDP wrapper): what a user pays on one device,
    # and at a quarter of the batch: the two give the fixed per-step cost
    plain = _bare(job) if world == 1 else None
    small = small_batch(micro)
    plain_small = (
        replace(plain, batch=job.bench.make_batch(small, device))
        if plain is not None and small
        else None
    )
    samples: dict[str, object] = {}

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
        }
    )
    buckets = job.comm.bucket_bytes if job.comm is not None else None
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
    small = micro // 4 if micro >= 4 else micro // 2
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


def _config_fields(
    name: str, cfg: BenchConfig, device: torch.device, threads: int, params: int | None
) -> dict:
    """The row's ``config``: the values this run uses (see ``resolved_config``)."""
    return resolved_config(
        cfg,
        model=name,
        family=family_of(name),
        params=params,
        accelerators=dist.get_world_size(),
        nnodes=int(os.environ.get("GROUP_WORLD_SIZE", "1")),
        device=device.type,
        threads=threads,
        backend=dist.get_backend(),
    )


def _write_error(
    folder: Path | None, rank: int, key: str, exc: BaseException, cap: int | None = None
) -> None:
    """This rank's failure, for the runner: type, message, the traceback's last lines
    (the first failure of this rank only: the one that caused the rest); ``cap`` the
    rank's memory limit, named when host memory ran out."""
    path = folder / f"error-{rank}.json" if folder is not None else None
    if path is None or path.exists():
        return
    text = str(exc).strip()
    if isinstance(exc, SystemExit):
        text = f"the model's code called sys.exit({exc.code!r})"
    record = {
        "key": key,
        "rank": rank,
        "type": type(exc).__name__,
        "message": text.splitlines()[0][:300] if text else "",
        "oom": is_out_of_memory(exc),
        "host_oom": is_out_of_memory(exc) and cap is not None and "cuda" not in text.lower(),
        "memory_limit": format_bytes(cap) if cap else None,
        "traceback": "".join(traceback.format_exception(exc))[-2000:],
    }
    path.write_text(json.dumps(record), encoding="utf-8")


def _memory_cap(cfg: BenchConfig, local_ranks: int) -> int | None:
    """This rank's memory cap: as given; on CPU the host's memory over its ranks; none
    for a rank on a GPU (its device memory is not the host's)."""
    if cfg.memory_limit_bytes:
        return cfg.memory_limit_bytes
    on_cpu = cfg.backend == "gloo" or not torch.cuda.is_available()
    host = physical_memory()
    return host // max(1, local_ranks) if on_cpu and host else None


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m gpuscale.bench.worker",
        description="gpuscale scaling worker (run under torchrun)",
    )
    parser.add_argument("--models", required=True, help="comma-separated model names")
    parser.add_argument("--jsonl", type=Path, help="results file to append to (without --progress)")
    parser.add_argument(
        "--params", default="{}", help="parameters of each model as JSON (counted if absent)"
    )
    parser.add_argument("--config", default="{}", help="BenchConfig as JSON")
    parser.add_argument(
        "--threads", type=int, default=0, help="CPU threads per process (0: see --largest-local)"
    )
    parser.add_argument(
        "--largest-local",
        type=int,
        default=0,
        help="the sweep's largest processes per node (threads: cores / (it x nodes on host))",
    )
    parser.add_argument("--sweep-id", default="", help="the runner's id of this sweep")
    parser.add_argument("--node-rank", type=int, default=0, help="this node's --node-rank")
    parser.add_argument(
        "--progress", type=Path, help="file where each node notes its starts (and rank 0 rows)"
    )
    parser.add_argument("--skip-keys", default="", help="keys already done, ';'-separated")
    args = parser.parse_args(argv)
    if args.jsonl is None and args.progress is None:
        parser.error("give --jsonl (the results file), or --progress (the runner's)")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    die_with_runner()  # with its launcher, and with the command that started it
    cfg = BenchConfig.from_json(args.config)
    local_world = int(os.environ.get("LOCAL_WORLD_SIZE", "1"))
    cap = _memory_cap(cfg, max(local_world, args.largest_local))
    limit_memory(cap)
    errors = args.progress.parent if args.progress else None
    rank = int(os.environ.get("RANK", "0"))
    try:
        with process_group(cfg.backend, cfg.timeout_s) as device:
            _run_models(args, cfg, device, errors, cap)
    except BaseException as exc:  # before any model, or after: the runner reads the cause
        _write_error(errors, rank, "", exc, cap)
        raise
    return 0


def _run_models(
    args: argparse.Namespace,
    cfg: BenchConfig,
    device: torch.device,
    errors: Path | None,
    cap: int | None,
) -> None:
    """Each model of ``--models`` measured in turn, its row written by global rank 0."""
    host = Host.find()
    local_world = int(os.environ.get("LOCAL_WORLD_SIZE", "1"))
    threads = args.threads or cfg.resolved_threads(
        args.largest_local or local_world, host.nodes_on_host
    )
    torch.set_num_threads(threads)
    if device.type == "cuda":
        cuda, cudnn = torch.backends.cuda, torch.backends.cudnn
        cuda.matmul.allow_tf32, cudnn.allow_tf32 = tf32_flags(cfg.tf32)
    rank, local_rank = dist.get_rank(), int(os.environ.get("LOCAL_RANK", "0"))
    environment = machine_environment(device) if rank == 0 else {}
    # every node's runner made its own id: the rows carry one, and each runner learns it
    sweep_id = agreed_sweep_id(gather((args.node_rank, args.sweep_id)))
    _note(args.progress, local_rank, "sweep", sweep_id)
    skip = set(filter(None, args.skip_keys.split(";")))
    params = json.loads(args.params)
    for name in args.models.split(","):
        config = _config_fields(name, cfg, device, threads, params.get(name))
        key = run_key(
            cfg,
            model=name,
            accelerators=config["accelerators"],
            nnodes=config["nnodes"],
            device=device.type,
            threads=threads,
            params=params.get(name),
        )
        if key in skip:
            _note(args.progress, local_rank, "skipped", key)
            continue
        # noted before the model's own code runs: a failure from here on is this model's
        _note(args.progress, local_rank, "started", key, json.dumps(config))
        started = time.time()
        try:
            if config["params"] is None:  # run by hand: counted here
                config["params"] = parameter_count(name)
            runs = [run_model(name, cfg, device, host) for _ in range(cfg.repeat)]
            measured = median_run(runs)
        except BaseException as exc:
            _write_error(errors, rank, key, exc, cap)
            raise
        # every node says so (not only the writer): a crash after this is not the model's
        _note(args.progress, local_rank, "finished", key)
        if rank == 0:
            loss = measured.pop("loss_last", None)
            record = {
                "schema": SCHEMA,
                "key": key,
                "sweep_id": sweep_id or None,
                "status": "ok",
                "config": config,
                "environment": environment,
                "started_at": datetime.fromtimestamp(started, timezone.utc).isoformat(),
                **measured,
                # NaN is no JSON number: a loss that is none is said in the flags alone
                "loss_last": loss if loss is None or math.isfinite(loss) else None,
                "flags": [
                    *run_flags(
                        measured["timing"], measured["host"], measured["noise"], warmup=cfg.warmup
                    ),
                    *loss_flags(loss),
                ],
                "duration_s": time.time() - started,
            }
            record["flops"].update(mfu_fields(record, environment.get("device_name")))
            if args.progress is not None:  # the runner appends it
                _note(args.progress, 0, "row", key, json.dumps(record, default=str))
            else:
                append_result(args.jsonl, record)


def _note(progress: Path | None, local_rank: int, event: str, key: str, extra: str = "") -> None:
    """One line for this node's runner (local rank 0 writes): ``event TAB key TAB extra``,
    written at once (a line is whole, or not there)."""
    if local_rank == 0 and progress is not None:
        line = f"{event}\t{key}\t{extra}\n".encode()
        fd = os.open(progress, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            os.write(fd, line)
        finally:
            os.close(fd)


if __name__ == "__main__":
    end_rank(main)

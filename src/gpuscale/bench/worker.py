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
import json
import math
import os
import time
import traceback
from datetime import datetime, timezone
from pathlib import Path

import torch
import torch.distributed as dist

from gpuscale.bench.config import BenchConfig, tf32_flags
from gpuscale.bench.launch_events import is_out_of_memory
from gpuscale.bench.model_run import run_model  # tests patch it here: worker.run_model
from gpuscale.bench.models import family_of, parameter_count
from gpuscale.bench.ranks import Host, agreed_sweep_id, end_rank, gather, process_group
from gpuscale.bench.results import SCHEMA
from gpuscale.bench.results_file import append_result
from gpuscale.bench.row_keys import resolved_config, run_key
from gpuscale.bench.summary import median_run, mfu_fields
from gpuscale.bench.telemetry import machine_environment
from gpuscale.plausibility import cpu_use, loss_flags, peak_flags, run_flags, samples_flags
from gpuscale.quantities import format_bytes
from gpuscale.sources.processes import die_with_runner, limit_memory, physical_memory


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
    if folder is None or (path := folder / f"error-{rank}.json").exists():
        return
    text = str(exc).strip()
    if isinstance(exc, SystemExit):
        text = f"the model's code called sys.exit({exc.code!r})"
    record = {
        "key": key,
        "rank": rank,
        "type": type(exc).__name__,
        "message": (text.splitlines() or [""])[0][:300],
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
    # the ranks on the writer's host: every node launched there (two nodes on one host)
    environment = {**machine_environment(device), "ranks_on_host": host.ranks_on_host}
    environment = environment if rank == 0 else {}
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
        # noted before the model's own code runs: a failure from here on is this model's.
        # No rank runs it until every node's note is written (a rank dying in its first
        # line would otherwise end the launch before the start is said, and the runner
        # would blame every model still to run).
        _note(args.progress, local_rank, "started", key, json.dumps(config))
        dist.barrier()
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
                        measured["timing"],
                        measured["host"],
                        measured["noise"],
                        warmup=cfg.warmup,
                        cpu=cpu_use(config, environment),
                        strategy=cfg.strategy,
                        steps=cfg.steps,
                    ),
                    *loss_flags(loss),
                    *samples_flags(measured["data"]),  # a global batch repeating its samples
                ],
                "duration_s": time.time() - started,
            }
            record["flops"].update(mfu_fields(record, environment.get("device_name")))
            # a rate above the device's peak (an MFU above 1) is flagged where it is made
            flops = record["flops"]
            record["flags"] += peak_flags(flops["achieved_tflops_per_device"], flops["peak_tflops"])
            if args.progress is not None:  # the runner appends it
                _note(args.progress, 0, "row", key, json.dumps(record, default=str))
            else:
                append_result(args.jsonl, record)
        # the next model starts once rank 0 has noted this one's row: a rank that dies in
        # the next cannot end the launch before this model is said finished and written
        dist.barrier()


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

"""Small inputs the tests build: bench records and collectives sweeps (MLPerf result trees
are built by ``tests.mlperf.logbuilder``)."""

from __future__ import annotations

import importlib.util
import json
import re
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

from gpuscale.bench.config import BenchConfig
from gpuscale.bench.results import SCHEMA
from gpuscale.bench.row_keys import run_key


def bench_record(
    model: str,
    params: int,
    accelerators: int,
    samples_per_s: float,
    *,
    status: str = "ok",
    family: str = "mlp",
    batch: int = 8,
    forward_ms: float = 1.0,
    backward_ms: float = 2.0,
    optimizer_ms: float = 0.5,
    sync_overhead_ms: float = 0.0,
    comm_ms: float | None = None,
    flops_per_sample: float | None = None,
    power_w: float | None = None,
    steps: list[float] | None = None,
    config: BenchConfig | None = None,
    threads: int = 1,
    plain_step_ms: float | None = None,
    power_w_total: float | None = None,
    **extra: Any,
) -> dict[str, Any]:
    """One ``gpuscale.bench/2`` record of a CPU run (gloo), with the fields given."""
    cfg = config or BenchConfig(steps=20, batch=batch)
    nosync = forward_ms + backward_ms + optimizer_ms
    step = nosync + sync_overhead_ms
    key = run_key(
        cfg, model=model, accelerators=accelerators, nnodes=1, device="cpu", threads=threads
    )
    config_fields = {
        **json.loads(cfg.to_json()),
        "bucket_mb": cfg.ddp_bucket_mb,  # as a run's row records it (row_keys.resolved_config)
        "model": model,
        "family": family,
        "params": params,
        "accelerators": accelerators,
        "nnodes": 1,
        "backend": "gloo",
        "device": "cpu",
        "batch": batch,
        "batch_per_device": batch,
        "global_batch": batch * accelerators,
        "threads": threads,
    }
    record: dict[str, Any] = {
        "schema": SCHEMA,
        "key": key,
        "status": status,
        "config": config_fields,
        "environment": {"hostname": "testhost", "device_name": "cpu"},
        "flags": [],
    }
    if status == "ok":
        record.update(
            timing={
                "step_ms_mean": step,
                "step_ms_p50": step,
                "step_ms_p95": step,
                "nosync_step_ms_mean": nosync,
                "nosync_step_ms_p50": nosync,
                "nosync_step_ms_p95": nosync,
                "samples_per_s": samples_per_s,
                "forward_ms": forward_ms,
                "backward_ms": backward_ms,
                "optimizer_ms": optimizer_ms,
                "sync_overhead_ms": sync_overhead_ms,
                "comm_ms": comm_ms,
                "plain_step_ms_mean": plain_step_ms,
            },
            flops={"per_sample": flops_per_sample, "achieved_tflops_per_device": None},
            per_rank={"step_ms": [steps or [step] * 4], "nosync_step_ms": [steps or [nosync] * 4]},
            grad_bytes_per_step=4 * params,
            allreduce_bytes_per_step=4 * params if accelerators > 1 else 0,
            memory={"peak_bytes": 1 << 20, "kind": "max_rss"},
            nvml=(
                {"power_w_mean": power_w, "power_w_total": power_w_total}
                if power_w is not None
                else None
            ),
            host={"other_load_share": 0.0, "steal_share": 0.0},
        )
    else:
        record["error"] = extra.pop("error", f"{status} in a test")
    record.update(extra)
    return record


def one_and_two(
    model: str,
    params: int,
    one: dict[str, Any] | None = None,
    two: dict[str, Any] | None = None,
    **more: Any,
) -> list[dict[str, Any]]:
    """An ``ok`` run of ``model`` on 1 and on 2 devices, as many advice tests use them:
    1,000 and 1,500 samples/s, forward 2 ms, backward 4 ms, optimizer 1 ms, and at N = 2
    3 ms of synchronisation over 4 ms of communication (``more``: further fields of both,
    ``one`` and ``two``: of one run, over ``more``)."""
    return [
        bench_record(
            model,
            params,
            world,
            sps,
            forward_ms=2.0,
            backward_ms=4.0,
            optimizer_ms=1.0,
            sync_overhead_ms=overhead,
            comm_ms=comm,
            **{**more, **(own or {})},
        )
        for world, sps, overhead, comm, own in (
            (1, 1000.0, 0.0, None, one),
            (2, 1500.0, 3.0, 4.0, two),
        )
    ]


def sweep_rows(busbw_gbs: float, latency_us: float, ranks: int = 2) -> list[dict[str, Any]]:
    """An all-reduce sweep that follows the ring model exactly, 8 B to 128 MiB."""
    rows = []
    for power in range(3, 28):
        size = 2**power
        time_s = 2 * (ranks - 1) * latency_us * 1e-6 + 2 * (ranks - 1) / ranks * size / (
            busbw_gbs * 1e9
        )
        rows.append(
            {
                "kind": "result",
                "op": "all_reduce",
                "placement": "in-place",
                "status": "ok",
                "size_bytes": size,
                "ranks": ranks,
                "time_us": time_s * 1e6,
            }
        )
    return rows


def write_jsonl(path: Path, rows: list[dict[str, Any]], extra_lines: tuple[str, ...] = ()) -> Path:
    path.write_text(
        "".join(json.dumps(r) + "\n" for r in rows) + "".join(x + "\n" for x in extra_lines)
    )
    return path


def end_spawned_rank() -> None:
    """End a rank that ``torch.multiprocessing.spawn`` started, once its work is written
    and its process group destroyed: without running the interpreter's teardown, where
    torch 2.13's gloo threads abort the process now and then ("terminate called without an
    active exception", SIGABRT), which ``spawn`` reports as the rank's failure (a CI run
    and helpers' runs saw it in ``test_noise`` and ``test_same_samples``, also on code that
    had passed). Called only on the path that finished: an error still propagates."""
    import os

    os._exit(0)


H100_PATHS = Path(__file__).parent / "report" / "h100_paths.jsonl"  # the H100 rows, a copy


def one_device_record(model: str, path: Path = H100_PATHS) -> dict[str, Any]:
    """The raw bench record of ``model``'s N = 1 run in ``path`` (the H100 rows)."""
    for line in path.read_text().splitlines():
        row = json.loads(line)
        if row["config"]["model"] == model and row["config"]["accelerators"] == 1:
            return row
    raise AssertionError(f"no N = 1 row of {model}")


def benchmark_script(name: str) -> ModuleType:
    """``benchmarks/<name>.py`` imported as a module (registered in ``sys.modules`` under
    ``name``: a dataclass of the script looks its module up there)."""
    path = Path(__file__).resolve().parents[1] / "benchmarks" / f"{name}.py"
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def measured_count(record: type | None = None, **more: float) -> Any:
    """A count measured at 2 devices (one run, 1.5x) outside its predicted 1.7-1.9x:
    ``record`` (``advice.types.MeasuredCount`` or a subclass) with ``more`` fields."""
    from gpuscale.advice.types import Measured, MeasuredCount

    run = Measured(devices=2, speedup=1.5, flagged=False, batch_per_device=8)
    return (record or MeasuredCount)(
        accelerators=2,
        batch_per_device=8,
        accum=1,
        base=(8, 1),
        predicted_speedup=1.8,
        predicted_low=1.7,
        predicted_high=1.9,
        weak_scaling=False,
        runs=(run,),
        trusted=(run,),
        speedups=(1.5,),
        measured_speedup=1.5,
        inside=False,
        basis=("bare",),
        **more,
    )


def undated(text: str) -> str:
    """A report page's text without the minute it was written (``2026-11-30 22:52 UTC``):
    two builds of one report that straddle a minute read alike."""
    return re.sub(r"\d{4}-\d\d-\d\d \d\d:\d\d UTC", "", text)

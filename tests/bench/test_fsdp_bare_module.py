"""An FSDP run's bare module at N = 1 is bare: FSDP2's ``fully_shard`` shards the module in
place, so timing ``bench.module`` as the "bare" step timed the sharded one, and FSDP's own
work (step less bare) read 0 by construction (tf-30m on an H100: step 36.2 ms, "bare"
36.5 ms, no-sync 26.2 ms). The worker times an unsharded copy with its own optimizer."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.builders import end_spawned_rank

torch = pytest.importorskip("torch")


def _rank(rank: int, store: str, out: str, strategy: str) -> None:
    import torch.distributed as dist

    from gpuscale.bench.config import BenchConfig
    from gpuscale.bench.model_run import _bare, _job

    torch.set_num_threads(1)
    dist.init_process_group("gloo", init_method=f"file://{store}", rank=rank, world_size=1)
    try:
        cfg = BenchConfig(backend="gloo", steps=2, warmup=1, batch=8, nvml=False, strategy=strategy)
        job, _, _ = _job("mlp-0.2m", cfg, torch.device("cpu"), 1, 8)
        plain = _bare(job)
        kinds = {type(p).__name__ for p in plain.wrapped.parameters()}
        mine = {id(p) for p in plain.optimizer.param_groups[0]["params"]}
        record = {
            "same_object": plain.wrapped is job.wrapped,
            "is_bench_module": plain.wrapped is job.bench.module,
            "param_kinds": sorted(kinds),
            "optimizer_on_it": mine == {id(p) for p in plain.wrapped.parameters()},
            "fsdp": plain.fsdp,
        }
        Path(out).write_text(json.dumps(record))
    finally:
        dist.destroy_process_group()
    end_spawned_rank()


def _bare_of(tmp_path: Path, strategy: str) -> dict:
    import torch.multiprocessing as mp

    out, store = tmp_path / f"{strategy}.json", tmp_path / f"store-{strategy}"
    mp.spawn(_rank, args=(str(store), str(out), strategy), nprocs=1)
    return json.loads(out.read_text())


def test_fsdp_times_an_unsharded_copy(tmp_path: Path) -> None:
    found = _bare_of(tmp_path, "fsdp")
    assert found["same_object"] is False  # was the sharded module itself
    assert found["param_kinds"] == ["Parameter"]  # no DTensor: not sharded
    assert found["optimizer_on_it"] and found["fsdp"] is False


def test_ddp_times_the_module_it_wraps(tmp_path: Path) -> None:
    found = _bare_of(tmp_path, "ddp")
    assert found["is_bench_module"] and found["param_kinds"] == ["Parameter"]


def _fp16_rank(rank: int, store: str, out: str) -> None:
    import torch.distributed as dist

    from gpuscale.bench.config import BenchConfig
    from gpuscale.bench.model_run import run_model

    torch.set_num_threads(1)
    dist.init_process_group("gloo", init_method=f"file://{store}", rank=rank, world_size=1)
    try:
        cfg = BenchConfig(
            backend="gloo",
            steps=2,
            warmup=1,
            batch=8,
            nvml=False,
            strategy="fsdp",
            precision="fp16",
        )
        timing = run_model("mlp-0.2m", cfg, torch.device("cpu"))["timing"]
        Path(out).write_text(json.dumps(timing))
    finally:
        dist.destroy_process_group()
    end_spawned_rank()


def test_fsdp_in_fp16_times_its_steps(tmp_path: Path) -> None:
    """`bench --strategy fsdp --precision fp16` failed every run ("AssertionError: No inf
    checks were recorded for this optimizer"): FSDP2's no-sync step leaves the sharded
    gradients unset and fp16's GradScaler refuses to step over none. Both kinds of step
    are timed now."""
    import torch.multiprocessing as mp

    out = tmp_path / "fp16.json"
    mp.spawn(_fp16_rank, args=(str(tmp_path / "store-fp16"), str(out)), nprocs=1)
    timing = json.loads(out.read_text())
    assert timing["step_ms_mean"] > 0 and timing["nosync_step_ms_mean"] > 0
    assert timing["samples_per_s"] > 0

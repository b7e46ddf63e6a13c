"""Ranks that saw the same samples are caught: identical per-rank gradients at N > 1 flag
the run and leave its noise scale unreported; the per-rank data of torch's default
generator (which the worker seeds per rank) is not flagged. And the N = 1 run times a
second batch: the fixed per-step cost."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gpuscale.bench.summary import fixed_cost
from gpuscale.plausibility import SAME_SAMPLES, run_flags, same_samples
from tests.builders import end_spawned_rank

torch = pytest.importorskip("torch")


def test_identical_norms_are_the_same_samples() -> None:
    same = [[4.0, 9.0], [4.0, 9.0]]
    assert same_samples(same, [4.0, 9.0])
    assert not same_samples([[4.0, 9.0], [4.1, 9.0]], [3.0, 8.0])
    assert not same_samples([[], []], [])  # nothing measured: nothing to say
    flagged = run_flags({}, None, {"duplicated": True})
    assert flagged == [SAME_SAMPLES] and "torch's default generator" in flagged[0]
    # a record written before the worker checked: its rank-mean norm equals the global one
    old = {"batch_small": 4, "batch_big": 8, "local_sq": [4.0, 9.0], "global_sq": [4.0, 9.0]}
    assert run_flags({}, None, old) == [SAME_SAMPLES]
    assert run_flags({}, None, {**old, "batch_big": 4}) == []  # N = 1: one gradient


def test_the_fixed_cost_is_the_intercept_of_two_batches() -> None:
    """Plain steps of 10 ms + 0.1 ms per sample at batches 8 and 32 (with noise): the
    intercept 10 ms inside its range."""
    small = [10.8 + d for d in (-0.2, 0.1, 0.2, -0.1)]
    large = [13.2 + d for d in (0.2, -0.2, 0.1, -0.1)]
    gathered = [{"kinds": {"plain": {"step": large}, "plain_small": {"step": small}}}]
    found = fixed_cost(gathered, 8, 32)
    assert found["fixed_ms"] == pytest.approx(10.0)
    assert found["fixed_ms_low"] < 10.0 < found["fixed_ms_high"] <= 10.8
    assert found["small_batch_step_ms_mean"] == pytest.approx(10.8)
    assert fixed_cost(gathered, None, 32)["fixed_ms"] is None


def test_the_fixed_cost_is_no_more_than_either_step() -> None:
    """A small batch timed slower than the large one (noise: 2 steps on a busy host gave
    108 ms at batch 2 against 21.9 ms at batch 8): the line's intercept, 33.3 ms here, is
    above both steps, and a fixed cost is part of each, so it is the faster step, 20 ms."""
    small = [30.0 + d for d in (-0.2, 0.2, 0.1, -0.1)]
    large = [20.0 + d for d in (0.1, -0.1, 0.2, -0.2)]
    gathered = [{"kinds": {"plain": {"step": large}, "plain_small": {"step": small}}}]
    found = fixed_cost(gathered, 2, 8)
    assert found["fixed_ms"] == pytest.approx(20.0)
    assert found["fixed_ms_high"] == pytest.approx(20.0)
    assert found["small_batch_step_ms_mean"] == pytest.approx(30.0)


def _rank(rank: int, store: str, out: str, model: str, world: int) -> None:
    import torch.distributed as dist

    from gpuscale.bench.config import BenchConfig
    from gpuscale.bench.worker import run_model

    torch.set_num_threads(1)
    dist.init_process_group("gloo", init_method=f"file://{store}", rank=rank, world_size=world)
    try:
        cfg = BenchConfig(backend="gloo", steps=6, warmup=1, batch=8, nvml=False)
        measured = run_model(model, cfg, torch.device("cpu"))
        if rank == 0:
            flags = run_flags(measured["timing"], None, measured["noise"])
            record = {"noise": measured["noise"], "timing": measured["timing"], "flags": flags}
            Path(out).write_text(json.dumps(record))
    finally:
        dist.destroy_process_group()
    end_spawned_rank()


def _bench(tmp_path: Path, model: str, world: int) -> dict:
    import torch.multiprocessing as mp

    out = tmp_path / f"{model.replace(':', '-')}-{world}.json"
    # a store of its own per launch: a second launch must not read the first's addresses
    store = tmp_path / f"store-{model.replace(':', '-')}-{world}"
    mp.spawn(_rank, args=(str(store), str(out), model, world), nprocs=world)
    return json.loads(out.read_text())


@pytest.mark.slow
def test_a_bench_of_same_sample_ranks_is_flagged(tmp_path: Path) -> None:
    same = _bench(tmp_path, "tests.bench.same_seed:make", 2)
    assert SAME_SAMPLES in same["flags"]
    assert same["noise"]["duplicated"] is True
    assert same["noise"]["local_sq"] == [] and same["noise"]["global_sq"] == []
    own = _bench(tmp_path, "tests.bench.linreg:make", 2)  # torch's generator, per rank
    assert SAME_SAMPLES not in own["flags"] and own["noise"]["duplicated"] is False
    assert len(own["noise"]["local_sq"]) == 6


@pytest.mark.slow
def test_one_device_times_a_second_batch(tmp_path: Path) -> None:
    timing = _bench(tmp_path, "tests.bench.linreg:make", 1)["timing"]
    assert timing["small_batch_per_device"] == 2  # a quarter of batch 8
    assert 0 <= timing["fixed_ms_low"] <= timing["fixed_ms"] <= timing["fixed_ms_high"]
    assert timing["fixed_ms_high"] <= timing["small_batch_step_ms_mean"]

"""Rows compare only like with like, and the one-device baseline is what a user pays."""

from __future__ import annotations

import math

import pytest

from gpuscale.analysis.bench_scaling import NO_BASELINE, bench_scaling
from gpuscale.bench.config import BenchConfig
from gpuscale.bench.results import bench_table, flag_summary
from gpuscale.bench.row_keys import resolved_config
from gpuscale.bench.summary import median_run, power_total
from gpuscale.plausibility import NOISY_MIN_STEPS

from ..builders import bench_record


def _as_old_worker_wrote(record: dict) -> dict:
    """The config the worker wrote before it recorded resolved values: BenchConfig's
    placeholders (threads 0, global batch 64) over what ran; the key kept the truth."""
    return {**record, "config": {**record["config"], "threads": 0, "global_batch": 64}}


def test_mixed_thread_counts_give_no_speedup() -> None:
    # the case: a 2-thread N = 1 run and a 1-thread N = 2 run of the same model
    one = _as_old_worker_wrote(bench_record("m", 10**6, 1, 100.0, threads=2))
    two = _as_old_worker_wrote(bench_record("m", 10**6, 2, 2480.0, threads=1))
    table = bench_table([one, two])
    assert list(table["threads"]) == [2, 1]  # read from the key, not the placeholder
    assert list(table["global_batch"]) == [8, 16]
    scaling = bench_scaling(table)
    at_two = scaling[scaling["accelerators"] == 2].iloc[0]
    assert math.isnan(at_two["speedup"]) and math.isnan(at_two["efficiency"])
    assert NO_BASELINE in at_two["flags"] and "super-linear" not in at_two["flags"]


def test_weak_scaling_runs_of_another_per_device_batch_are_not_compared() -> None:
    one = bench_record("m", 10**6, 1, 100.0, batch=8)
    two = bench_record("m", 10**6, 2, 400.0, batch=32)
    scaling = bench_scaling(bench_table([one, two]))
    assert scaling["speedup"].isna().sum() == 2  # N = 1 (no speedup there) and N = 2


def test_speedup_is_against_the_plain_one_device_step() -> None:
    # the small model: 1.45 against DDP's one-rank step, ~0.95 against a plain
    # loop of the same model, batch and threads (DDP at N = 1 costs 3.45 ms of 10 ms)
    one = bench_record("m", 2 * 10**5, 1, 800.0, plain_step_ms=6.55)
    two = bench_record("m", 2 * 10**5, 2, 1160.0)
    scaling = bench_scaling(bench_table([one, two])).set_index("accelerators")
    assert scaling.loc[2, "speedup_ddp"] == pytest.approx(1.45)
    assert scaling.loc[2, "speedup"] == pytest.approx(1160 / (8 / 6.55e-3), rel=1e-9)
    assert scaling.loc[2, "speedup"] < 1 < scaling.loc[2, "speedup_ddp"]
    assert scaling.loc[2, "baseline"] == "plain N = 1 step"
    # without a plain step (older rows) the DDP step is the baseline, and says so
    old = bench_scaling(bench_table([bench_record("m", 2 * 10**5, 1, 800.0), two]))
    assert old.loc[old.accelerators == 2, "baseline"].item() == "DDP N = 1"
    assert old.loc[old.accelerators == 2, "speedup"].item() == pytest.approx(1.45)


def test_the_row_config_is_what_ran() -> None:
    cfg = BenchConfig(threads=0, backend="auto")
    config = resolved_config(
        cfg, model="m", family="mlp", params=5, accelerators=2, nnodes=1, device="cpu", threads=3
    )
    assert (config["threads"], config["batch"], config["global_batch"]) == (3, 8, 16)
    assert config["backend"] == "gloo"
    strong = resolved_config(
        BenchConfig(scaling="strong", global_batch=64, accum=2),
        model="m",
        family="mlp",
        params=5,
        accelerators=4,
        nnodes=1,
        device="cpu",
        threads=1,
    )
    assert (strong["batch_per_device"], strong["global_batch"]) == (8, 64)


def test_flags_are_counted_by_kind() -> None:
    busy = {"flags": ["machine busy: other processes used 60% of its CPU time"]}
    noisy = "noisy no-sync steps: p95 9 ms is 3.0x the median (> 1.5x); run more --steps"
    # timed over NOISY_MIN_STEPS: a noisy flag stored on fewer is judged again when read
    cfg = BenchConfig(steps=NOISY_MIN_STEPS)
    rows = [
        bench_record("m", 10**6, 1, 100.0, config=cfg, **busy),
        bench_record("m", 10**6, 2, 150.0, config=cfg, flags=[busy["flags"][0], noisy]),
    ]
    summary = {kind: (n, why) for kind, n, why in flag_summary(bench_table(rows))}
    assert summary["machine busy"][0] == 2
    assert summary["noisy no-sync steps"] == (1, noisy)


def test_repeats_keep_the_median_run_and_its_spread() -> None:
    runs = [{"timing": {"samples_per_s": rate}, "id": i} for i, rate in enumerate([30, 10, 20])]
    chosen = median_run(runs)
    assert chosen["id"] == 2
    assert chosen["timing"]["repeat_samples_per_s"] == [30, 10, 20]
    assert chosen["timing"]["repeat_spread"] == pytest.approx((30 - 10) / 20)


def test_an_even_repeat_keeps_the_slower_middle_run_and_spreads_over_the_true_median() -> None:
    """``--repeat 2`` at 100 and 300 samples/s: the run kept is a measured one, the slower
    (100/s, conservative); the spread is over the median of the rates (200/s), not over
    the run kept ((300 - 100) / 100 = 2 read a 100% spread as 200%)."""
    runs = [{"timing": {"samples_per_s": rate}, "id": i} for i, rate in enumerate([300, 100])]
    chosen = median_run(runs)
    assert chosen["id"] == 1
    assert chosen["timing"]["repeat_spread"] == pytest.approx((300 - 100) / 200)
    four = [{"timing": {"samples_per_s": r}, "id": i} for i, r in enumerate([40, 10, 30, 20])]
    kept = median_run(four)
    assert kept["id"] == 3  # 20/s: the slower of the two middle runs (20 and 30)
    assert kept["timing"]["repeat_spread"] == pytest.approx((40 - 10) / 25)


def test_power_at_n_counts_each_package_once() -> None:
    # one host, two ranks: its first rank's meter reports a share of 20 W of 40 W
    assert power_total([{"power_w_mean": 20.0, "ranks_on_host": 2}]) == 40.0
    # GPUs: one meter per device
    assert power_total([{"power_w_mean": 300.0}, {"power_w_mean": 310.0}]) == 610.0


def test_a_rerun_is_read_against_its_own_one_device_run() -> None:
    # two sweeps into one file, the host twice as busy during the second
    rows = [
        {**bench_record("m", 10**6, 1, 100.0), "sweep_id": "a"},
        {**bench_record("m", 10**6, 2, 180.0), "sweep_id": "a"},
        {**bench_record("m", 10**6, 1, 50.0), "sweep_id": "b"},
        {**bench_record("m", 10**6, 2, 90.0), "sweep_id": "b"},
    ]
    scaling = bench_scaling(bench_table(rows))
    at_two = scaling[scaling["accelerators"] == 2]
    assert list(at_two["speedup"]) == pytest.approx([1.8, 1.8])  # not 3.6 and 1.8


def test_one_rank_faster_than_the_plain_step_is_flagged() -> None:
    """At N = 1, DDP's step against the plain step of the same model is DDP's own cost
    (efficiency below 1); measured above 1 it is noise, flagged, not a finding."""
    slow_ddp = bench_record("m", 10**6, 1, 800.0, plain_step_ms=6.55)  # 10 ms DDP step
    fast_ddp = bench_record("m", 10**6, 1, 800.0, plain_step_ms=12.0)  # plain slower
    for record, flagged in ((slow_ddp, False), (fast_ddp, True)):
        row = bench_scaling(bench_table([record])).iloc[0]
        assert ("as fast as the plain step" in row["flags"]) is flagged
        assert bool(row["flagged"]) is flagged

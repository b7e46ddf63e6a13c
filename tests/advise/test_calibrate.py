"""Calibration from measurements: collectives sweep -> link, bench N = 1 -> compute."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gpuscale.advise.calibrate import (
    CalibrationError,
    compute_from_bench,
    link_from_collectives,
    overlap_or_default,
)
from gpuscale.advise.model import Compute, Link, allreduce_terms, predict_step
from gpuscale.bench.results import bench_table

from ..builders import bench_record, sweep_rows


def sweep_file(tmp_path: Path, busbw_gbs: float, latency_us: float, ranks: int = 2) -> Path:
    """An all-reduce sweep that follows the ring model exactly, 8 B to 128 MiB."""
    rows = [
        {"kind": "sweep", "sweep_id": "s1", "device": "cpu"},
        *sweep_rows(busbw_gbs, latency_us, ranks),
    ]
    path = tmp_path / "coll.jsonl"
    lines = [json.dumps({"schema": "gpuscale.collectives/2", "sweep_id": "s1", **r}) for r in rows]
    path.write_text("\n".join([*lines, "not json"]) + "\n")
    return path


@pytest.mark.parametrize("busbw, latency, ranks", [(0.86, 250.0, 2), (180.0, 8.0, 8)])
def test_link_recovers_the_ring_model(tmp_path: Path, busbw, latency, ranks) -> None:
    link = link_from_collectives(sweep_file(tmp_path, busbw, latency, ranks))
    assert link.busbw_gbs == pytest.approx(busbw, rel=1e-6)
    assert link.latency_us == pytest.approx(latency, rel=1e-6)


@pytest.mark.parametrize("load", [True, False])
def test_link_says_when_it_was_measured_under_load(tmp_path: Path, load: bool) -> None:
    path = sweep_file(tmp_path, 0.5, 700.0)
    rows = [json.loads(line) for line in path.read_text().splitlines()[:-1]]
    path.write_text(
        "".join(json.dumps({**r, "load": load} if "op" in r else r) + "\n" for r in rows)
    )
    link = link_from_collectives(path)
    assert ("under compute load" in link.name) is load
    assert link.busbw_gbs == pytest.approx(0.5, rel=1e-6)


def test_link_is_not_pulled_by_small_message_noise(tmp_path: Path) -> None:
    path = sweep_file(tmp_path, 1.0, 300.0)
    lines = path.read_text().splitlines()
    noisy = []
    for line in lines:
        row = json.loads(line) if line.startswith("{") else None
        if row and row.get("op") == "all_reduce" and row["size_bytes"] <= 2**14:
            row["time_us"] *= 3.0  # jittery small messages
        noisy.append(json.dumps(row) if row else line)
    path.write_text("\n".join(noisy) + "\n")
    assert link_from_collectives(path).busbw_gbs == pytest.approx(1.0, rel=1e-6)


def test_link_needs_a_sweep(tmp_path: Path) -> None:
    path = tmp_path / "coll.jsonl"
    record = {
        "schema": "gpuscale.collectives/2",
        "kind": "result",
        "sweep_id": "s",
        "op": "all_gather",
        "status": "ok",
        "size_bytes": 8,
    }
    path.write_text(json.dumps(record) + "\n")
    with pytest.raises(CalibrationError, match="all_reduce"):
        link_from_collectives(path)


def bench_records() -> list[dict]:
    one = bench_record(
        "mlp-1m",
        1_000_000,
        1,
        1000.0,
        forward_ms=2.0,
        backward_ms=4.0,
        optimizer_ms=1.0,
        sync_overhead_ms=0.5,
        steps=[6.0, 7.0, 8.0, 7.0],
    )
    two = bench_record("mlp-1m", 1_000_000, 2, 1500.0, sync_overhead_ms=3.5)
    return [one, two]


def test_compute_from_bench_takes_n1_breakdown_overhead_and_jitter() -> None:
    compute, params, power = compute_from_bench(bench_table(bench_records()), "mlp-1m")
    assert (compute.forward_ms, compute.backward_ms, compute.optimizer_ms) == (2.0, 4.0, 1.0)
    assert compute.ddp_overhead_ms == 0.5 and compute.total_ms == 7.5
    assert compute.step_samples_ms == (6.0, 7.0, 8.0, 7.0)
    assert params == 1_000_000 and power is None
    with pytest.raises(CalibrationError, match="no successful N = 1 run"):
        compute_from_bench(bench_table(bench_records()), "tf-7m")


def test_overlap_default_is_zero_on_cpu() -> None:
    table = bench_table(bench_records())
    link = Link(busbw_gbs=1.0, latency_us=100.0)
    # one bucket: nothing could be hidden, so the overlap is not measurable -> default
    assert overlap_or_default(table, "mlp-1m", link) == 0.0
    table["device"] = "cuda"
    assert overlap_or_default(table, "mlp-1m", link) == 0.5


def test_straggler_is_expected_max_minus_mean() -> None:
    compute = Compute(
        forward_ms=1, backward_ms=1, optimizer_ms=1, batch=1, step_samples_ms=(1.0, 3.0)
    )
    # max of two draws from {1, 3}: 3 unless both are 1 (p = 1/4) -> 2.5; mean 2
    assert compute.straggler_ms(2) == pytest.approx(0.5)
    assert compute.straggler_ms(1) == 0.0
    link = Link(busbw_gbs=10.0, latency_us=0.0)
    step = predict_step(compute, 0.0, 2, link)
    assert step.straggler_s == pytest.approx(0.5e-3)
    assert step.step_s == pytest.approx(3.5e-3)


@settings(max_examples=50, deadline=None)
@given(st.lists(st.floats(0.1, 100.0), min_size=2, max_size=30), st.integers(2, 64))
def test_straggler_grows_with_devices_and_stays_below_the_spread(samples, n) -> None:
    compute = Compute(
        forward_ms=1, backward_ms=1, optimizer_ms=1, batch=1, step_samples_ms=tuple(samples)
    )
    wait = compute.straggler_ms(n)
    assert -1e-9 <= wait <= max(samples) - sum(samples) / len(samples) + 1e-9
    assert compute.straggler_ms(n + 1) >= wait - 1e-9


def test_allreduce_terms_use_the_fitted_link(tmp_path: Path) -> None:
    link = link_from_collectives(sweep_file(tmp_path, 2.0, 100.0))
    terms = allreduce_terms(8e6, 2, link)
    assert terms.bandwidth_s == pytest.approx(8e6 / 2e9, rel=1e-6)
    assert terms.latency_s == pytest.approx(2 * 100e-6, rel=1e-6)

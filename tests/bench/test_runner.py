"""The sweep on CPU with gloo and 2 processes: rows, resume, a dead worker, a timeout."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("torch")

from gpuscale.analysis.bench_scaling import bench_scaling
from gpuscale.bench.results import SCHEMA, bench_table, read_results
from gpuscale.bench.runner import SweepConfig, run_sweep

pytestmark = pytest.mark.slow
ROOT = Path(__file__).resolve().parents[2]
SIZES = {"mlp-0.2m": 199_946, "mlp-1m": 1_055_754}


def config(out: Path, **kwargs) -> SweepConfig:
    base = {
        "models": ("mlp-0.2m", "mlp-1m"),
        "nproc": (1, 2),
        "out": out,
        "backend": "gloo",
        "steps": 3,
        "warmup": 1,
        "timeout_s": 60.0,
    }
    return SweepConfig(**{**base, **kwargs})


def test_sweep_rows_are_complete_and_resume_skips(tmp_path: Path) -> None:
    out = tmp_path / "results.jsonl"
    report = run_sweep(config(out), SIZES)
    assert report.appended == 4 and report.failures == []
    records, problems = read_results(out)
    assert problems == [] and len(records) == 4
    for r in records:
        assert r["schema"] == SCHEMA and r["status"] == "ok"
        assert r["config"]["backend"] == "gloo" and r["config"]["device"] == "cpu"
        assert len(r["per_rank"]["step_ms"]) == r["config"]["world_size"]
        assert r["timing"]["step_ms_mean"] > 0 and r["timing"]["samples_per_s"] > 0
        assert r["allreduce_bytes_per_step"] == (
            r["grad_bytes_per_step"] if r["config"]["world_size"] > 1 else 0
        )
        assert r["memory"]["peak_bytes"] > 0
    scaling = bench_scaling(bench_table(records))
    assert scaling["speedup"].notna().all()
    assert set(scaling["world_size"]) == {1, 2}
    again = run_sweep(config(out, resume=True), SIZES)
    assert (again.appended, again.skipped) == (0, 4)


@pytest.fixture
def faulty(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("PYTHONPATH", str(ROOT))

    def inject(fault: str) -> str:
        monkeypatch.setenv("GPUSCALE_TEST_FAULT", fault)
        return "tests.bench.faulty_worker"

    return inject


def test_dead_worker_is_recorded_and_earlier_rows_kept(tmp_path: Path, faulty) -> None:
    out = tmp_path / "results.jsonl"
    report = run_sweep(config(out, nproc=(2,), worker=faulty("mlp-1m:kill")), SIZES)
    records, _ = read_results(out)
    status = {r["config"]["model"]: r["status"] for r in records}
    assert status == {"mlp-0.2m": "ok", "mlp-1m": "crashed"}
    assert report.failures and "mlp-1m" in report.failures[0]


def test_timeout_is_recorded_and_the_sweep_goes_on(tmp_path: Path, faulty) -> None:
    out = tmp_path / "results.jsonl"
    run_sweep(config(out, nproc=(2,), timeout_s=4.0, worker=faulty("mlp-0.2m:hang")), SIZES)
    records, _ = read_results(out)
    status = {r["config"]["model"]: r["status"] for r in records}
    assert status == {"mlp-0.2m": "timeout", "mlp-1m": "ok"}


@pytest.mark.parametrize(("gap_ms", "load"), [(0.0, False), (2.0, False), (0.0, True)])
def test_collectives_sweep_on_two_cpu_ranks(tmp_path: Path, gap_ms: float, load: bool) -> None:
    import subprocess

    from gpuscale.bench.collectives import load_collectives, message_sizes
    from gpuscale.bench.runner import torchrun_command

    out = tmp_path / "coll.jsonl"
    command = [
        *torchrun_command(2, "gpuscale.bench.collectives"),
        *("--out", str(out), "--backend", "gloo", "--ops", "all_reduce"),
        *("--max-bytes", "4096", "--gap-ms", str(gap_ms)),
        *(["--load"] if load else []),
    ]
    subprocess.run(command, check=True, capture_output=True, timeout=120)
    table, _ = load_collectives(out)
    ok = table[table.status == "ok"]
    assert sorted(ok["bytes"]) == message_sizes(4096)
    assert (ok["ranks"] == 2).all() and (ok["busbw_gbs"] > 0).all()
    assert (ok["gap_ms"] == gap_ms).all()
    assert (ok["load"] == load).all()

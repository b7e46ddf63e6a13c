"""Refused before launch: more processes than CUDA devices visible for
``bench`` and ``collectives``, a collective on one rank; and a launch that failed is a
non-zero exit. The device count is faked, so these run on every machine; the same
refusals on a real GPU are in ``test_on_gpu.py``."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

pytest.importorskip("torch")

from gpuscale.bench import collectives_sweep, runner, sweep_plan
from gpuscale.bench.collectives_config import CollectivesConfig
from gpuscale.bench.collectives_sweep import SweepError, run_collectives
from gpuscale.bench.config import BenchConfig
from gpuscale.bench.runner import SweepConfig, SweepReport
from gpuscale.cli import app

cli = CliRunner()


@pytest.fixture
def one_gpu(monkeypatch: pytest.MonkeyPatch) -> None:
    """A host where torch sees one CUDA device."""

    def kind(backend: str) -> str:
        return "cpu" if backend == "gloo" else "cuda"

    for module in (runner, collectives_sweep):
        monkeypatch.setattr(module, "device_kind", kind)
        monkeypatch.setattr(module, "cuda_devices", lambda: 1, raising=False)


def test_bench_on_one_gpu_refuses_two_processes(one_gpu: None, tmp_path: Path) -> None:
    with pytest.raises(ValueError, match=r"1 CUDA device visible; --nproc 2 needs 2"):
        SweepConfig(models=("mlp-0.2m",), nproc=(1, 2), out=tmp_path / "r.jsonl")
    # one process fits; gloo's CPU processes are not GPUs
    SweepConfig(models=("mlp-0.2m",), nproc=(1,), out=tmp_path / "r.jsonl")
    gloo = BenchConfig(backend="gloo")
    SweepConfig(models=("mlp-0.2m",), nproc=(1, 2), out=tmp_path / "r.jsonl", bench=gloo)


def test_bench_command_refuses_before_anything_runs(one_gpu: None, tmp_path: Path) -> None:
    out = tmp_path / "r.jsonl"
    result = cli.invoke(app, ["bench", "--models", "mlp-0.2m", "--nproc", "1,2", "--out", str(out)])
    assert result.exit_code == 2
    assert "--backend gloo" in result.output and "Traceback" not in result.output
    assert not out.exists()


def test_a_failed_launch_exits_non_zero(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    def failed(cfg, sizes, **_) -> SweepReport:
        return SweepReport(failures=["launch on 2 failed: exit 1: a worker exited with code 1"])

    monkeypatch.setattr(sweep_plan, "run_sweep", failed)
    out = tmp_path / "r.jsonl"
    args = ["bench", "--models", "mlp-0.2m", "--nproc", "1", "--backend", "gloo", "--out", str(out)]
    result = cli.invoke(app, args)
    assert result.exit_code == 1, result.output


def test_a_collective_on_one_device_is_refused_and_writes_nothing(
    one_gpu: None, tmp_path: Path
) -> None:
    out = tmp_path / "collectives.jsonl"
    with pytest.raises(SweepError, match="a collective needs two or more devices"):
        run_collectives(CollectivesConfig(), out, 1)
    with pytest.raises(SweepError, match=r"--nproc 2 needs 2"):
        run_collectives(CollectivesConfig(), out, 2)
    assert not out.exists()
    result = cli.invoke(app, ["collectives", "--out", str(out)])  # the default: every GPU
    assert result.exit_code == 2
    assert "two or more devices" in result.output and "--interconnect" in result.output
    assert not out.exists()

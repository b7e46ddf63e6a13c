"""A bench sizes its CPU processes and threads by the cores its CPU affinity allows (a
Slurm job step's cpuset, ``taskset``), not the host's count: pinned to 1 of 2 cores,
``--nproc 1,2`` ran two ranks on one core (13.4 ms a step against 2.3 ms at N = 1, read as
scaling), and on a 64-core node a job given 4 cores ran 64 threads a rank by default."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from typer.testing import CliRunner

from gpuscale.bench.config import BenchConfig
from gpuscale.bench.cores import usable_cores
from gpuscale.bench.runner import SweepConfig, local_devices
from gpuscale.cli import app


@pytest.fixture
def one_of_four(monkeypatch: pytest.MonkeyPatch) -> None:
    """A host of 4 cores whose affinity allows this process 1 (``taskset -c 0``)."""
    torch = pytest.importorskip("torch")
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    monkeypatch.setattr(os, "cpu_count", lambda: 4)
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0}, raising=False)


def test_the_default_threads_and_processes_are_the_allowed_cores(one_of_four) -> None:
    assert usable_cores() == 1
    assert BenchConfig(backend="gloo").resolved_threads(1) == 1  # not the host's 4
    assert local_devices() == 1  # the default --nproc on CPU: 1, not 2


def test_processes_and_threads_past_the_allowed_cores_are_refused(
    one_of_four, tmp_path: Path
) -> None:
    out = tmp_path / "r.jsonl"
    with pytest.raises(ValueError, match="--nproc 2 runs 2 processes on the 1 core") as said:
        SweepConfig(models=("mlp-0.2m",), nproc=(1, 2), out=out)
    assert "the host has 4" in str(said.value) and "give at most 1" in str(said.value)
    with pytest.raises(ValueError, match="runs 2 compute threads on the 1 core"):
        SweepConfig(models=("mlp-0.2m",), nproc=(1,), out=out, bench=BenchConfig(threads=2))
    args = ["bench", "--backend", "gloo", "--nproc", "1,2", "--out", str(out)]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 2 and "1 core this process may run on" in result.output
    assert "Traceback" not in result.output and not out.exists()


def test_every_core_allowed_is_said_as_the_hosts(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(os, "cpu_count", lambda: 2)
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1}, raising=False)
    with pytest.raises(ValueError, match="on this host's 2 cores: they would share"):
        SweepConfig(
            models=("mlp-0.2m",), nproc=(1,), out=Path("r.jsonl"), bench=BenchConfig(threads=4)
        )

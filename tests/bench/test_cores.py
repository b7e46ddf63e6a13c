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


STAT = """cpu  {t0} 0 {s0} {i0} 0 0 0 0 0 0
cpu0 {a0} 0 0 {b0} 0 0 0 0 0 0
cpu1 {a1} 0 0 {b1} 0 0 0 0 0 0
intr 12345 0 0
"""


def _stat(folder: Path, name: str, other_job: float, ranks: float, idle: float) -> Path:
    """A /proc/stat in ticks: cpu0 runs another job, cpu1 the ranks (then idles)."""
    path = folder / name
    fields = {"a0": other_job, "b0": 0, "a1": ranks, "b1": idle}
    total = {"t0": other_job + ranks, "s0": 0, "i0": idle}
    path.write_text(STAT.format(**fields, **total))
    return path


def test_the_busy_share_is_read_on_the_cores_the_ranks_may_run_on(tmp_path: Path) -> None:
    """A shared node: another job keeps cpu0 busy the whole phase, the ranks (allowed
    cpu1 only) use 80 of cpu1's 100 ticks. On the whole host other work is 100 of 200
    ticks, 50%, flagging the run busy; on the ranks' own core it is none."""
    from dataclasses import replace

    from gpuscale.bench.telemetry import HostSample, host_busy

    hz = os.sysconf("SC_CLK_TCK")
    start = _stat(tmp_path, "start", other_job=0, ranks=0, idle=0)
    end = _stat(tmp_path, "end", other_job=100, ranks=80, idle=20)
    own = 80 / hz  # the ranks' CPU time over the phase, as os.times gives it

    def share(cpus: frozenset[int]) -> float:
        first = replace(HostSample.now(start, cpus), own_s=0.0)
        last = replace(HostSample.now(end, cpus), own_s=own)
        assert last.total_s - first.total_s == pytest.approx((100 if cpus else 200) / hz)
        return host_busy([first], [last], ["node01"])["other_load_share"]

    assert share(frozenset({1})) == pytest.approx(0.0)  # the job's core: nothing else ran
    assert share(frozenset()) == pytest.approx(0.5)  # the whole host: the other job's core


def test_a_row_records_the_cores_the_affinity_allowed(one_of_four) -> None:
    import torch

    from gpuscale.bench.telemetry import machine_environment

    assert machine_environment(torch.device("cpu"))["cpu_count"] == 1  # not the host's 4


def test_a_row_names_the_slurm_job_and_nodes_that_ran_it(monkeypatch) -> None:
    """Under Slurm a row says its job, step and nodes (rank 0's hostname names one node);
    outside Slurm it has no such entry."""
    import torch

    from gpuscale.bench.telemetry import machine_environment

    for key in ("SLURM_JOB_ID", "SLURM_STEP_ID", "SLURM_JOB_NODELIST"):
        monkeypatch.delenv(key, raising=False)
    assert "slurm" not in machine_environment(torch.device("cpu"))
    monkeypatch.setenv("SLURM_JOB_ID", "4242")
    monkeypatch.setenv("SLURM_JOB_NODELIST", "node[01-02]")
    job = machine_environment(torch.device("cpu"))["slurm"]
    assert job == {"job_id": "4242", "job_nodelist": "node[01-02]"}

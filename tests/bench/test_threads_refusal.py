"""``gpuscale bench --threads N`` on CPU processes is refused where the processes times
their threads exceed the host's cores, as more processes than cores are (without
--oversubscribe): 64 threads on a 2-core host were run without a word, timing the
contention of the threads, not the scaling."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from typer.testing import CliRunner

from gpuscale.bench.config import BenchConfig
from gpuscale.bench.runner import SweepConfig
from gpuscale.cli import app

runner = CliRunner()


@pytest.fixture
def two_cores(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(os, "cpu_count", lambda: 2)


def sweep(tmp_path: Path, threads: int, nproc: tuple[int, ...], over: bool = False) -> SweepConfig:
    bench = BenchConfig(backend="gloo", threads=threads)
    return SweepConfig(
        models=("mlp-0.2m",), nproc=nproc, out=tmp_path / "b.jsonl", bench=bench, oversubscribe=over
    )


@pytest.mark.parametrize(
    ("threads", "nproc", "said"),
    [
        (64, (1,), "--threads 64 x 1 process runs 64 compute threads on this host's 2 cores"),
        (2, (1, 2), "--threads 2 x 2 processes runs 4 compute threads on this host's 2 cores"),
    ],
)
def test_more_threads_than_cores_are_refused(two_cores, tmp_path, threads, nproc, said) -> None:
    with pytest.raises(ValueError, match="or add --oversubscribe") as refused:
        sweep(tmp_path, threads, nproc)
    assert str(refused.value).startswith(said)
    assert f"give --threads at most {2 // max(nproc)} " in str(refused.value)


def test_threads_that_fit_or_oversubscribed_or_the_default_are_run(two_cores, tmp_path) -> None:
    assert sweep(tmp_path, 1, (1, 2)).bench.threads == 1  # 2 threads on 2 cores
    assert sweep(tmp_path, 2, (1,)).bench.threads == 2
    assert sweep(tmp_path, 64, (1,), over=True).bench.threads == 64
    assert sweep(tmp_path, 0, (1, 2)).bench.threads == 0  # the cores shared: never over


def test_the_command_refuses_it_before_running(two_cores, tmp_path) -> None:
    args = ["bench", "--backend", "gloo", "--threads", "64", "--nproc", "1"]
    result = runner.invoke(app, [*args, "--out", str(tmp_path / "b.jsonl")])
    assert result.exit_code == 2, result.output
    assert "--threads 64 x 1 process runs 64 compute threads" in result.output
    assert not (tmp_path / "b.jsonl").exists()

"""The process team that parses a round: every result, in order, even if a worker dies."""

from __future__ import annotations

import functools
import multiprocessing
import os
import time
from pathlib import Path

import pandas as pd
import pytest

from gpuscale._io.parallel import Team
from gpuscale.mlperf import ingest

from ..mlperf.test_ingest import good_round

needs_fork = pytest.mark.skipif(
    "fork" not in multiprocessing.get_all_start_methods(), reason="needs fork"
)


def _square(x: int) -> int:
    return x * x


def _die_outside(parent: int, fn, task):
    """``fn(task)``, but a child process is killed at its first task (and this one
    takes its time, so that the children do get tasks)."""
    if os.getpid() != parent:
        os._exit(3)
    time.sleep(0.005)
    return fn(task)


@pytest.mark.parametrize("workers", [1, 2, 3, 8])
@pytest.mark.parametrize("n", [0, 1, 2, 57])
def test_results_in_task_order(workers: int, n: int) -> None:
    seen: list[tuple[int, int]] = []
    team = Team(_square, list(range(n)), workers)
    assert team.results(lambda done, total: seen.append((done, total))) == [i * i for i in range(n)]
    assert team.notes == []
    if n:
        assert seen[-1] == (n, n) and all(d <= t == n for d, t in seen)


@needs_fork
def test_a_dead_worker_loses_nothing() -> None:
    fn = functools.partial(_die_outside, os.getpid(), _square)
    team = Team(fn, list(range(40)), 3)
    assert team.results() == [i * i for i in range(40)]
    assert len(team.notes) == 1
    assert "2 worker process(es) died (exit code 3, 3)" in team.notes[0]


@needs_fork
def test_a_round_read_with_a_dying_worker_is_whole(tmp_path: Path, monkeypatch) -> None:
    root = good_round().write_dir(tmp_path)
    reference = ingest.read_round(root, workers=1)
    monkeypatch.setattr(
        ingest, "parse_task", functools.partial(_die_outside, os.getpid(), ingest.parse_task)
    )
    tables = ingest.read_round(root, workers=2)
    for name in ("systems", "runs", "scores"):
        pd.testing.assert_frame_equal(getattr(tables, name), getattr(reference, name))
    worker = tables.problems[tables.problems.kind == "worker"]
    assert len(worker) == 1 and "died" in worker.iloc[0]["message"]


def _slow_square(x: int) -> int:
    time.sleep(0.01)
    return x * x


def test_leaving_the_block_early_stops_the_children() -> None:
    before = set(multiprocessing.active_children())
    with pytest.raises(RuntimeError), Team(_slow_square, list(range(500)), 3):
        assert len(set(multiprocessing.active_children()) - before) == 2
        raise RuntimeError("the caller failed before gathering")
    assert set(multiprocessing.active_children()) - before == set()

"""``bench --resume`` says what it does with the runs the file holds: before the sweep
how many it keeps, measures again (flagged or failed, and why) and misses, and on the
progress line of a run measured again why (not ``started mlp-0.2m x1`` alone, for a run
the file held flagged "noisy synchronised steps")."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpuscale.bench import runner
from gpuscale.bench.config import BenchConfig
from gpuscale.bench.results import done_keys, resume_file
from gpuscale.bench.results_file import append_result
from gpuscale.bench.runner import SweepConfig, run_sweep
from gpuscale.plausibility import NOISY_MIN_STEPS, FlagKind

from ..builders import bench_record

NOISY = ["noisy synchronised steps: p95 8 ms is 1.7x the median (> 1.5x); run more --steps"]
BUSY = ["machine busy: other processes used 60% of its CPU time during the timed steps"]
# timed over NOISY_MIN_STEPS: a noisy flag stored on fewer is judged again when read
BENCH = BenchConfig(backend="gloo", steps=NOISY_MIN_STEPS, batch=8)
THREADS = BENCH.resolved_threads(2)


def _row(model: str, world: int, **extra) -> dict:
    return bench_record(model, 10, world, 100.0 * world, config=BENCH, threads=THREADS, **extra)


def _file(tmp_path: Path) -> tuple[Path, list[dict]]:
    """mlp-0.2m x1 flagged noisy, x2 clean (read against it); mlp-1m x1 clean, x2 timed
    out; nothing of cnn-0.3m."""
    path = tmp_path / "r.jsonl"
    rows = [
        {**_row("mlp-0.2m", 1), "flags": NOISY},
        _row("mlp-0.2m", 2),
        {**_row("mlp-1m", 1), "flags": []},
        _row("mlp-1m", 2, status="timeout"),
    ]
    for row in rows:
        append_result(path, row)
    return path, rows


def test_the_resume_plan_says_why_each_run_is_measured_again(tmp_path: Path) -> None:
    path, rows = _file(tmp_path)
    kept, again, _ = resume_file(path)
    assert kept == done_keys(path) == {rows[2]["key"]}
    # flagged: its own flag's kind, or its N = 1 run's flag
    assert again[rows[0]["key"]] == ("flagged", (FlagKind.NOISY_SYNC,))
    assert again[rows[1]["key"]] == ("flagged", (FlagKind.BASELINE,))
    assert again[rows[3]["key"]] == ("failed", (rows[3]["status"],))


def test_a_resumed_sweep_says_what_it_keeps_and_why_it_measures_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path, rows = _file(tmp_path)
    lines: list[str] = []
    started: list[str] = []

    def launch(self, per_node: int, todo: list[str]) -> list[str]:
        for key in [r["key"] for r in rows if r["config"]["accelerators"] == per_node]:
            if key not in self.skip:
                self._on_event(per_node)("started", key, "")
                started.append(key)
        return []

    monkeypatch.setattr(runner._Launch, "run", launch)
    models = ("mlp-0.2m", "mlp-1m", "cnn-0.3m")
    cfg = SweepConfig(models=models, nproc=(1, 2), out=path, bench=BENCH, resume=True)
    run_sweep(cfg, {m: 10 for m in models}, on_event=lines.append)
    plan = lines[0]
    kept, again, weak = resume_file(path)
    flagged = [k for k, (kind, _) in again.items() if kind == "flagged"]
    failed = [k for k, (kind, _) in again.items() if kind == "failed"]
    planned = len(models) * len(cfg.nproc)
    assert plan.startswith("--resume: ")
    assert f"{len(kept)} run kept" in plan
    # kept runs that are weak evidence are said as such, not as measured well
    assert "measured well" not in plan
    assert (f"{len(weak)} of them weak evidence" in plan) == bool(weak)
    assert f"{len(flagged)} flagged runs measured again" in plan
    assert f"{len(failed)} failed run measured again ({rows[3]['status']})" in plan
    assert f"{planned - len(kept) - len(again)} missing" in plan
    assert "noisy synchronised steps" in plan
    # each run measured again says why on its progress line
    said = [line for line in lines if line.startswith("started ")]
    assert len(said) == len(started) == len(again)
    for line, key in zip(said, started, strict=True):
        kind, why = again[key]
        assert f"(again: {kind}" in line and all(w in line for w in why)


def test_a_kept_run_of_few_steps_is_said_weak_not_measured_well(tmp_path: Path) -> None:
    """2-step runs the summary and the advice call weak evidence are kept by ``--resume``
    (ok, unflagged) and said weak, not "2 runs kept (measured well)"."""
    from gpuscale.bench.resume_said import resume_sentence

    path = tmp_path / "r.jsonl"
    short = BenchConfig(backend="gloo", steps=2, batch=8)
    rows = [
        bench_record("mlp-0.2m", 10, n, 100.0 * n, config=short, threads=THREADS) for n in (1, 2)
    ]
    for row in rows:
        append_result(path, row)
    kept, again, weak = resume_file(path)
    assert kept == {r["key"] for r in rows} and not again
    assert set(weak) == kept and all("few steps timed" in w for w in weak.values())
    said = resume_sentence([r["key"] for r in rows], kept, again, weak)
    assert said.startswith("--resume: 2 runs kept (ok and unflagged; 2 of them weak evidence")

"""The summary ``gpuscale bench`` prints when it ends is this sweep's: a results file that
already holds earlier sweeps (the README's bench line, then docs/measure.md's into the same
file) has its earlier rows counted in one line, never listed as this run's errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from gpuscale.bench import models, runner
from gpuscale.bench.runner import SweepReport
from gpuscale.cli import app
from tests.builders import bench_record, write_jsonl

EARLIER_ERROR = "cannot import 'nosuch' for 'nosuch:thing'"


def _earlier_sweep(path: Path) -> None:
    busy = ["machine busy: other processes used 69% of its CPU time during the timed steps"]
    write_jsonl(
        path,
        [
            {**bench_record("mlp-0.2m", 199_946, 1, 200.0, sweep_id="old"), "flags": busy},
            bench_record("nosuch:thing", 0, 1, 0.0, status="error", error=EARLIER_ERROR),
        ],
        extra_lines=('{"schema": "gpuscale.bench/2", "cut sh',),
    )


def _fake_sweep(cfg, sizes, *, on_event=None, broken=None) -> SweepReport:
    """What a sweep of mlp-0.2m on 1 and 2 processes appends, without torchrun."""
    with cfg.out.open("a") as rows:
        for n, rate in ((1, 400.0), (2, 700.0)):
            rows.write(
                json.dumps(bench_record("mlp-0.2m", 199_946, n, rate, sweep_id="new")) + "\n"
            )
    report = SweepReport(appended=2, measured=2)
    report.sweep_id = "new"
    return report


@pytest.fixture
def bench_twice(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[str, Path]:
    out = tmp_path / "results.jsonl"
    _earlier_sweep(out)
    monkeypatch.setattr(runner, "run_sweep", _fake_sweep)
    monkeypatch.setattr(models, "sort_models", lambda names, *a, **k: ([("mlp-0.2m", 199_946)], []))
    args = ["bench", "--backend", "gloo", "--nproc", "1,2", "--models", "mlp-0.2m"]
    result = CliRunner().invoke(app, [*args, "--out", str(out)])
    assert result.exit_code == 0, result.output
    return result.output, out


def test_the_summary_lists_this_sweeps_rows_only(bench_twice: tuple[str, Path]) -> None:
    said, _ = bench_twice
    assert "mlp-0.2m" in said  # this sweep's runs are shown
    assert EARLIER_ERROR not in said  # an earlier sweep's error is not this run's
    assert "69%" not in said  # nor an earlier sweep's flag
    assert "nosuch" not in said
    assert "this sweep's results" in said


def test_earlier_rows_and_lines_are_counted_and_said_as_earlier(
    bench_twice: tuple[str, Path],
) -> None:
    said, out = bench_twice
    text = " ".join(said.split())
    # the flagged run measured (ok): counted among the ok ones, never as a third status
    assert "also holds 2 rows of earlier sweeps (1 ok, 1 of them flagged; 1 failed)" in text
    assert f"`gpuscale analyze --bench {out}` reads them all" in text
    assert "1 unreadable line in" in text and "written before this sweep" in text


def test_a_broken_model_row_carries_the_sweep_id(tmp_path: Path) -> None:
    """Rows of models that could not be built belong to the sweep that tried them."""
    pytest.importorskip("torch")
    from gpuscale.bench.config import BenchConfig
    from gpuscale.bench.results import read_results

    out = tmp_path / "r.jsonl"
    cfg = runner.SweepConfig(models=(), nproc=(1,), out=out, bench=BenchConfig(backend="gloo"))
    report = runner.run_sweep(cfg, {}, broken={"nosuch:thing": "cannot import 'nosuch'"})
    records, _ = read_results(out)
    assert report.sweep_id and [r["sweep_id"] for r in records] == [report.sweep_id]

"""Bench evidence graded: a row says how strong it is (steps timed, spread, a busy share
read over a long enough phase), and the summary never states a result from rows it left
out."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from gpuscale.analysis.bench_scaling import bench_scaling
from gpuscale.analysis.bench_sentences import break_even_sentence
from gpuscale.bench.config import BenchConfig
from gpuscale.bench.evidence import MIN_BUSY_WINDOW_S, steps_asked, timed_window_s
from gpuscale.bench.results import bench_table
from gpuscale.bench.results_file import append_result
from gpuscale.cli import app

from ..builders import bench_record
from ..golden import Golden

VIEW = "bench/evidence_notes"

BUSY = ["machine busy: other processes used 60% of its CPU time during the timed steps"]


def _pair(
    steps: int, flags: list[str] | None = None, step_ms: float = 3.5, repeat: int = 1
) -> list[dict]:
    cfg = BenchConfig(steps=steps, batch=8, repeat=repeat)
    return [
        bench_record("mlp-1m", 1_000_000, n, rate, config=cfg, flags=flags or [], forward_ms=f)
        for n, rate, f in ((1, 1000.0, step_ms / 3.5), (2, 1500.0, step_ms / 3.5))
    ]


def test_a_two_step_row_is_weak_and_says_why(golden: Golden) -> None:
    table = bench_table(_pair(steps=2))
    assert set(table["evidence"]) == {"weak"}
    notes = table["evidence_notes"].iloc[1]
    assert "2 steps timed" in notes and "busy share" in notes  # both reasons
    golden.check(VIEW, "two steps timed", notes)


def test_a_repeated_row_counts_the_runs_and_steps_its_repeats_ran(golden: Golden) -> None:
    """``--repeat 2`` of 2 steps: its note said "timed it over 2 steps in 1 run" where two
    runs of 2 steps ran; the steps asked, read at the same time per step, stay."""
    once, twice = bench_table(_pair(steps=2)), bench_table(_pair(steps=2, repeat=2))
    assert steps_asked(twice.to_dict("records"))[0] == steps_asked(once.to_dict("records"))[0]
    golden.check(VIEW, "two steps timed, twice", twice["evidence_notes"].iloc[1])


def test_a_long_enough_run_is_strong() -> None:
    # 100 steps of ~70 ms synced + no-sync: 14 s timed, well over the busy share's window
    table = bench_table(_pair(steps=100, step_ms=70.0))
    assert timed_window_s(table.iloc[1].to_dict()) > MIN_BUSY_WINDOW_S
    assert list(table["evidence"]) == ["strong", "strong"]
    assert list(table["evidence_notes"]) == ["", ""]


def test_failed_rows_are_not_graded() -> None:
    table = bench_table([bench_record("mlp-1m", 1_000_000, 2, 0.0, status="oom")])
    assert table["evidence"].tolist() == [""]


def test_break_even_is_not_stated_from_excluded_rows() -> None:
    scaling = bench_scaling(bench_table(_pair(steps=100, flags=BUSY, step_ms=70.0)))
    said = break_even_sentence(scaling, 2)
    assert "not crossed" not in said and "no trusted run" in said


def test_the_cli_says_weak_rows_no_trusted_break_even_and_the_cpu_baseline(
    tmp_path: Path, golden: Golden
) -> None:
    path = tmp_path / "results.jsonl"
    for record in _pair(steps=2, flags=BUSY):
        append_result(path, record)
    output = CliRunner().invoke(app, ["analyze", "--bench", str(path)]).output
    first = output.splitlines()[0]
    assert first.startswith("break-even") and "not stated" in first and "not crossed" not in first
    golden.check(VIEW, "analyze --bench: every run flagged, the first line", first)
    (baseline,) = [line for line in output.splitlines() if line.startswith("CPU baseline")]
    assert "1 thread" in baseline  # what the N = 1 run was
    good = tmp_path / "two-steps.jsonl"
    for record in _pair(steps=2):
        append_result(good, record)
    said = " ".join(CliRunner().invoke(app, ["analyze", "--bench", str(good)]).output.split())
    assert "weak evidence: both runs" in said  # the answer counts them: both of the 2
    asked = ["analyze", "--bench", str(good), "--explain"]
    said = " ".join(CliRunner().invoke(app, asked).output.split())
    notes = bench_table(_pair(steps=2))["evidence_notes"]
    label = "mlp-1m on 2"
    assert f"{label}: {notes.iloc[1]}" in said and "weak evidence" in said  # --explain: why


@pytest.mark.parametrize("steps", [2, 9])
def test_few_steps_are_weak_whatever_the_window(steps: int) -> None:
    table = bench_table(_pair(steps=steps, step_ms=5000.0))
    assert all("steps timed" in n for n in table["evidence_notes"])


def test_the_notes_of_a_model_run_twice_say_which_run() -> None:
    """README's bench then docs/measure.md's into one file: each weak run is listed once,
    with the "(run 2)" the table shows, never "weak evidence mlp-1m on 2" twice."""
    from gpuscale.analysis.bench_sentences import bench_notes

    rows = [{**r, "sweep_id": sweep} for sweep in ("s1", "s2") for r in _pair(steps=2)]
    scaling = bench_scaling(bench_table(rows))
    notes = bench_notes(scaling, scaling.iloc[:0])
    weak = [line.split(":")[0] for line in notes if line.startswith("weak evidence")]
    labels = [f"mlp-1m (run {k}) on {n}" for k in (1, 2) for n in (1, 2)]
    assert sorted(weak) == [f"weak evidence {label}" for label in labels], notes


def test_a_sweep_that_measured_nothing_new_says_so_not_that_nothing_ran(golden: Golden) -> None:
    """`bench --resume` with every run done is not said like a failure ("no successful
    bench run in this sweep to analyse")."""
    from gpuscale.analysis.bench_view import bench_view

    view = bench_view(bench_table(_pair(steps=100, step_ms=70.0)), sweep="new", skipped=2)
    assert "2 runs --resume" in view.empty  # the runs kept, counted
    golden.check(VIEW, "a resumed sweep that measured nothing new", view.empty)


def test_a_sweep_without_resume_that_measured_nothing_says_no_word_of_resume(
    golden: Golden,
) -> None:
    """A model recorded as oom, no --resume given: the sentence says what happened, not
    "this sweep measured no new run (runs --resume skips ...)"."""
    from gpuscale.analysis.bench_view import bench_view

    rows = [{**r, "status": "oom", "sweep_id": "new"} for r in _pair(steps=100, step_ms=70.0)]
    view = bench_view(bench_table(rows), sweep="new")
    assert "--resume" not in view.empty and "failed" in view.empty
    golden.check(VIEW, "a sweep whose every run failed", view.empty)
    assert any("oom" in line for line in view.said)

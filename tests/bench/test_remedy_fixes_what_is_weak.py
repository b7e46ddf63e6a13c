"""What a weak run's remedy asks for is what fixes its weakness (never, to runs of 520
steps whose steps spread, "bench with --steps 360 or more": fewer than they ran, and more
steps measure a spread, they do not narrow it). From a table of rows: a
spread alone asks for no --steps and says a quieter machine; rows weak for their steps
are asked for more steps than they ran; every message built on ``Support`` says it."""

from __future__ import annotations

import re

import pandas as pd
import pytest

from gpuscale.advice.explain.phrasebook import said as in_words
from gpuscale.advice.remeasure import weak_runs
from gpuscale.bench.evidence import MIN_STEPS, SPREAD_P95_OVER_P50, grade
from gpuscale.bench.support import support
from gpuscale.plausibility import MIN_BUSY_WINDOW_S, NOISY_MIN_STEPS


def _row(n: int, steps: int, step_ms: float, p95_over_p50: float) -> dict:
    """An ``ok`` row of one model at ``n`` devices: ``steps`` timed of ``step_ms`` each
    (synchronised and no-sync), p95 ``p95_over_p50`` x the median, a busy share read."""
    return {
        "model": "m",
        "status": "ok",
        "accelerators": n,
        "steps": steps,
        "step_ms_mean": step_ms,
        "nosync_step_ms_mean": step_ms,
        "step_ms_p50": step_ms,
        "step_ms_p95": step_ms * p95_over_p50,
        "other_load_share": 0.01,
    }


def _graded(rows: list[dict]) -> pd.DataFrame:
    table = pd.DataFrame(rows)
    table["evidence"], table["evidence_notes"], table["evidence_kinds"] = grade(rows)
    return table


def _asked(text: str) -> list[int]:
    return [int(n) for n in re.findall(r"--steps (\d+)", text)]


def test_a_spread_alone_asks_for_no_steps_and_says_what_narrows_it() -> None:
    # 520 steps of 5 ms: a 2.6 s timed phase x 2 kinds, over the busy-share check's window
    rows = [_row(n, 520, 5.0, 5.76) for n in (1, 2)]
    assert MIN_BUSY_WINDOW_S <= 520 * 2 * 5.0 / 1e3 and SPREAD_P95_OVER_P50 < 5.76
    table = _graded(rows)
    assert (table["evidence"] == "weak").all()
    found = support(table)
    said = " ".join([found.remedy(), *table["evidence_notes"]])
    assert _asked(said) == []
    assert "quieter machine" in found.remedy()


@pytest.mark.parametrize(
    ("steps", "step_ms"),
    [(5, 5.0), (MIN_STEPS - 1, 200.0), (40, 1.0), (300, 1.0), (520, 0.5)],
    ids=["few-steps", "few-slow-steps", "short-window", "short-window-300", "short-window-520"],
)
def test_steps_asked_are_more_than_the_runs_timed(steps: int, step_ms: float) -> None:
    rows = [_row(1, steps, step_ms, 1.05), _row(2, steps, step_ms, 3.0)]
    table = _graded(rows)
    found = support(table)
    asked = _asked(found.remedy()) + _asked(" ".join(table["evidence_notes"]))
    assert asked, found.remedy()
    assert all(n > steps for n in asked)
    # the N = 2 run spread too: over fewer than NOISY_MIN_STEPS one slow step may set its
    # p95, so more steps (asked already) are its fix; over more, a quieter machine
    assert ("quieter machine" in found.remedy()) is (steps >= NOISY_MIN_STEPS)


def test_steps_asked_are_never_fewer_than_a_run_of_the_model_timed() -> None:
    """520 steps at N = 1 that spread, 5 at N = 2: the N = 2 run needs more steps, and
    the number asked is not below the 520 the N = 1 run already timed."""
    table = _graded([_row(1, 520, 5.0, 5.76), _row(2, 5, 5.0, 1.05)])
    found = support(table)
    asked = _asked(found.remedy()) + _asked(" ".join(table["evidence_notes"]))
    assert asked and all(n >= 520 for n in asked)


def test_the_advice_warning_asks_no_steps_of_runs_whose_steps_spread() -> None:
    rows = [_row(n, 520, 5.0, 5.76) for n in (1, 2)]
    for row in rows:
        row["samples_per_s"] = 1000.0 * row["accelerators"] * 0.9 ** (row["accelerators"] - 1)
    table = _graded(rows)
    found, _ = weak_runs(table.assign(flagged=False), "m")
    assert found is not None
    warning, in_full = in_words(found), in_words(found.with_values(full=True))
    for said in (warning, in_full):  # the default view's line and --explain's
        assert said and "steps spread" in said
        assert _asked(said) == [] and "quieter machine" in said

"""A run timed over too few steps for its p95 to measure a spread (one slow step sets it)
is weak evidence (few steps, a spread over few steps), not flagged noisy: the flag's remedy
(a quieter machine, "a spread more steps do not narrow") and the advice's refusal of
flagged runs would send a user away from the fix, more steps. A noisy flag a file stored
on such a run (written before the rule) is judged again when read."""

from __future__ import annotations

import numpy as np
import pytest

from gpuscale.bench.config import BenchConfig
from gpuscale.bench.evidence import QUIETER_FIX, STEPS_FIX, fixes, steps_needed
from gpuscale.bench.table import bench_table
from gpuscale.plausibility import NOISY_MIN_STEPS, FlagKind, kind_of, run_flags
from tests.builders import bench_record

ONE_SLOW = {"step_ms_p50": 0.74, "step_ms_p95": 7.48}  # `--steps 5 --warmup 1` on CPU


def test_numpy_p95_is_set_by_one_slow_step_below_the_threshold_only() -> None:
    """The threshold is where one slow step among ``n`` stops moving numpy's p95."""
    for n in range(2, 60):
        times = np.ones(n)
        times[-1] = 100.0
        assert (np.percentile(times, 95) > 1.0) == (n < NOISY_MIN_STEPS), n


@pytest.mark.parametrize(
    ("steps", "noisy"), [(5, False), (20, False), (NOISY_MIN_STEPS, True), (None, True)]
)
def test_noisy_flag_needs_the_steps_to_measure_a_spread(steps: int | None, noisy: bool) -> None:
    kinds = [kind_of(f) for f in run_flags(ONE_SLOW, None, steps=steps)]
    assert (FlagKind.NOISY_SYNC in kinds) is noisy


def test_a_short_run_with_one_slow_step_is_weak_not_flagged() -> None:
    record = bench_record("m", 1_000, 1, 100.0, config=BenchConfig(steps=5, batch=8))
    record["timing"].update(step_ms_p95=35.0, nosync_step_ms_p95=35.0)
    row = bench_table([record]).iloc[0]
    assert not row["flagged"]
    assert row["evidence"] == "weak"
    assert {"few_steps", "few_steps_spread"} <= set(row["evidence_kinds"])
    assert "spread" not in row["evidence_kinds"]
    # the same spread over enough steps is the noise it flags
    long = bench_record("m", 1_000, 1, 100.0, config=BenchConfig(steps=NOISY_MIN_STEPS, batch=8))
    long["timing"].update(step_ms_p95=35.0, nosync_step_ms_p95=35.0)
    flagged = bench_table([long]).iloc[0]
    assert flagged["flagged"]
    assert FlagKind.NOISY_SYNC in flagged["flag_kinds"]


def _spread(steps: int, ratio: float, flags: list[str] | None = None) -> dict:
    """A record timed over ``steps`` whose synchronised p95 is ``ratio`` x its median."""
    record = bench_record("m", 1_000, 1, 100.0, config=BenchConfig(steps=steps, batch=8))
    p50 = record["timing"]["step_ms_p50"]
    record["timing"].update(step_ms_p95=ratio * p50)
    record["flags"] = flags or []
    return record


@pytest.mark.parametrize(
    ("steps", "kind", "fix"),
    [
        (12, "few_steps_spread", STEPS_FIX),
        (NOISY_MIN_STEPS - 1, "few_steps_spread", STEPS_FIX),
        (NOISY_MIN_STEPS, "spread", QUIETER_FIX),
        (40, "spread", QUIETER_FIX),
    ],
)
def test_a_spread_over_few_steps_asks_for_steps_not_a_quieter_machine(
    steps: int, kind: str, fix: str
) -> None:
    """p95 1.4x the median (a spread short of the noisy flag): over fewer than
    NOISY_MIN_STEPS steps the few-steps kind, fixed by more steps (at least the threshold);
    over more, a spread, fixed on a quieter machine."""
    row = bench_table([_spread(steps, 1.4)]).iloc[0]
    spread_kinds = {k for k in row["evidence_kinds"] if "spread" in k}
    assert spread_kinds == {kind}
    assert fix in fixes([[kind]])
    assert steps_needed([row.to_dict()]) >= NOISY_MIN_STEPS
    notes = row["evidence_notes"]  # the spread's, and a short timed phase's (more steps)
    assert ("quieter machine" in notes) is (fix == QUIETER_FIX)
    if fix == STEPS_FIX:
        assert f"{steps} timed steps" in notes and f"under {NOISY_MIN_STEPS}" in notes


NOISY_STORED = (
    "noisy synchronised steps: p95 11.2 ms is 2.0x the median (> 1.5x), a spread more steps "
    "do not narrow: run on a quieter machine, nothing else running"
)


@pytest.mark.parametrize(("steps", "flagged"), [(12, False), (NOISY_MIN_STEPS, True)])
def test_a_stored_noisy_flag_is_judged_by_the_current_rule(steps: int, flagged: bool) -> None:
    """A file written before the rule holds a noisy flag on 12 steps: read, it is taken
    back (the run weak, a spread over few steps); on 21 steps it stands."""
    row = bench_table([_spread(steps, 2.0, [NOISY_STORED])]).iloc[0]
    assert bool(row["flagged"]) is flagged
    assert (FlagKind.NOISY_SYNC in row["flag_kinds"]) is flagged
    if not flagged:
        assert row["evidence"] == "weak"
        assert "few_steps_spread" in row["evidence_kinds"]

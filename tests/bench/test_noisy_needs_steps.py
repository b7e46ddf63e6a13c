"""A run timed over too few steps for its p95 to measure a spread (one slow step sets it)
is weak evidence (few steps, spread), not flagged noisy: the flag's remedy (a quieter
machine, "a spread more steps do not narrow") and the advice's refusal of flagged runs
would send a user away from the fix, more steps."""

from __future__ import annotations

import numpy as np
import pytest

from gpuscale.bench.config import BenchConfig
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
    assert {"few_steps", "spread"} <= set(row["evidence_kinds"])
    # the same spread over enough steps is the noise it flags
    long = bench_record("m", 1_000, 1, 100.0, config=BenchConfig(steps=NOISY_MIN_STEPS, batch=8))
    long["timing"].update(step_ms_p95=35.0, nosync_step_ms_p95=35.0)
    flagged = bench_table([long]).iloc[0]
    assert flagged["flagged"]
    assert FlagKind.NOISY_SYNC in flagged["flag_kinds"]

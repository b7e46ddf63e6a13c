"""A flag's numbers agree with the rule it states."""

from __future__ import annotations

import re

from hypothesis import given
from hypothesis import strategies as st

from gpuscale.plausibility import NOISY_P95_OVER_P50, run_flags


@given(p50=st.floats(0.1, 1e4), excess=st.floats(1e-4, 10.0))
def test_a_noisy_flag_shows_its_ratio_above_the_threshold(p50: float, excess: float) -> None:
    """The ratio shown is above the threshold shown (never "p95 163 ms is 1.5x the median
    (> 1.5x)", a ratio of 1.52 printed with one decimal)."""
    p95 = p50 * NOISY_P95_OVER_P50 * (1 + excess)
    flags = run_flags({"step_ms_p50": p50, "step_ms_p95": p95}, None)
    shown = re.search(r"is ([0-9.]+)x the median \(> ([0-9.]+)x\)", flags[0])
    assert shown is not None, flags
    assert float(shown.group(1)) > float(shown.group(2))


def test_repeats_that_disagree_flag_the_run_and_close_ones_do_not() -> None:
    """`--repeat 2` giving 185 and 2,046 samples/s (spread 1.67 of their median) is flagged."""
    from gpuscale.bench.summary import median_run

    def run(rate: float) -> dict:
        return {"timing": {"samples_per_s": rate}}

    far = median_run([run(185.0), run(2046.0)])["timing"]
    said = [f for f in run_flags(far, None) if f.startswith("repeats disagree")]
    assert len(said) == 1 and "185" in said[0] and "2,046" in said[0], said
    near = median_run([run(1000.0), run(1100.0), run(1050.0)])["timing"]
    assert not [f for f in run_flags(near, None) if f.startswith("repeats disagree")]


def test_a_new_flag_is_one_reason_where_flags_are_joined() -> None:
    """A row's flags are "; "-joined in the bench table and split back there: a flag
    holding "; " would read as two reasons, the second a kind of its own ("loss not finite
    (1 run(s), e.g. loss not finite: ...)" beside a stray kind)."""
    from gpuscale.bench.summary import median_run
    from gpuscale.plausibility import loss_flags

    def run(rate: float) -> dict:
        return {"timing": {"samples_per_s": rate}}

    spread = median_run([run(185.0), run(2046.0)])["timing"]
    flags = [*loss_flags(float("nan")), *run_flags(spread, None)]
    assert len(flags) == 2 and not [f for f in flags if "; " in f], flags

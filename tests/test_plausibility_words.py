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


def _every_flag() -> list[str]:
    """One reason of every kind the bench table's ``flags`` column holds, each raised by
    the function that writes it (inputs past each rule's threshold)."""
    from gpuscale.analysis.bench_scaling import NO_BASELINE
    from gpuscale.plausibility import (
        SAME_SAMPLES,
        CpuUse,
        loss_flags,
        peak_flags,
        samples_flags,
        superlinear_flag,
    )

    timing = {
        "step_ms_p50": 2.0,
        "step_ms_p95": 9.0,
        "nosync_step_ms_p50": 2.0,
        "nosync_step_ms_p95": 9.0,
        "repeat_spread": 0.9,
        "repeat_samples_per_s": [185.0, 2046.0],
        "step_ms_mean": 2.0,
        "sync_overhead_ms": -1.0,
    }
    host = {"other_load_share": 0.6, "steal_share": 0.3}
    said = run_flags(timing, host, warmup=0, cpu=CpuUse(threads=8, ranks=2, cores=8), steps=100)
    said += loss_flags(float("nan"))
    said += samples_flags({"samples_drawn": 16, "samples_distinct": 1})
    said += peak_flags(2000.0, 990.0)
    said += [superlinear_flag(1.5, 2) or "", superlinear_flag(1.5, 1) or "", NO_BASELINE]
    return [SAME_SAMPLES, *said]


def test_every_flag_is_one_reason_of_a_known_kind_where_flags_are_joined() -> None:
    """Joined with "; " as a row's flags are and read back, each flag is one reason whose
    kind is a FlagKind: a flag holding "; " would split into a stray kind of its own (the
    samples flag's "give it more samples, or a smaller --batch" was read as one, named
    among an N = 1 run's kinds and counted as a flag)."""
    from gpuscale.plausibility import FlagKind, flag_kinds, flag_reasons, kind_of

    flags = _every_flag()
    kinds = [kind_of(f) for f in flags]
    assert len(flags) == 14 and all(flags), flags
    assert set(kinds) - {k.value for k in FlagKind} == set(), kinds
    assert flag_reasons("; ".join(flags)) == flags
    assert flag_kinds("; ".join(flags)) == tuple(dict.fromkeys(kinds))

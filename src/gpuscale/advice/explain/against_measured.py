"""Measured speedups beside the predictions: one sentence for each count the bench measured
in a configuration the advice predicts (``measured_runs.MeasuredCount``, the one record
every view reads), its runs against the predicted speedup and its interval; and each
count measured outside that interval (``Disagreement``), said first."""

from __future__ import annotations

from collections.abc import Sequence

from gpuscale.advice.explain.phrasebook import sentence
from gpuscale.advice.measured_runs import TRUSTED_ALLOWED, Disagreement, MeasuredCount
from gpuscale.quantities import number
from gpuscale.tables.advice import TOO_WIDE_TO_TEST


def _spread(c: MeasuredCount) -> str:
    """``0.199`` (one run) or ``median 0.2 (spread 0.18-0.22)``, of the trusted runs."""
    values = c.of(c.trusted)
    if len(values) == 1:
        return number(values[0])
    ends = f"{number(min(values))}-{number(max(values))}"
    return f"median {number(c.measured_speedup)} (spread {ends})"


def _case(c: MeasuredCount, remedy: str) -> str:
    """Which ``measured_count`` case says ``c``: all its runs flagged, inside the interval,
    outside it from weak runs (``remedy``: what firms them), or outside it."""
    if not c.trusted:
        return "flagged"
    if c.inside:
        return "inside"
    if remedy:
        return "weak"
    return "outside"


def _span(low: float, high: float) -> str | None:
    """The interval's width as a ratio where it is too wide to test (None where not)."""
    if low > 0 and high / low <= TOO_WIDE_TO_TEST:
        return None
    if low <= 0:
        return "infinity"
    return number(high / low)


def said(c: MeasuredCount) -> str:
    """The runs at ``c`` against the prediction, inside or outside its interval; inside an
    interval too wide to test it (as ``report.bench_checks`` says), no agreement."""
    low, high = c.predicted_low, c.predicted_high
    remedy = next((m.weak_remedy for m in c.trusted if m.weak_remedy), "")
    left = c.of(c.left_out) if c.trusted else []
    return sentence(
        "measured_count",
        case=_case(c, remedy),
        devices=c.accelerators,
        runs=tuple(c.of(c.runs)),
        count=len(c.trusted or c.runs),
        where="inside" if c.inside else "outside",
        spread=_spread(c) if c.trusted else "",
        point=c.predicted_speedup,
        low=low,
        high=high,
        batch=c.batch_per_device if c.weak_scaling else None,
        span=_span(low, high),
        within=TOO_WIDE_TO_TEST,
        remedy=remedy,
        allowed=any(m.allowed for m in c.trusted),
        left=len(left) or None,
        left_runs=tuple(left),
    )


def against_measured(
    counts: Sequence[MeasuredCount], disagreeing: tuple[Disagreement, ...] = ()
) -> list[str]:
    """A sentence for each of ``counts`` but those ``disagreeing`` (said as disagreements)."""
    apart = {(d.accelerators, d.batch_per_device, d.accum) for d in disagreeing}
    return [said(c) for c in counts if (c.accelerators, c.batch_per_device, c.accum) not in apart]


def disagreement(d: Disagreement) -> str:
    """The disagreement in words, first among the caveats and the answer's lines."""
    seen, runs, predicted = d.measured, d.evidence, d.predicted
    several = len(runs.trusted_runs) > 1
    return sentence(
        "disagreement",
        n=d.accelerators,
        seen=seen.speedup,
        low=seen.speedup_low if several else None,
        high=seen.speedup_high,
        flagged=d.on_flagged_only,
        runs=len(runs.trusted_runs),
        flags="; ".join(runs.flags),
        allowed=runs.why == TRUSTED_ALLOWED,
        left=len(runs.left_out) or None,
        left_runs=tuple(runs.left_out),
        predicted=predicted.speedup,
        predicted_low=predicted.speedup_low,
        predicted_high=predicted.speedup_high,
        weak=(d.weak_scaling and d.batch_per_device) or None,
    )

"""The fixed per-step cost of a step given by numbers, beside its device's peak
(:func:`bounded`, :func:`unbounded`, :func:`flops_reading`): why a fixed cost nothing
measured is what it is: the prior narrowed by the step's work at ``MIN_MFU`` of the device's
peak (only a device with a peak in the catalogue bounds it), or the prior's alone, said."""

from __future__ import annotations

from dataclasses import dataclass

from gpuscale.advice.model.fixed_cost import GPU_PRIOR, FixedCost
from gpuscale.advice.model.hardware import MIN_MFU
from gpuscale.advice.types import Finding, FindingKind, Measure, Source
from gpuscale.hardware.peaks import Peak


def peak_label(precision: str) -> str:
    """The peak that bounds a step's work: TF32 for fp32 (PyTorch runs convolutions in
    TF32 by default), else the precision's own."""
    return "TF32" if precision == "fp32" else precision


@dataclass(frozen=True, kw_only=True, slots=True)
class AtPeak:
    """A step given by numbers beside its device's peak: ``batch`` samples of
    ``flops_per_sample`` FLOPs in ``step_ms``, the peak at ``precision`` (TFLOP/s), and
    that work at the peak (``peak_work_ms``: ``step.work_ms``, computed once by the caller
    for the fixed cost's prior)."""

    peak: Peak
    peak_tflops: float
    precision: str
    step_ms: float
    batch: int
    flops_per_sample: float
    peak_work_ms: float


def bounded(
    fixed: FixedCost, at: AtPeak, *, flops_given: bool, implied_by: str | None, measure: Measure
) -> Finding | None:
    """The finding where the device's peak raised the fixed cost above the prior's low
    end (None where it did not: the prior decides, and says so in its basis); FLOPs per
    sample not given, the two readings of the step (:func:`flops_reading`)."""
    prior, step_ms, at_peak_ms = GPU_PRIOR, at.step_ms, at.peak_work_ms
    at_most_ms = at_peak_ms / MIN_MFU
    floor_ms = step_ms - at_most_ms
    if floor_ms <= prior.low_ms or fixed.source != Source.ASSUMED:
        return None
    if not flops_given:
        return flops_reading(fixed, at, floor_ms)
    return Finding.of(
        FindingKind.FIXED_BOUNDED,
        flops_per_sample=at.flops_per_sample,
        batch=at.batch,
        step_ms=step_ms,
        at_peak_ms=at_peak_ms,
        at_most_ms=at_most_ms,
        label=peak_label(at.precision),
        device=at.peak.device,
        peak_tflops=at.peak_tflops,
        implied_by=implied_by or None,
        min_mfu=MIN_MFU,
        floor_ms=floor_ms,
        fixed_ms=fixed.ms,
        prior_ms=prior.ms,
        prior_low_ms=prior.low_ms,
        prior_high_ms=prior.high_ms,
        like_ms=max(step_ms, prior.high_ms),
        measure=str(measure),
    )


def unbounded(fixed: FixedCost, device: str | None, link: str, measure: Measure) -> Finding | None:
    """The finding where the fixed cost is the prior's because no device's peak bounded
    it: a device named without a peak (an A10G), or none named or implied (None where the
    fixed cost was measured or entered)."""
    if fixed.source != Source.ASSUMED:
        return None
    return Finding.of(
        FindingKind.FIXED_UNBOUNDED,
        device=device or None,
        link=link,
        fixed_ms=fixed.ms,
        low_ms=fixed.low_ms,
        high_ms=fixed.high_ms,
        min_mfu=MIN_MFU,
        measure=str(measure),
    )


def flops_reading(fixed: FixedCost, at: AtPeak, floor_ms: float) -> Finding:
    """The two readings of a step whose FLOPs per sample were not given and whose rate at
    6 x parameters is under ``MIN_MFU`` of the peak: a transformer's (then ``floor_ms`` of
    the step would be fixed cost) or a model doing more work per parameter (a CNN: the
    fixed cost the prior's, the rest work, ``F = share x peak x work / batch``)."""
    work_ms = at.step_ms - fixed.ms
    low, high = (share * at.peak_tflops * 1e12 * work_ms / 1e3 / at.batch for share in (0.1, 0.5))
    return Finding.of(
        FindingKind.FLOPS_TWO_READINGS,
        flops_per_sample=at.flops_per_sample,
        step_ms=at.step_ms,
        share_pct=100 * at.peak_work_ms / at.step_ms,  # the step's rate over the peak
        device=at.peak.device,
        label=peak_label(at.precision),
        peak_tflops=at.peak_tflops,
        floor_ms=floor_ms,
        fixed_ms=fixed.ms,
        low_ms=fixed.low_ms,
        high_ms=fixed.high_ms,
        work_ms=work_ms,
        flops_low=low,
        flops_high=high,
    )

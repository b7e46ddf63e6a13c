"""Why a fixed per-step cost nothing measured is what it is: bounded by the device's peak,
or the prior's alone because no peak bounded it.

From one step time (``advice/calibrate/basis.py``), the fixed cost is the prior's 1-20 ms
(``fixed_cost.GPU_PRIOR``) narrowed by the step: its per-sample work, at the FLOPs per
sample given or assumed (6 x parameters), takes at most the time it would at 1% of the
device's peak (``fixed_cost.MIN_MFU``), so the rest of the step is fixed cost. Only a
device with a peak (the device catalogue) bounds it. A walk: ``--device-name A10`` took
37.8 ms of a 40 ms step as fixed cost and ``A10G`` (no peak) the prior's 4 ms, and the
two advices differed without a word why.
"""

from __future__ import annotations

from dataclasses import dataclass

from gpuscale.advice.model.fixed_cost import GPU_PRIOR, MIN_MFU, FixedCost, Prior
from gpuscale.advice.model.step import work_ms
from gpuscale.advice.types import Measure, Source
from gpuscale.hardware.peaks import Peak
from gpuscale.quantities import format_count, format_ms, number


def peak_label(precision: str) -> str:
    """The peak that bounds a step's work: TF32 for fp32 (PyTorch runs convolutions in
    TF32 by default), else the precision's own."""
    return "TF32" if precision == "fp32" else precision


@dataclass(frozen=True, kw_only=True, slots=True)
class AtPeak:
    """A step given by numbers beside its device's peak: ``batch`` samples of
    ``flops_per_sample`` FLOPs in ``step_ms``, the peak at ``precision`` (TFLOP/s)."""

    peak: Peak
    peak_tflops: float
    precision: str
    step_ms: float
    batch: int
    flops_per_sample: float


def bounded(
    fixed: FixedCost,
    at: AtPeak,
    *,
    flops_given: bool,
    implied_by: str | None,
    measure: Measure,
    prior: Prior = GPU_PRIOR,
) -> str:
    """The sentence where the device's peak raised the fixed cost above the prior's low
    end ("" where it did not: the prior decides, and says so in its basis)."""
    peak, peak_tflops, precision = at.peak, at.peak_tflops, at.precision
    step_ms, batch, flops_per_sample = at.step_ms, at.batch, at.flops_per_sample
    at_peak_ms = work_ms(batch, flops_per_sample, peak_tflops)
    at_most_ms = at_peak_ms / MIN_MFU
    floor_ms = step_ms - at_most_ms
    if floor_ms <= prior.low_ms or fixed.source != Source.ASSUMED:
        return ""
    if not flops_given:
        return flops_reading(fixed, at, floor_ms)
    implied = (
        f"; the device the link {implied_by} implies, --device-name to name yours"
        if implied_by
        else ""
    )
    flops = (
        f"the {format_count(flops_per_sample)} FLOPs per sample given"
        if flops_given
        else "6 x parameters FLOPs per sample (assumed: a transformer's; a CNN does more)"
    )
    like = max(step_ms, prior.high_ms)
    instead = (
        "give --fixed-ms, or measure it: "
        if flops_given
        else "give --flops-per-sample (e.g. from torch.utils.flop_counter) or --fixed-ms, "
        "or measure it: "
    )
    return (
        f"Fixed cost bounded by the device's peak: at {flops}, the {batch:,} samples of "
        f"this {format_ms(step_ms)} step take {format_ms(at_peak_ms, at_most_ms)} at the "
        f"{peak_label(precision)} peak of the {peak.device} ({number(peak_tflops)} TFLOP/s"
        f"{implied}) and at "
        f"most {format_ms(at_most_ms, at_most_ms)} at {MIN_MFU:.0%} of it, so at least "
        f"{format_ms(floor_ms, like)} of the step is fixed cost, taken as "
        f"{format_ms(fixed.ms, like)} (without a peak, the prior's "
        f"{format_ms(prior.ms, like)}, range {format_ms(prior.low_ms, like)}-"
        f"{format_ms(prior.high_ms, like)}, would stand); to replace this bound, "
        f"{instead}{measure}."
    )


def unbounded(fixed: FixedCost, device: str | None, link: str, measure: Measure) -> str:
    """The sentence where the fixed cost is the prior's because no device's peak bounded
    it: a device named without a peak (an A10G), or none named or implied ("" where the
    fixed cost was measured or entered)."""
    if fixed.source != Source.ASSUMED:
        return ""
    if device:
        why = (
            f"gpuscale records no peak FLOP/s for {device!r} (the device catalogue), so no "
            "peak bound applied"
        )
    else:
        why = (
            f"no device is named (--device-name) and the link {link} implies none, so no "
            "peak bound applied"
        )
    span = f"range {format_ms(fixed.low_ms, fixed.high_ms)}-{format_ms(fixed.high_ms)}"
    return (
        f"Fixed cost not bounded by a peak: {why}; the fixed cost is the prior's "
        f"{format_ms(fixed.ms, fixed.high_ms)} ({span}), where a device with a known peak "
        f"(an A10, an L4) bounds it by the step's work at {MIN_MFU:.0%} of that peak, which "
        f"can take nearly all of a small model's step; give --fixed-ms, or measure it: "
        f"{measure}."
    )


def flops_reading(fixed: FixedCost, at: AtPeak, floor_ms: float) -> str:
    """The two readings of a step whose FLOPs per sample were not given and whose rate at
    6 x parameters is under ``MIN_MFU`` of the peak: a transformer's (then ``floor_ms`` of
    the step would be fixed cost) or a model doing more work per parameter (a CNN: the
    fixed cost the prior's, the rest work, ``F = share x peak x work / batch``)."""
    peak, peak_tflops, precision = at.peak, at.peak_tflops, at.precision
    step_ms, batch, flops_per_sample = at.step_ms, at.batch, at.flops_per_sample
    work_ms = step_ms - fixed.ms
    per_sample = [share * peak_tflops * 1e12 * work_ms / 1e3 / batch for share in (0.1, 0.5)]
    share = 100 * batch * flops_per_sample / (step_ms / 1e3) / (peak_tflops * 1e12)
    return (
        f"FLOPs per sample not given: 6 x parameters ({format_count(flops_per_sample)}, a "
        "transformer's) is a lower bound (a CNN does far more per parameter). Read as a "
        f"transformer, this {format_ms(step_ms)} step runs at {share:.2g}% of the "
        f"{peak.device}'s {peak_label(precision)} peak ({number(peak_tflops)} TFLOP/s), "
        f"leaving at least {format_ms(floor_ms, step_ms)} of it a fixed per-step cost; read "
        f"with the prior's fixed cost ({format_ms(fixed.ms, fixed.high_ms)}, "
        f"{format_ms(fixed.low_ms, fixed.high_ms)}-{format_ms(fixed.high_ms)}), its "
        f"{format_ms(work_ms, step_ms)} of work is {format_count(per_sample[0])}-"
        f"{format_count(per_sample[1])} FLOPs per sample at 10-50% of that peak. The "
        "predictions take the second reading; give --flops-per-sample (in Python: "
        "flops_per_sample=; count it with torch.utils.flop_counter.FlopCounterMode over one "
        "forward and backward, divided by the batch)."
    )

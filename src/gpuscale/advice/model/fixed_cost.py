"""The fixed per-step cost: what a step costs whatever its per-device batch.

One device's micro-step at per-device batch ``b`` is a line in the batch::

    t(b) = t_fixed + b c        (c = F / R: FLOPs per sample over the achieved rate)

``t_fixed``: kernel launches, the framework's own work per step, optimizer kernels over every
parameter tensor; strong scaling saves only ``b c (1 - 1/N)`` of a step. Measured
(``bench.summary.fixed_cost``: the bare module at its batch and a quarter of it), entered
(``--fixed-ms``, or step times at two batches: ``line``), fitted (the bench's per-family
fit), or assumed (``GPU_PRIOR`` narrowed by what the step allows: ``prior``)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

import numpy as np

from gpuscale.advice.model.hardware import DEVICE_PEAK, MIN_MFU
from gpuscale.advice.model.priors import PRIORS, SourcedPrior, phrase
from gpuscale.advice.model.step import rate_tflops, work_ms
from gpuscale.advice.types import Finding, Measure, Source
from gpuscale.advice.types import FindingKind as K

GPU_PRIOR = PRIORS["gpu_fixed_cost"]  # ms: a GPU step's fixed cost nothing measured


@dataclass(frozen=True, kw_only=True, slots=True)
class FixedCost:
    """The fixed per-step cost at one device (ms) and its range, at the batch whose step it
    splits; ``below_prior_ms``: the prior's least, where the step left less."""

    ms: float
    low_ms: float
    high_ms: float
    source: Source
    basis: str | Finding
    at_batch: float
    measure: Measure = field(default_factory=Measure)
    below_prior_ms: float | None = None

    def __post_init__(self) -> None:
        values = (self.low_ms, self.ms, self.high_ms)
        if not all(math.isfinite(v) and v >= 0 for v in values):
            raise ValueError(phrase("fixed_cost_finite", values=values))
        if not self.low_ms <= self.ms <= self.high_ms:
            raise ValueError(phrase("fixed_cost_outside", ms=self.ms, values=values))

    @classmethod
    def exact(
        cls,
        ms: float,
        *,
        source: Source,
        basis: str | Finding,
        at_batch: float,
        measure: Measure | None = None,
    ) -> FixedCost:
        return cls(
            ms=ms,
            low_ms=ms,
            high_ms=ms,
            source=source,
            basis=basis,
            at_batch=at_batch,
            measure=measure or Measure(),
        )

    @property
    def uncertain(self) -> bool:
        return self.high_ms > self.low_ms


def line(points: Sequence[tuple[float, float]]) -> tuple[float, float]:
    """(fixed ms, ms per sample) of ``t(b) = fixed + b c`` through (batch, step ms) points,
    least squares, both >= 0: a flat step is all fixed cost; a negative intercept puts the
    line through the origin."""
    batch = np.asarray([p[0] for p in points], float)
    step = np.asarray([p[1] for p in points], float)
    if len(np.unique(batch)) < 2:
        raise ValueError(phrase("fixed_cost_two_batches"))
    slope, intercept = np.polyfit(batch, step, 1)
    if slope <= 0:
        return float(step.mean()), 0.0
    if intercept < 0:
        return 0.0, float(batch @ step / (batch @ batch))
    return float(intercept), float(slope)


def given(ms: float, at_batch: float) -> FixedCost:
    given = Finding.of(K.GIVEN_AS, field="fixed_ms")
    return FixedCost.exact(ms, source=Source.GIVEN, basis=given, at_batch=at_batch)


def prior(
    step_ms: float,
    batch: float,
    *,
    work_at_peak_ms: float | None,
    measure: Measure,
    base: SourcedPrior = GPU_PRIOR,
    floor_from_peak: bool = True,
) -> FixedCost:
    """``base`` narrowed by the step: at most the step less its work at the device's peak,
    at least the step less that work at ``MIN_MFU`` of it (with ``floor_from_peak``)."""
    cap = max(min(step_ms - (work_at_peak_ms or 0.0), step_ms * (1 - 1e-3)), 0.0)
    least, most = base.at("low"), base.at("high")
    floor = 0.0
    if work_at_peak_ms is not None and floor_from_peak:
        floor = step_ms - work_at_peak_ms / MIN_MFU
    low = min(max(least, floor, 0.0), cap)
    high = min(max(most, low), cap)
    point = min(max(base.point, low), high)
    basis = Finding.of(
        K.FIXED_PRIOR,
        why=base.said,
        step_ms=step_ms,
        cap_ms=cap,
        below=cap < least,  # the step leaves less than the prior's least: not its range
        floor_ms=floor,
        raised=floor > least,
        min_mfu=MIN_MFU,
        work_ms=step_ms - floor,
    )
    return FixedCost(
        ms=point,
        low_ms=low,
        high_ms=high,
        source=Source.ASSUMED,
        basis=basis,
        at_batch=batch,
        measure=measure,
        below_prior_ms=least if cap < least else None,
    )


@dataclass(frozen=True, slots=True)
class Split:
    """A fixed cost, the split it gives (ms fixed, TFLOP/s, a floor: 0 for none) and why."""

    cost: FixedCost
    fixed_ms: float
    tflops: float
    floor_ms: float
    note: str | Finding


def within_peak(
    own: FixedCost,
    *,
    fb_ms: float,
    batch: float,
    flops_per_sample: float,
    peak_tflops: float,
    plain_ms: tuple[tuple[float, float], ...],
    ceiling: Finding = DEVICE_PEAK,
) -> Split | None:
    """``own`` split against ``fb_ms`` at ``batch`` where that leaves less than the batch's
    work at ``peak_tflops`` (None: the split stands): the plain steps' slope splits the step
    where the device can reach that rate, else the step is a launch-bound floor, work beyond
    it priced at the peak; why, a finding about the ``ceiling`` (``hardware.ceiling``)."""
    at_peak_ms = work_ms(batch, flops_per_sample, peak_tflops)
    if fb_ms - own.ms >= at_peak_ms:
        return None
    (small, small_ms), (large, large_ms) = sorted(plain_ms)
    slope = (large_ms - small_ms) / (large - small) if large > small else 0.0
    if slope * batch >= at_peak_ms:
        fixed = max(fb_ms - slope * batch, 0.0)
        tflops = rate_tflops(1, flops_per_sample, slope)
        found = Finding.of(K.FIXED_SLOPE, slope_ms=slope, tflops=tflops, peak=(ceiling,))
        return Split(_raised(own, fixed, found), fixed, tflops, 0.0, found)
    found = Finding.of(
        K.FIXED_LAUNCH_FLOOR,
        fb_ms=fb_ms,
        small=small,
        large=large,
        peak=(ceiling,),
        peak_tflops=peak_tflops,
    )
    cost = _raised(own, fb_ms, found)
    return Split(cost, max(fb_ms - at_peak_ms, 0.0), peak_tflops, fb_ms, found)


def _raised(own: FixedCost, ms: float, why: Finding) -> FixedCost:
    """``own`` at ``ms`` (its high end; its low end no higher), its basis and ``why``."""
    basis = Finding.of(K.FIXED_RAISED, notes=(own.basis, why))
    return replace(own, ms=ms, low_ms=min(own.low_ms, ms), high_ms=ms, basis=basis)


def of_step_points(
    points: Sequence[tuple[int, float]],
    fixed_ms: float | None,
    work_at_peak_ms: float | None,
    flops_given: bool,
    measure: Measure,
) -> tuple[FixedCost, FixedCost | None]:
    """The fixed cost of a step given by numbers (the first point advised on): ``fixed_ms``,
    a line through the step times, else ``prior``; and, FLOPs per sample not given, the
    prior at exactly 6 x parameters."""
    per_device, step_ms = points[0]
    if fixed_ms is not None:
        return given(min(fixed_ms, step_ms), per_device), None
    if len(points) > 1:  # step times entered at two or more batches
        fixed, per_sample = line(points)
        basis = Finding.of(
            K.FIXED_ENTERED,
            batches=tuple(float(b) for b, _ in points),
            steps_ms=tuple(float(ms) for _, ms in points),
            per_sample_ms=per_sample,
        )
        return FixedCost.exact(fixed, source=Source.GIVEN, basis=basis, at_batch=per_device), None
    bound = {"work_at_peak_ms": work_at_peak_ms, "measure": measure}
    found = prior(step_ms, per_device, floor_from_peak=flops_given, **bound)
    return found, None if flops_given else prior(step_ms, per_device, **bound)

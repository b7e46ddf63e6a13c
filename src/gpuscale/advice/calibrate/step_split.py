"""A step given by numbers, split into a fixed per-step cost and per-sample work
(:func:`by_numbers`)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from gpuscale.advice.model import priors
from gpuscale.advice.model.fixed_cost import FixedCost, of_numbers
from gpuscale.advice.model.step import Compute, ModelSpec, rate_tflops, with_priors, work_ms
from gpuscale.advice.types import End, Measure, Source


@dataclass(frozen=True, slots=True)
class ByNumbers:
    """A step given by numbers, split: its rate and the peak bounding it (TFLOP/s; None: no
    peak), its fixed cost, its compute with the priors (``prior_range``: at their ends) and
    the same at each end of an assumed term's range."""

    whole_tflops: float
    bound_tflops: float | None  # the peak that bounds it (``peaks``' first, or bf16's)
    fixed: FixedCost
    compute: Compute
    prior_range: tuple[Compute, ...]
    ends: tuple[End, ...]


def by_numbers(
    spec: ModelSpec,
    points: Sequence[tuple[int, float]],
    fixed_ms: float | None,
    peaks: tuple[float | None, float | None],
    flops_given: bool,
    measure: Measure,
    memory_gbs: float | None = None,
) -> ByNumbers:
    """The step of ``points`` beside the fastest its work could run (``peaks``: its
    precision's, then bf16's for a step faster than that), split into a fixed cost and
    per-sample work, at the fixed cost found and at each end of an assumed range; DDP's work
    and the wait from their priors."""
    per_device, step_ms = points[0]
    whole = rate_tflops(per_device, spec.flops, step_ms)  # TFLOP/s of the whole step
    peak_tflops = peaks[1] if peaks[0] and whole > peaks[0] else peaks[0]
    at_peak = work_ms(per_device, spec.flops, peak_tflops) if peak_tflops else None
    fixed, dense = of_numbers(points, fixed_ms, at_peak, flops_given, measure)
    assumed = fixed.source == Source.ASSUMED
    costs: list[tuple[str, str, float, str, FixedCost]] = []
    if dense is not None and dense.ms > fixed.high_ms:
        costs.append(("flops_per_sample", "low", spec.flops, "FLOPs", dense))
    for end, ms in (("low", fixed.low_ms), ("high", fixed.high_ms)):
        if assumed and ms != fixed.ms:
            costs.append(("fixed_cost", end, ms, "ms", replace(fixed, ms=ms)))

    splits = []
    for cost in (fixed, *(c for *_, c in costs)):
        split = Compute(tflops=whole).resplit(spec, per_device, cost.ms)
        step_ms = split.compute_ms(spec, per_device)  # one device's compute step, once
        priced = {  # DDP's work: its prior's rest a step and the model's bucket copies
            which: replace(
                with_priors(split, step_ms, which),
                ddp_ms_per_mparam=spec.ddp_ms_per_mparam(priors.DDP_WORK.at(which), memory_gbs),
            )
            for which in ("low", "high", "point")
        }
        splits.append((priced["point"], (priced["low"], priced["high"])))
    (compute, prior_range), at_ends = splits[0], splits[1:]
    return ByNumbers(
        whole_tflops=whole,
        bound_tflops=peak_tflops,
        fixed=fixed,
        compute=compute,
        prior_range=prior_range,
        ends=tuple(
            (term, end, value, unit, {"model": {"fixed": cost, "compute": c, "prior_range": r}})
            for (term, end, value, unit, cost), (c, r) in zip(costs, at_ends, strict=True)
        ),
    )

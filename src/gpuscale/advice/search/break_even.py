"""The break-even: how much compute a step must do per byte it all-reduces, and how large a
model of this family must be, for 2 devices to train faster than 1 on this link."""

from __future__ import annotations

import math
from dataclasses import replace

from gpuscale.advice.calibration import Calibration
from gpuscale.advice.model.step import Compute, ModelSpec, pair_speedup


def _bisect_log(f, low: float, high: float, target: float) -> float | None:
    """Smallest x in [low, high] with increasing f(x) >= target (None if f(high) <
    target), by bisection in log x."""
    if f(high) < target:
        return None
    if f(low) >= target:
        return low
    for _ in range(60):
        mid = math.sqrt(low * high)
        low, high = (mid, high) if f(mid) < target else (low, mid)
    return high


def break_even(cal: Calibration) -> tuple[float | None, float | None, float | None]:
    """(compute ms per gradient MB, parameters, parameters for the target efficiency) from
    which 2 devices train faster than 1 (``pair_speedup``; a size NaN where the speedup falls
    with size). The first scales this model's whole step compute at fixed gradient bytes (a
    property of the link and overlap); the others resize the model within its family (the
    family's fitted step, else this model's modelled one, never its measured one)."""
    model, compute = cal.model.spec, cal.model.compute
    network, run, family = cal.machine.network, cal.run, cal.model.family
    compute_ms = compute.compute_ms(model, run.batch, run.accum)
    modelled = replace(compute, measured_ms=())

    def sized(params: float) -> tuple[ModelSpec, Compute]:
        if family is not None:
            return family.model(params, model.grad_bytes_per_param), family.at(params)
        return model.resized(params), modelled

    def speedup(spec: ModelSpec, at: Compute) -> float:
        return pair_speedup(network, run, spec, at)

    def by_compute(scale: float) -> float:
        # every term scales, the measured batches too (else the speedup is flat in scale)
        scaled = replace(
            compute,
            tflops=compute.tflops / scale,
            fixed_ms=compute.fixed_ms * scale,
            floor_ms=compute.floor_ms * scale,
            measured_ms=tuple((b, ms * scale) for b, ms in compute.measured_ms),
            opt_ms_per_mparam=compute.opt_ms_per_mparam * scale,
        )
        return speedup(model, scaled)

    def by_size(params: float) -> float:
        return speedup(*sized(params))

    scale = _bisect_log(by_compute, 1e-9, 1e9, 1.0)
    ms_per_mb = None
    if scale is not None:
        ms_per_mb = scale * compute_ms
        ms_per_mb /= model.grad_bytes / 1e6

    grid = [10 ** (3 + k / 4) for k in range(41)]  # 1e3 .. 1e13, four a decade
    speedups = [by_size(p) for p in grid]

    def from_size(target: float) -> float | None:
        # the size from which the speedup stays >= ``target`` to the end of the grid: None
        # where it never reaches it; NaN where it reaches it and falls below again
        above = [v >= target for v in speedups]
        if not any(above):
            return None
        first = above.index(True)
        if not all(above[first:]):
            return math.nan
        if first == 0:
            return grid[0]
        return _bisect_log(by_size, grid[first - 1], grid[first], target)

    return ms_per_mb, from_size(1.0), from_size(2 * cal.search.target_efficiency)

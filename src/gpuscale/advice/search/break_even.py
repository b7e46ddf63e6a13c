"""The break-even: how much compute a step must do per byte it all-reduces, and how large a
model of this family must be, for 2 devices to train faster than 1 on this link."""

from __future__ import annotations

import math
from dataclasses import replace

import pandas as pd

from gpuscale.advice.calibration import Calibration
from gpuscale.advice.model.step import Compute, ModelSpec, pair_speedup, per_step_ms, rate_tflops
from gpuscale.advice.records import BreakEven


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


def break_even(cal: Calibration, frame: pd.DataFrame) -> BreakEven:
    """The break-even (:class:`BreakEven`) and this model beside it, ``frame`` its
    predictions."""
    ms_per_mb, params, target = _break_even(cal)
    spec, compute, run, family = cal.model.spec, cal.model.compute, cal.run, cal.model.family
    # the rate of the whole step (fixed cost included), never the per-sample work's
    # (unbounded where the step is nearly all fixed cost)
    step_ms = compute.compute_ms(spec, run.batch, run.accum)
    tflops = rate_tflops(run.batch * run.accum, spec.flops, step_ms)
    per_byte = None
    if ms_per_mb is not None:  # FLOPs: the break-even's ms per MB at the whole step's rate
        per_byte = ms_per_mb / 1e3 * tflops * 1e12 / 1e6
    lines: tuple[float | None, ...] = (None, None)
    if family is not None:  # the family's lines at this model's size
        mparams = spec.params / 1e6
        lines = tuple(fixed + per * mparams for fixed, per in (family.opt_ms, family.ddp_ms))
    pair: tuple[float | None, ...] = (None, None)
    two = frame[frame["accelerators"] == 2]
    if len(two):
        pair = (float(two["throughput_efficiency"].iloc[0]) * 2, float(two["speedup"].iloc[0]))
    return BreakEven(
        ms_per_mb,
        params,
        target,
        step_tflops=tflops,
        own_ms_per_grad_mb=step_ms / (spec.grad_bytes / 1e6),
        flops_per_grad_byte=per_byte,
        flops_per_param=spec.flops / spec.params,
        own_optimizer_ms=per_step_ms(compute.opt_ms_per_mparam, spec.params),
        own_ddp_ms=per_step_ms(compute.ddp_ms_per_mparam, spec.params),
        family_optimizer_ms=lines[0],
        family_ddp_ms=lines[1],
        pair_throughput_speedup=pair[0],
        pair_speedup=pair[1],
    )


def _break_even(cal: Calibration) -> tuple[float | None, float | None, float | None]:
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

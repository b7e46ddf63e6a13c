"""The break-even: how much compute a step must do per byte it all-reduces, and how
large a model of this family must be, for 2 devices to train faster than 1 on this link
(``Advice.break_even_*``)."""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Protocol

from gpuscale.advice.model import Compute, ModelSpec, Step, predict_step
from gpuscale.advice.network import Network


class Pair(Protocol):
    """What the break-even reads of ``recommend.AdviceInputs`` (not imported: no circle)."""

    model: ModelSpec
    compute: Compute
    network: Network
    batch: int
    overlap: float | None
    bucket_mb: float
    strategy: str
    target_efficiency: float

    @property
    def kept_global_batch(self) -> int | None: ...


def _bisect_log(f, low: float, high: float, target: float) -> float | None:
    """Smallest x in [low, high] with f(x) >= target, f increasing (None if f(high) <
    target, ``low`` if f(low) already reaches it)."""
    if f(high) < target:
        return None
    if f(low) >= target:
        return low
    for _ in range(60):
        mid = math.sqrt(low * high)
        low, high = (mid, high) if f(mid) < target else (low, mid)
    return high


def _pair_speedup(inputs: Pair, model: ModelSpec, compute: Compute) -> float:
    """Throughput of 2 devices over 1: the same per-device batch (weak scaling), or the
    batch split over the two (strong scaling: the global batch kept)."""
    split = 2 if inputs.kept_global_batch is not None else 1

    def step(n: int) -> Step:
        return predict_step(
            model,
            compute,
            inputs.network,
            n,
            batch=inputs.batch / (split if n == 2 else 1),
            overlap=inputs.overlap,
            bucket_mb=inputs.bucket_mb,
            strategy=inputs.strategy,
        )

    return step(2).samples_per_s / step(1).samples_per_s


def break_even(inputs: Pair) -> tuple[float | None, float | None, float | None]:
    """(compute ms per gradient MB, parameters, parameters for the target efficiency)
    from which 2 devices train faster than 1 (throughput; the same per-device batch, or
    under strong scaling the same global batch).

    The first scales this model's whole step compute (fixed, per-sample and optimizer
    terms alike) at fixed gradient bytes: the compute a step must do per byte it
    all-reduces, a property of the link and overlap. The second resizes the model within
    its family (FLOPs per sample per parameter kept, fixed cost kept)."""
    model, compute = inputs.model, inputs.compute

    def by_compute(scale: float) -> float:
        scaled = replace(
            compute,
            tflops=compute.tflops / scale,
            fixed_ms=compute.fixed_ms * scale,
            opt_ms_per_mparam=compute.opt_ms_per_mparam * scale,
        )
        return _pair_speedup(inputs, model, scaled)

    scale = _bisect_log(by_compute, 1e-9, 1e9, 1.0)
    ms_per_mb = None
    if scale is not None:
        ms_per_mb = scale * compute.compute_ms(model, inputs.batch) / (model.grad_bytes / 1e6)

    def by_size(params: float) -> float:
        return _pair_speedup(inputs, model.resized(params), compute)

    params = _bisect_log(by_size, 1e3, 1e13, 1.0)
    target = _bisect_log(by_size, 1e3, 1e13, 2 * inputs.target_efficiency)
    return ms_per_mb, params, target

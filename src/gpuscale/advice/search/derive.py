"""Measurement and prediction reconciled (issue 60 item 4): where the bench measured a
count in the configuration the advice predicts and its runs fall outside the predicted
80% interval, the count's row rests on the measurement (its median, the runs' spread as
the interval: ``decision.applied``) and the disagreement is data (:class:`Disagreement`),
said first.

Which runs are trusted: the unflagged ones (and flagged ones used with --allow-flagged);
where every run at the count is flagged, those runs, with their flags, since they are
still what the machine did and the model only extrapolates the one-device run: a model a
measurement contradicts never stands alone.

Break even: The break-even: how much compute a step must do per byte it all-reduces, and how
large a model of this family must be, for 2 devices to train faster than 1 on this link
(``Advice.break_even_*``); and the equilibrium picks of the predictions.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import replace
from typing import Protocol

import pandas as pd

from gpuscale.advice.model.network import Network
from gpuscale.advice.model.step import Compute, FamilyBasis, ModelSpec, Step, step_at
from gpuscale.advice.types import (
    TRUSTED_ALLOWED,
    TRUSTED_FLAGGED_ONLY,
    TRUSTED_UNFLAGGED,
    Disagreement,
    Measured,
)
from gpuscale.analysis.equilibrium import knee_pick
from gpuscale.tables.advice import as_throughput, same_configuration


def _median(values: Sequence[float]) -> float:
    return float(pd.Series(list(values), dtype=float).median())


def disagreements(
    predictions: pd.DataFrame,
    measured: Sequence[Measured],
    alternative: pd.DataFrame | None = None,
) -> tuple[Disagreement, ...]:
    """Each count whose trusted runs' median throughput speedup lies outside the predicted
    80% interval of the same configuration (``tables.advice.same_configuration``: in the
    ``predictions``, else the weak-scaling ``alternative``)."""
    frames = [None if f is None else as_throughput(f) for f in (predictions, alternative)]
    groups: dict[tuple, list[Measured]] = {}
    for m in measured:
        key = (m.devices, m.batch_per_device, m.accum, m.base or (m.batch_per_device, m.accum))
        groups.setdefault(key, []).append(m)
    found = []
    for (devices, batch, accum, base), runs in groups.items():
        row = same_configuration(frames, devices, batch, accum, base)
        if row is None:
            continue
        trusted = [m for m in runs if not m.flagged or m.allowed]
        why = TRUSTED_UNFLAGGED if trusted else TRUSTED_FLAGGED_ONLY
        why = TRUSTED_ALLOWED if any(m.allowed for m in trusted) else why
        used = trusted or runs
        # the bench's own speedup: its runs' throughput against its N = 1 run's, one kind
        # of measurement on both sides (the predictions' baseline is the model's step, which
        # a run's samples/s need not share: a test file's 100/s beside a 3.5 ms step read
        # 0.03x where its steps said 0.67x)
        every = [m.speedup for m in runs]
        values = [v for m, v in zip(runs, every, strict=True) if m in used]
        left = [v for m, v in zip(runs, every, strict=True) if m.flagged and not m.allowed]
        speedup = _median(values)
        low, high = float(row["speedup_low"]), float(row["speedup_high"])
        if low <= speedup <= high:
            continue
        flagged = [m for m in runs if m.flagged]
        found.append(
            Disagreement(
                accelerators=devices,
                batch_per_device=batch,
                accum=accum,
                measured_speedup=speedup,
                measured_low=min(values),
                measured_high=max(values),
                predicted_speedup=float(row["speedup"]),
                predicted_low=low,
                predicted_high=high,
                runs=tuple(every),
                trusted_runs=tuple(values),
                left_out=tuple(left) if trusted else (),
                why=why,
                bench_speedups=tuple(m.speedup for m in runs),
                flags=tuple(dict.fromkeys(m.flags for m in flagged if m.flags)),
                weak_scaling=same_configuration(frames[:1], devices, batch, accum, base) is None,
                weak_evidence=next((m.weak_remedy for m in used if m.weak_remedy), ""),
            )
        )
    return tuple(sorted(found, key=lambda d: d.accelerators))


class Pair(Protocol):
    """What the break-even reads of ``inputs.AdviceInputs`` (all it needs, nothing more)."""

    model: ModelSpec
    compute: Compute
    network: Network
    batch: int
    accum: int
    overlap: float | None
    bucket_mb: float
    strategy: str
    target_efficiency: float
    family: FamilyBasis | None

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


def n_two_splits(inputs: Pair) -> bool:
    """Whether 2 devices keeping the global batch split the per-device batch (else they
    halve an even accumulation)."""
    return inputs.accum % 2 == 1


def _pair_speedup(inputs: Pair, model: ModelSpec, compute: Compute) -> float:
    """Throughput of 2 devices over 1: the same per-device batch (weak scaling), or the
    batch split over the two (strong scaling: the global batch kept)."""
    split = 2 if inputs.kept_global_batch is not None and n_two_splits(inputs) else 1
    # a strong pair halves the micro-steps where the run accumulated an even number
    accum = inputs.accum // 2 if split == 1 and inputs.kept_global_batch is not None else 0

    def step(n: int) -> Step:
        return step_at(
            model,
            compute,
            inputs.network,
            n,
            batch=inputs.batch / (split if n == 2 else 1),
            accum=accum if n == 2 and accum else inputs.accum,
            overlap=inputs.overlap,
            bucket_mb=inputs.bucket_mb,
            strategy=inputs.strategy,
        )

    return step(2).samples_per_s / step(1).samples_per_s


def break_even(inputs: Pair) -> tuple[float | None, float | None, float | None]:
    """(compute ms per gradient MB, parameters, parameters for the target efficiency)
    from which 2 devices train faster than 1 (the sizes NaN where the speedup falls with
    size: no such size) (throughput; the same per-device batch, or
    under strong scaling the same global batch).

    The first scales this model's whole step compute (fixed, per-sample and optimizer
    terms alike) at fixed gradient bytes: the compute a step must do per byte it
    all-reduces, a property of the link and overlap. The second resizes the model within
    its family: the family's step fitted over its members where the bench ran two sizes or
    more (``inputs.family``), else this model's (FLOPs per sample per parameter kept,
    fixed cost kept)."""
    model, compute = inputs.model, inputs.compute

    def by_compute(scale: float) -> float:
        # every term of the step scales, the batches measured too: a measured step left
        # as measured made the speedup flat in the scale (weak scaling on one H100 row:
        # a break-even of 2.8e-10 ms per MB, a user walk)
        scaled = replace(
            compute,
            tflops=compute.tflops / scale,
            fixed_ms=compute.fixed_ms * scale,
            floor_ms=compute.floor_ms * scale,
            measured_ms=tuple((b, ms * scale) for b, ms in compute.measured_ms),
            opt_ms_per_mparam=compute.opt_ms_per_mparam * scale,
        )
        return _pair_speedup(inputs, model, scaled)

    scale = _bisect_log(by_compute, 1e-9, 1e9, 1.0)
    ms_per_mb = None
    if scale is not None:
        ms_per_mb = scale * compute.compute_ms(model, inputs.batch, inputs.accum)
        ms_per_mb /= model.grad_bytes / 1e6

    # another size of the family was never measured: its step is the family's, fitted
    # over its members (``family``), never this model's measured one (which made the
    # speedup fall with size, "at no size") nor its per-parameter optimizer and DDP times
    # (a small member's made every size lose: one family, two answers); without a family
    # fit, the model's modelled step alone
    modelled = replace(compute, measured_ms=())
    family = inputs.family

    def by_size(params: float) -> float:
        if family is not None:
            sized = family.model(params, model.grad_bytes_per_param)
            return _pair_speedup(inputs, sized, family.at(params))
        return _pair_speedup(inputs, model.resized(params), modelled)

    grid = [10 ** (3 + k / 4) for k in range(41)]  # 1e3 .. 1e13, four a decade
    speedups = [by_size(p) for p in grid]
    params = _from_size(by_size, grid, speedups, 1.0)
    target = _from_size(by_size, grid, speedups, 2 * inputs.target_efficiency)
    return ms_per_mb, params, target


def _from_size(f, grid: list[float], values: list[float], target: float) -> float | None:
    """The size from which ``f`` stays >= ``target`` to the end of ``grid`` (``values``:
    ``f`` on it): None where it never reaches it; NaN where it reaches it and falls below
    again (no size from which: the speedup falls with size, as under weak scaling where a
    measured fixed cost is paid once a device; "at no size" denied the model's own gain)."""
    above = [v >= target for v in values]
    if not any(above):
        return None
    first = above.index(True)
    if not all(above[first:]):
        return math.nan
    if first == 0:
        return grid[0]
    return _bisect_log(f, grid[first - 1], grid[first], target)


def equilibrium(frame: pd.DataFrame, threshold: float) -> dict[str, int | None]:
    """The equilibrium picks of the (trusted) predictions: the knee of time to train
    against the count, the count maximising speedup x efficiency, and the largest count
    keeping efficiency >= ``threshold`` x its best."""
    table = pd.DataFrame(
        {
            "accelerators": frame["accelerators"],
            "time_to_train_min": frame["time_to_train_min"],
            "system_id": frame["accelerators"].astype(str),
        }
    )
    knee = knee_pick(table)
    score = frame["speedup"] * frame["efficiency"]
    good = frame[frame["efficiency"] >= threshold * frame["efficiency"].max()]
    return {
        "knee": int(knee["accelerators"]) if knee is not None else None,
        "max_speed_x_efficiency": int(frame.loc[score.idxmax(), "accelerators"]),
        "efficiency_threshold": int(good["accelerators"].max()) if len(good) else None,
    }

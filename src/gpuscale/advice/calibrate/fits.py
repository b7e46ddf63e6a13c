"""What the bench's N = 1 rows fit: the step against the per-device batch, the largest
batch its memory allows, a family's compute, the no-sync slowdown per N and the noise
scale; the memory check. One device's forward + backward::

    t(b) = max(t_floor, t_fixed + b c)          (c: ms per sample, F / R)

(gpuscale's H100 rows, ``../shared/gpu/h100/sweep.jsonl``: tf-7m's plain step 11.8 / 14.1 /
13.6 / 42.4 ms at batch 1 / 8 / 64 / 256). Every split of the sorted batches into a flat part
and a rising one (``fixed_cost.line``) is tried, the least squared log error wins."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import replace

import numpy as np
import pandas as pd

from gpuscale.advice.calibrate.rows import CalibrationError
from gpuscale.advice.calibration import Calibration, MemorySaid, Run, Shape
from gpuscale.advice.model.compute import REFERENCE_DEVICE
from gpuscale.advice.model.fixed_cost import line
from gpuscale.advice.model.hardware import DeviceRecord, device_record
from gpuscale.advice.records import trusted_runs
from gpuscale.advice.request import AdviceRequest
from gpuscale.advice.types import Finding
from gpuscale.advice.types import FindingKind as K
from gpuscale.analysis.critical_batch import NoiseScale, noise_scale
from gpuscale.hardware.capacity import (
    BENCH_RECORD,
    BYTES_PER_GB,
    AcceleratorMemory,
    usable_share,
)
from gpuscale.hardware.memory_check import MemoryCheck, check
from gpuscale.hardware.transformer import ShapeNumbers


def _merged(points: Sequence[tuple[float, float]]) -> list[tuple[float, float]]:
    """One point per batch (the median of repeated batches), sorted by batch."""
    by_batch: dict[float, list[float]] = {}
    for batch, ms in points:
        by_batch.setdefault(float(batch), []).append(float(ms))
    return [(b, float(np.median(v))) for b, v in sorted(by_batch.items())]


def fit(points: Sequence[tuple[float, float]], fallback_ms_per_sample: float) -> Shape:
    """The shape through (batch, ms) ``points`` of two or more batches;
    ``fallback_ms_per_sample`` prices the batches beyond a curve that never rose."""
    merged = _merged(points)
    if len(merged) < 2:
        raise CalibrationError(Finding.of(K.SHAPE_NEEDS_BATCHES))
    best: tuple[float, Shape] | None = None
    for k in range(len(merged) + 1):
        flat, rising = merged[:k], merged[k:]  # (floor, fixed, ms per sample) of this split
        floor = float(np.mean([ms for _, ms in flat])) if flat else 0.0
        fixed, per_sample = 0.0, fallback_ms_per_sample
        if len(rising) >= 2:
            fixed, per_sample = line(rising)
            if per_sample <= 0:  # flat throughout: the rate beyond comes from elsewhere
                floor, fixed, per_sample = max(floor, fixed), 0.0, fallback_ms_per_sample
        elif len(rising) == 1:
            per_sample = rising[0][1] / rising[0][0]
        shape = Shape(
            floor_ms=floor, fixed_ms=fixed, ms_per_sample=per_sample, points=tuple(merged)
        )
        error = sum(math.log(ms / shape.ms(b)) ** 2 for b, ms in merged)
        if best is None or error < best[0] - 1e-12:
            best = (error, shape)
    assert best is not None
    return best[1]


def fit_with_error(points: Sequence[tuple[float, float]], fallback_ms_per_sample: float) -> Shape:
    """``fit``, each measured batch predicted from the others (three or more)."""
    shape = fit(points, fallback_ms_per_sample)
    merged = shape.points
    errors = []
    if len(merged) >= 3:
        for i, (batch, ms) in enumerate(merged):
            other = fit(merged[:i] + merged[i + 1 :], fallback_ms_per_sample)
            errors.append((batch, other.ms(batch) / ms - 1))
    return replace(shape, left_out=tuple(errors))


def device_memory_bytes(recorded: float | None, device: DeviceRecord) -> float | None:
    """The device's memory: as the bench recorded it, else its catalogue part's, else None."""
    if recorded is not None and math.isfinite(recorded) and recorded > 0:
        return float(recorded)
    return device.memory_bytes


def largest_batch(
    points: Sequence[tuple[float, float]], device_bytes: float
) -> tuple[int, Finding] | None:
    """The largest per-device batch that fits the usable share of ``device_bytes`` (the one
    every memory check reads, ``capacity.usable_share``), from (batch, peak bytes) measured,
    and how: two batches give the bytes per sample (slope) and those that do not grow with
    the batch (intercept); one batch, or a peak that did not grow, bounds the bytes per
    sample by its peak / batch. None without a point."""
    merged = [(b, m) for b, m in _merged(points) if b > 0 and m > 0]
    if not merged:
        return None
    share = usable_share().share
    usable = share * device_bytes
    batch_hi, bytes_hi = merged[-1]
    said = {"usable_share": share, "device_gb": device_bytes / 1e9, "last": batch_hi}
    slope, intercept = 0.0, 0.0
    if len(merged) >= 2:
        slope, intercept = np.polyfit([b for b, _ in merged], [m for _, m in merged], 1)
    if slope > 0:
        static = max(float(intercept), 0.0)
        found = int((usable - static) / slope + 1e-6)  # not cut by rounding
        how = Finding.of(
            K.MEMORY_FIT,
            batch=found,
            mb_per_sample=slope / 1e6,
            static_gb=static / 1e9,
            first=merged[0][0],
            **said,
        )
    else:
        found = int(usable / (bytes_hi / batch_hi) + 1e-6)
        how = Finding.of(
            K.MEMORY_BOUND,
            batch=found,
            mb_per_sample=bytes_hi / batch_hi / 1e6,
            peak_gb=bytes_hi / 1e9,
            **said,
        )
    return max(found, int(batch_hi)), how


def fit_compute(single: pd.DataFrame) -> tuple[float, float] | None:
    """(fixed ms, achieved TFLOP/s): ``fixed_cost.line`` through the forward + backward
    against the work (GFLOP) of N = 1 rows of one family and configuration; None without
    two distinct work sizes or a rising line."""
    rows = single.dropna(subset=["forward_ms", "backward_ms", "flops_per_sample", "params"])
    work_gflop = (rows["batch_per_device"] * rows["flops_per_sample"]).to_numpy(float) / 1e9
    if len(np.unique(work_gflop)) < 2:
        return None
    fb = (rows["forward_ms"] + rows["backward_ms"]).to_numpy(float)
    fixed, ms_per_gflop = line(list(zip(work_gflop, fb, strict=True)))
    if ms_per_gflop <= 0:
        return None
    return fixed, 1 / ms_per_gflop


def memory_check(
    request: AdviceRequest,
    cal: Calibration,
    bench: pd.DataFrame | None,
    numbers: ShapeNumbers | None = None,
) -> tuple[MemoryCheck | None, MemorySaid]:
    """The memory check of the model advised on (None: a device of unknown memory; none
    named, recorded or implied: ``REFERENCE_DEVICE``) and the numbers its words rest on."""
    spec, machine = cal.model.spec, cal.machine
    counts = tuple(machine.device_counts)
    micro = {n: micro_batch_at(cal.run, n) for n in (1, *counts)}  # a shape's are per micro
    own, one = cal.runs.own_model, cal.runs.one_device
    device = machine.device  # the bench's record of it (below), else the catalogue part's
    if own is not None and one is not None:
        device = device_record(one.device_name)
    memory = _catalogue_memory(device)
    peak_gb = None  # the median peak memory (GB) of the model's N = 1 runs at the batch
    if bench is not None and own is not None:
        runs = trusted_runs(bench)
        at = (runs["model"] == own) & (runs["accelerators"] == 1)
        rows = runs[at & (runs["batch_per_device"] == cal.run.batch)]
        recorded = rows.get("device_memory_bytes", pd.Series(dtype=float)).dropna()
        if len(recorded) and str(rows["device"].iloc[0]) == "cuda":
            gib = float(recorded.median()) / 2**30
            memory = AcceleratorMemory(str(rows["device_name"].iloc[0]), gib, BENCH_RECORD)
        peaks = rows.get("peak_memory_bytes", pd.Series(dtype=float)).dropna()
        if len(peaks):
            peak_gb = float(peaks.median()) / BYTES_PER_GB
    assumed = memory is None and own is None and not machine.device.name
    if assumed:
        memory = _catalogue_memory(device_record(REFERENCE_DEVICE))
    if memory is None:
        return None, MemorySaid()
    held, state_gb = check(
        spec.params,
        asked=(request.optimizer, request.precision),
        benched=bench is not None,
        peak_gb=peak_gb,
        shape=numbers,
        micro=micro,
        strategy=request.strategy or cal.run.strategy,
        memory=memory,
        counts=counts,
        per_node=machine.network.per_node or request.gpus_per_node,
    )
    said = MemorySaid(device_assumed=assumed)
    if state_gb is not None:
        said = replace(said, per_device=cal.run.batch, peak_gb=peak_gb, state_gb=state_gb)
    return held, said


def micro_batch_at(run: Run, devices: int) -> int:
    """The per-device micro-batch a step runs at ``devices``: with the global batch kept,
    the whole batch of the fewest micro-steps that fits (as the search splits it), else the
    batch advised on."""
    kept = run.kept_global_batch
    if kept is None:
        return run.batch
    splits = (kept / devices / accum for accum in range(1, run.max_accum + 1))
    whole = (int(b) for b in splits if 1 <= b <= run.largest_batch and b == int(b))
    return next(whole, run.batch)  # no split: the count is not predicted


def _catalogue_memory(device: DeviceRecord) -> AcceleratorMemory | None:
    part = device.part
    if part is None:
        return None
    return AcceleratorMemory(part.name, part.memory_gib, f"device catalogue: {part.name}")


# A no-sync slowdown that falls by less than this share from fewer devices to more is
# run-to-run noise, not said (the step model holds it all the same).
FALL_NOISE = 0.05


def falling(slowdown: tuple[tuple[int, float], ...]) -> Finding | None:
    """A warning where the bench measured less contention at more devices, by more than
    ``FALL_NOISE``; None where it never fell."""
    fell, most, at = [], 0.0, 1
    for n, s in sorted((n, s) for n, s in slowdown if n > 1):
        if s < most * (1 - FALL_NOISE):
            fell.append(Finding.of(K.FELL, slowdown=s, devices=n, most=most, at=at))
        elif s > most:
            most, at = s, n
    if not fell:
        return None
    return Finding.of(K.CONTENTION_FELL, falls=tuple(fell))


def slowdowns(
    single: pd.DataFrame, levels: tuple[pd.DataFrame, ...], family: str
) -> tuple[dict[int, float], Finding]:
    """The no-sync slowdown per N (the median no-sync step at N over the same configuration's
    at N = 1), the most specific ``levels`` that measured it winning, and where it was read."""
    slowdown: dict[int, float] = {}
    read = Finding.of(K.CONTENTION_FROM, level="none")
    base = single.drop_duplicates("config_group", keep="last").set_index("config_group")
    for rows_at, level in zip(levels, ("configuration", "family", "own"), strict=True):
        if rows_at.empty or single.empty:
            continue
        reference = rows_at["config_group"].map(base["nosync_step_ms_mean"]).astype(float)
        ratio = rows_at["nosync_step_ms_mean"].astype(float) / reference
        medians = ratio.groupby(rows_at["accelerators"]).median().dropna()
        found = {int(n): float(f) for n, f in medians.items() if f > 0}
        if found:
            slowdown.update(found)
            at = tuple(
                Finding.of(K.NO_SYNC_AT, slowdown=f, devices=n) for n, f in sorted(found.items())
            )
            read = Finding.of(K.CONTENTION_FROM, level=level, family=family, found=at)
    return slowdown, read


def noise(rows: pd.DataFrame) -> NoiseScale | None:
    """The noise scale the runs' gradient norms measured (the one over the most steps)."""
    best = None
    for r in rows.itertuples():
        local, glob = r.noise_local_sq, r.noise_global_sq
        if not (isinstance(local, tuple) and len(local) >= 2 and pd.notna(r.noise_batch_big)):
            continue
        estimate = noise_scale(
            list(local), list(glob), float(r.noise_batch_small), float(r.noise_batch_big)
        )
        if estimate is not None and (best is None or estimate.steps > best.steps):
            best = estimate
    return best

"""The device's memory as the advice reads it: the largest per-device batch the bench's N = 1
peaks allow, and the memory check (``hardware.memory``) of the model advised on."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import replace

import numpy as np
import pandas as pd

from gpuscale.advice.calibrate.fits import per_batch
from gpuscale.advice.calibration import Calibration, Machine
from gpuscale.advice.model.hardware import DeviceRecord
from gpuscale.advice.types import Finding, trusted_runs
from gpuscale.advice.types import FindingKind as K
from gpuscale.hardware.capacity import (
    BENCH_RECORD,
    BYTES_PER_GB,
    AcceleratorMemory,
    usable_share,
)
from gpuscale.hardware.memory import STRATEGIES, MemoryCheck, check


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
    merged = [(b, m) for b, m in per_batch(points) if b > 0 and m > 0]
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


def memory_check(cal: Calibration, bench: pd.DataFrame | None) -> Machine:
    """The machine with the memory check of the model advised on ``machine.memory_device``
    (None: a device of unknown memory) and the numbers its words rest on. Where the search
    tries smaller batches (a convergence model, the global batch not kept), a shape's
    activations are checked at each count's largest that holds."""
    spec, machine = cal.model.spec, cal.machine
    counts = tuple(machine.device_counts)
    # a shape's activations are per micro-batch: at each count the kept global batch's whole
    # batch of the fewest micro-steps that fits (as the search splits it), else the batch
    splits = {n: cal.run.split(n) for n in (1, *counts)}
    micro = {n: cal.run.batch if split is None else split[0] for n, split in splits.items()}
    own = cal.runs.own_model
    # the catalogue's memory, else the accelerator memory table's; the bench's record instead
    memory = machine.memory_device.memory
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
    if memory is None:
        return machine
    strategy, asked = cal.run.strategy, cal.asked  # the run searched: the strategy asked
    numbers = asked.shape

    def checked_at(micro: dict[int, int]) -> tuple[MemoryCheck, float | None]:
        return check(
            spec.params,
            asked=(asked.optimizer, asked.precision),
            benched=bench is not None,
            peak_gb=peak_gb,
            shape=numbers,
            micro=micro,
            strategy=strategy,
            memory=memory,
            counts=counts,
            per_node=machine.network.per_node or asked.devices_per_node,
        )

    tried = cal.tried_batches
    if cal.run.kept_global_batch is None and len(tried) > 1 and numbers and peak_gb is None:
        # each count's micro-batch: of the batches tried (largest first, each checked at
        # every count), the largest that holds the model there under the strategy asked,
        # else under any strategy, else its own (none holds: refused)
        checks = {b: checked_at(dict.fromkeys(micro, b))[0] for b in tried}

        def largest(n: int, strategies: Sequence[str]) -> int | None:
            held = (b for b, c in checks.items() if any(c.holds(s, n) for s in strategies))
            return next(held, None)

        micro = {n: largest(n, [strategy]) or largest(n, STRATEGIES) or b for n, b in micro.items()}
    held, state_gb = checked_at(micro)
    checked = replace(machine, memory=held)
    if state_gb is not None:
        checked = replace(
            checked, peak_batch=cal.run.batch, memory_peak_gb=peak_gb, state_gb=state_gb
        )
    return checked

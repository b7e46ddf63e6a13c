"""The memory check of a request (``advice.memory.check``): the model's state, the device's
memory, the counts searched, and the activations its N = 1 run measured (its peak less the
state it held), else a transformer shape's at each count's micro-batch."""

from __future__ import annotations

from dataclasses import replace

import pandas as pd

from gpuscale.advice.calibrate.link import device_record
from gpuscale.advice.calibration import Calibration, MemorySaid, Run
from gpuscale.advice.measured_runs import trusted_runs
from gpuscale.advice.memory import MemoryCheck, check
from gpuscale.advice.model.hardware import DeviceRecord
from gpuscale.advice.model.step import REFERENCE_DEVICE
from gpuscale.advice.request import AdviceRequest
from gpuscale.hardware.capacity import BENCH_RECORD, BYTES_PER_GB, AcceleratorMemory
from gpuscale.hardware.transformer import ShapeNumbers


def memory_check(
    request: AdviceRequest,
    cal: Calibration,
    bench: pd.DataFrame | None,
    numbers: ShapeNumbers | None = None,
) -> tuple[MemoryCheck | None, MemorySaid]:
    """The memory check of the model advised on (None: a device of unknown memory) and the
    numbers its words rest on; with no device named, recorded or implied, on
    ``REFERENCE_DEVICE``; ``numbers``: a transformer shape's, its activations at every
    micro-batch a count runs."""
    spec, machine = cal.model.spec, cal.machine
    counts = tuple(machine.device_counts)
    micro = {n: micro_batch_at(cal.run, n) for n in (1, *counts)}  # a shape's are per micro
    rows = _model_rows(bench, cal)
    memory = _device_memory(cal, rows)
    peak_gb = _peak_gb(rows)
    assumed = memory is None and cal.runs.own_model is None and not machine.device.name
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
    the one the search splits it into, else the batch advised on."""
    kept = run.kept_global_batch
    if kept is None:
        return run.batch
    for accum in range(1, run.max_accum + 1):
        batch = kept / devices / accum
        if batch < 1:
            break
        if batch == int(batch) and batch <= run.largest_batch:
            return int(batch)
    return run.batch  # no split: the count is not predicted


def _model_rows(bench: pd.DataFrame | None, cal: Calibration) -> pd.DataFrame | None:
    own = cal.runs.own_model
    if bench is None or own is None:
        return None
    runs = trusted_runs(bench)
    same = (runs["model"] == own) & (runs["accelerators"] == 1)
    rows = runs[same & (runs["batch_per_device"] == cal.run.batch)]
    return rows if len(rows) else None


def _device_memory(cal: Calibration, rows: pd.DataFrame | None) -> AcceleratorMemory | None:
    """The device's memory: the bench's record of it, else the catalogue part's."""
    if rows is not None and "device_memory_bytes" in rows:
        recorded = rows["device_memory_bytes"].dropna()
        if len(recorded) and str(rows["device"].iloc[0]) == "cuda":
            name = str(rows["device_name"].iloc[0])
            gib = float(recorded.median()) / 2**30
            return AcceleratorMemory(name, gib, BENCH_RECORD)
    device, one = cal.machine.device, cal.runs.one_device
    if cal.runs.own_model is not None and one is not None:
        device = device_record(one.device_name)
    return _catalogue_memory(device)


def _catalogue_memory(device: DeviceRecord) -> AcceleratorMemory | None:
    part = device.part
    if part is None:
        return None
    return AcceleratorMemory(part.name, part.memory_gib, f"device catalogue: {part.name}")


def _peak_gb(rows: pd.DataFrame | None) -> float | None:
    """The median peak memory (GB) of the model's N = 1 runs (None: none measured)."""
    if rows is None or "peak_memory_bytes" not in rows:
        return None
    peaks = rows["peak_memory_bytes"].dropna()
    return float(peaks.median()) / BYTES_PER_GB if len(peaks) else None

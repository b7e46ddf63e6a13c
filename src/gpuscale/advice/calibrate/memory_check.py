"""The memory check of a request (``advice.memory.check``) from what the calibration
knows: the model's parameters, the device and its memory, the counts searched, and, with
bench results, the activations the model's N = 1 run measured (its peak memory less the
model state it held); by numbers with a transformer's shape, the activations its layers
hold at the per-device batch given (``hardware.transformer.activations``)."""

from __future__ import annotations

from dataclasses import replace

import pandas as pd

from gpuscale.advice.calibrate.link import device_record
from gpuscale.advice.calibration import Calibration, MemorySaid, Run
from gpuscale.advice.measured_runs import trusted_runs
from gpuscale.advice.memory import BENCH_STATE, MemoryCheck, check, state_of
from gpuscale.advice.model.hardware import DeviceRecord
from gpuscale.advice.model.step import REFERENCE_DEVICE
from gpuscale.advice.request import AdviceRequest
from gpuscale.hardware import transformer
from gpuscale.hardware.memory import (
    BENCH_RECORD,
    BYTES_PER_GB,
    AcceleratorMemory,
    model_state,
    state_per_device,
)


def memory_check(
    request: AdviceRequest, cal: Calibration, bench: pd.DataFrame | None
) -> tuple[MemoryCheck | None, MemorySaid]:
    """The memory check of the model advised on (None: a device of unknown memory: a CPU,
    a name the catalogue lacks) and the numbers its words rest on. With no device named,
    recorded or implied, the device assumed is the one DDP's copies are priced at
    (``REFERENCE_DEVICE``)."""
    spec, machine = cal.model.spec, cal.machine
    rows = _model_rows(bench, cal)
    memory = _device_memory(cal, rows)
    peak_gb = _peak_gb(rows)
    assumed = memory is None and cal.runs.own_model is None and not machine.device.name
    if assumed:
        memory = _catalogue_memory(device_record(REFERENCE_DEVICE))
    if memory is None:
        return None, MemorySaid()
    given = (request.optimizer, request.precision)
    if bench is not None:  # the bench's own state unless another is asked
        given = (request.optimizer or BENCH_STATE[0], request.precision or BENCH_STATE[1])
    optimizer, precision = state_of(*given)
    state = model_state(spec.params, optimizer, precision, cal.model.name)
    said, activations = MemorySaid(device_assumed=assumed), None
    if peak_gb is not None:  # the N = 1 run's peak less the model state it held (AdamW, fp32)
        held_gb = state_per_device(model_state(spec.params, *BENCH_STATE), 1).total_gb
        said = replace(said, per_device=cal.run.batch, peak_gb=peak_gb, state_gb=held_gb)
        activations = max(0.0, peak_gb - held_gb)
    shape, counted, by_count = request.shape, None, ()
    counts = tuple(machine.device_counts)
    if activations is None and shape is not None:  # by numbers: the shape's layers
        how = request.checkpointing or transformer.DEFAULT_CHECKPOINTING
        counted = transformer.activations(shape, micro_batch_at(cal.run, 1), how)
        activations = counted.total_gb
        by_count = tuple(
            (n, transformer.activations(shape, b, how))
            for n in counts
            if (b := micro_batch_at(cal.run, n)) != counted.micro_batch
        )
    gathered = None
    if shape is not None:  # FSDP's units held whole: two layers' weights, one's gradients
        trained = state.trainable
        whole = transformer.gathered_bytes(shape, trained.weights_bytes, trained.gradients_bytes)
        gathered = whole / BYTES_PER_GB
    network = machine.network
    held = check(
        state,
        strategy=request.strategy or cal.run.strategy,
        memory=memory,
        counts=counts,
        per_node=network.per_node or request.gpus_per_node,
        activations_gb=activations,
        activations_counted=counted,
        activations_by_count=by_count,
        gathered_gb=gathered,
    )
    return held, said


def micro_batch_at(run: Run, devices: int) -> int:
    """The per-device micro-batch a step runs at ``devices``: with the global batch kept,
    the one the search splits it into (the fewest micro-steps of a whole per-device batch no
    larger than the largest that fits: ``search.predictions``' candidates); else the batch
    advised on (the largest the search tries). A shape's activations are per micro-batch."""
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
    """The trusted N = 1 runs of the bench model advised on at its per-device batch."""
    own = cal.runs.own_model
    if bench is None or own is None:
        return None
    runs = trusted_runs(bench)
    same = (runs["model"] == own) & (runs["accelerators"] == 1)
    rows = runs[same & (runs["batch_per_device"] == cal.run.batch)]
    return rows if len(rows) else None


def _device_memory(cal: Calibration, rows: pd.DataFrame | None) -> AcceleratorMemory | None:
    """The device's memory: the bench's record of it (torch's ``total_memory``), else the
    catalogue's part (named, the link's, or the one the runs recorded)."""
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
    """The catalogue's memory of ``device``'s part (None: no part)."""
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

"""The memory check of a request (``advice.memory.check``) from what the calibration
knows: the model's parameters, the device and its memory, the counts searched, and, with
bench results, the activations the model's N = 1 run measured (its peak memory less the
model state it held); by numbers with a transformer's shape, the activations its layers
hold at the per-device batch given (``hardware.transformer.activations``)."""

from __future__ import annotations

import pandas as pd

from gpuscale.advice.calibrate.link import device_record
from gpuscale.advice.calibration import Calibration
from gpuscale.advice.explain.phrasebook import sentence
from gpuscale.advice.memory import BENCH_STATE, MemoryCheck, check, state_of
from gpuscale.advice.model.hardware import DeviceRecord
from gpuscale.advice.model.step import REFERENCE_DEVICE
from gpuscale.advice.request import AdviceRequest
from gpuscale.advice.types import trusted_runs
from gpuscale.hardware import transformer
from gpuscale.hardware.memory import (
    BYTES_PER_GB,
    AcceleratorMemory,
    model_state,
    state_per_device,
)


def memory_check(
    request: AdviceRequest, cal: Calibration, bench: pd.DataFrame | None
) -> MemoryCheck | None:
    """The memory check of the model advised on (None: a device of unknown memory: a CPU,
    a name the catalogue lacks). With no device named, recorded or
    implied, the device assumed is the one DDP's copies are priced at (``REFERENCE_DEVICE``)
    and the check says it is assumed."""
    spec, machine = cal.model.spec, cal.machine
    rows = _model_rows(bench, cal)
    memory = _device_memory(cal, rows)
    assumed = ""
    if memory is None and cal.runs.own_model is None and not machine.device.name:
        memory = _catalogue_memory(device_record(REFERENCE_DEVICE))
        assumed = sentence("device_assumed")
    if memory is None:
        return None
    given = (request.optimizer, request.precision)
    if bench is not None:  # the bench's own state unless another is asked
        given = (request.optimizer or BENCH_STATE[0], request.precision or BENCH_STATE[1])
    optimizer, precision = state_of(*given)
    state = model_state(spec.params, optimizer, precision, cal.model.name)
    activations, said = _activations(rows, cal)
    shape, counted = request.shape, None
    if activations is None and shape is not None:  # by numbers: the shape's layers
        how = request.checkpointing or transformer.DEFAULT_CHECKPOINTING
        counted = transformer.activations(shape, cal.run.batch, how)
        activations, said = counted.total_gb, _shape_said(counted)
    network = machine.network
    return check(
        state,
        strategy=request.strategy or cal.run.strategy,
        memory=memory,
        counts=tuple(machine.device_counts),
        per_node=network.per_node or request.gpus_per_node,
        activations_gb=activations,
        activations_source=said,
        device_assumed=assumed,
        activations_counted=counted,
    )


def _shape_said(counted: transformer.Activations) -> str:
    """Where the shape's activations come from, with the shape they are counted at."""
    return sentence(
        "memory_shape",
        micro_batch=counted.micro_batch,
        seq_len=counted.seq_len,
        checkpointing=counted.checkpointing.value,
        layers=counted.layers,
    )


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
            return AcceleratorMemory(name, gib, "the bench's record (torch total_memory)")
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


def _activations(rows: pd.DataFrame | None, cal: Calibration) -> tuple[float | None, str]:
    """(GB, source) of what the model's N = 1 run held besides its model state (AdamW,
    fp32: ``BENCH_STATE``); (None, "") without a peak measured."""
    if rows is None or "peak_memory_bytes" not in rows:
        return None, ""
    peaks = rows["peak_memory_bytes"].dropna()
    if not len(peaks):
        return None, ""
    peak_gb = float(peaks.median()) / BYTES_PER_GB
    state_gb = state_per_device(model_state(cal.model.spec.params, *BENCH_STATE), 1).total_gb
    rest = max(0.0, peak_gb - state_gb)
    said = sentence("memory_rest", per_device=cal.run.batch, peak_gb=peak_gb, state_gb=state_gb)
    return rest, said

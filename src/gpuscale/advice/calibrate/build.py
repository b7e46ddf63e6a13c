"""The calibration, built once: ``build(request, data)`` -> ``Calibration``. In a row: the
bench rows an advice may use and the model calibrated on them, the machine (on the bench
host's), the model from the bench or from numbers, the convergence, the memory check
(:func:`memory_check`) and the search's settings, with each assumed range's ends."""

from __future__ import annotations

from dataclasses import dataclass, replace

import pandas as pd

from gpuscale.advice.assumed import BenchTerms
from gpuscale.advice.assumptions import of_calibration
from gpuscale.advice.calibrate.bench_basis import from_bench
from gpuscale.advice.calibrate.calibration import advised
from gpuscale.advice.calibrate.from_numbers import from_numbers
from gpuscale.advice.calibrate.link import LINK_ENDS, BenchHost, host_of, machine_of
from gpuscale.advice.calibrate.rows import Usable, usable
from gpuscale.advice.calibration import Benched, Calibration, MemorySaid, Run
from gpuscale.advice.memory import MemoryCheck, check
from gpuscale.advice.model.convergence import resolved
from gpuscale.advice.model.hardware import DeviceRecord, device_record
from gpuscale.advice.model.step import REFERENCE_DEVICE
from gpuscale.advice.records import trusted_runs
from gpuscale.advice.request import AdviceRequest
from gpuscale.advice.request_fields import DEFAULT_RULESET
from gpuscale.advice.types import Finding, FindingKind, maybe
from gpuscale.analysis.critical_batch import rcp_fit
from gpuscale.hardware import transformer
from gpuscale.hardware.capacity import BENCH_RECORD, BYTES_PER_GB, AcceleratorMemory
from gpuscale.hardware.links import PRESETS
from gpuscale.hardware.transformer import ShapeNumbers
from gpuscale.interconnect.measured import MeasuredCurves
from gpuscale.interconnect.network import Link
from gpuscale.interconnect.topology import Topology
from gpuscale.mlperf.rcp import workload_rcps


@dataclass(frozen=True, slots=True)
class AdviceData:
    """The measurements an advice rests on: the bench table, the topology, the collectives
    curves, and sentences on what was skipped reading them."""

    bench: pd.DataFrame | None = None
    topology: Topology | None = None
    collectives: MeasuredCurves | None = None
    notes: tuple[str, ...] = ()


def build(request: AdviceRequest, data: AdviceData) -> Calibration:
    """The calibration of ``request`` on ``data.bench`` (else on its numbers); ``data.notes``
    said as warnings."""
    bench = data.bench
    # a transformer's numbers, counted once: its activations at every micro-batch a step may
    # run (a kept global batch splits into none larger than the batch advised on)
    shape, points = request.shape, request.step_points
    numbers = None
    if shape is not None and points:
        how = request.checkpointing or transformer.DEFAULT_CHECKPOINTING
        numbers = transformer.numbers_of(shape, range(1, points[0][0] + 1), how)
    # the model: calibrated on the bench's rows an advice may use, on the machine of the
    # host benched; else from the numbers given, on the machine asked
    runs_used: Usable | None = None
    calibrated: tuple[Benched, Benched] | None = None
    bench_host: BenchHost | None = None
    if bench is not None:
        runs_used = usable(bench, request)
        calibrated = advised(runs_used, request)
        bench_host = host_of(runs_used.table, calibrated[0])
    machine, said = machine_of(request, data.topology, data.collectives, bench_host)
    said = replace(said, warnings=(*said.warnings, *data.notes))
    benched: BenchTerms | None = None
    if bench is not None and runs_used is not None and calibrated is not None:
        cal, benched = from_bench(machine, said, request, bench, runs_used, calibrated)
    else:
        cal = from_numbers(machine, said, request, numbers)
    # a sweep that timed CPU processes (gloo) says nothing of a GPU model's link
    curves = data.collectives
    on_cpu = bench is not None and bool((bench["device"] == "cpu").all())
    if curves is not None and curves.device == "cpu" and not on_cpu:
        other = Finding.of(FindingKind.SWEEP_OF_CPU, sweep=curves.source)
        cal = cal.at({"said": {"warnings": (*cal.said.warnings, other)}})
    machine, run = cal.machine, cal.run
    # an assumed link: the network at each end of its range
    link_ends = tuple(
        (
            "link",
            end,
            PRESETS[name].busbw_gbs,
            "GB/s",
            {"machine": {"network": replace(machine.network, intra=Link.from_preset(name))}},
        )
        for end, name in (LINK_ENDS if machine.link_assumed else ())
    )
    # the convergence: the workload's RCPs read and fitted, a noise scale given or the
    # bench's, and MLPerf's least time to train at each count
    ruleset = request.ruleset or DEFAULT_RULESET
    found = maybe(workload_rcps, request.workload, ruleset)
    fitted = maybe(rcp_fit, found)
    converging = resolved(
        found,
        fitted,
        workload=request.workload,
        noise_scale=request.noise_scale,
        samples=request.samples_to_train,
        samples_given=request.samples is not None,
        reference_batch=run.batch * run.accum,
        measured=None if cal.bench is None else cal.bench.noise,
        max_devices=machine.max_devices,
    )
    # ``auto`` scaling keeps the global batch unless a convergence model prices larger ones
    convergence = converging.model
    scaling = request.scaling
    if scaling == "auto":
        scaling = "search" if convergence is not None else "strong"
    # what the request left to a default, said first
    one_step = request.step_ms is not None and request.batch is None
    defaulted = {
        "samples": request.samples is None and converging.samples_used,
        "batch": one_step and bench is None,
        "link": machine.link_assumed,
    }
    asked = {
        "bucket_mb": request.bucket_mb,
        "strategy": request.strategy or run.strategy,  # default: as benched
        "global_batch": request.global_batch,
        "scaling": scaling,
    }
    # checked on the run searched: a shape's activations follow each count's micro-batch
    memory, memory_said = memory_check(request, cal.at({"run": asked}), bench, numbers)
    return cal.at(
        {
            "run": asked,
            "machine": {"memory": memory, "memory_said": memory_said},
            "said": {"assumptions": of_calibration(cal, request, converging, benched)},
            "search": {
                "convergence": convergence,
                "samples": request.samples_to_train,
                "target_efficiency": request.target_efficiency,
                "price_per_device_hour": request.price,
                "mlperf_floor": converging.floor,
                "defaults": tuple(name for name, taken in defaulted.items() if taken),
                "noise_steps": converging.noise_steps,
                "ends": (*cal.search.ends, *link_ends),
            },
        }
    )


def memory_check(
    request: AdviceRequest,
    cal: Calibration,
    bench: pd.DataFrame | None,
    numbers: ShapeNumbers | None = None,
) -> tuple[MemoryCheck | None, MemorySaid]:
    """The memory check of the model advised on (None: a device of unknown memory; none
    named, recorded or implied: ``REFERENCE_DEVICE``) and the numbers its words rest on;
    ``numbers``: a transformer shape's, its activations at every micro-batch a count runs."""
    spec, machine = cal.model.spec, cal.machine
    counts = tuple(machine.device_counts)
    micro = {n: micro_batch_at(cal.run, n) for n in (1, *counts)}  # a shape's are per micro
    rows = _model_rows(bench, cal)
    memory = _device_memory(cal, rows)
    peaks = None if rows is None else rows.get("peak_memory_bytes")
    peak_gb = None  # the median peak memory (GB) of the model's N = 1 runs
    if peaks is not None and peaks.notna().any():
        peak_gb = float(peaks.dropna().median()) / BYTES_PER_GB
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

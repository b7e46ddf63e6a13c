"""The calibration, built once (:func:`build`): the model from the bench or from numbers on
its machine (the bench's on the host its runs recorded: :func:`host_of`), the convergence,
the memory check (``memory.memory_check``) and the search's settings, with each assumed
range's ends."""

from __future__ import annotations

from dataclasses import dataclass, replace

import pandas as pd

from gpuscale.advice.assumptions import of_calibration
from gpuscale.advice.calibrate.bench_basis import from_bench
from gpuscale.advice.calibrate.calibration import advised
from gpuscale.advice.calibrate.errors import CalibrationError
from gpuscale.advice.calibrate.from_numbers import from_numbers
from gpuscale.advice.calibrate.link import machine_of, span_of
from gpuscale.advice.calibrate.memory import memory_check
from gpuscale.advice.calibrate.rows import usable
from gpuscale.advice.calibration import BenchHost, Calibration
from gpuscale.advice.model.convergence import resolved
from gpuscale.advice.model.hardware import checked
from gpuscale.advice.records import Asked
from gpuscale.advice.request import AdviceRequest
from gpuscale.advice.types import Finding, FindingKind
from gpuscale.hardware.links import PRESETS, implied_device
from gpuscale.hardware.transformer import ShapeNumbers
from gpuscale.interconnect.measured import MeasuredCurves
from gpuscale.interconnect.network import Link
from gpuscale.interconnect.topology import Topology


@dataclass(frozen=True, slots=True)
class AdviceData:
    """The measurements an advice rests on, and sentences on what was skipped reading them."""

    bench: pd.DataFrame | None = None
    topology: Topology | None = None
    collectives: MeasuredCurves | None = None
    notes: tuple[str, ...] = ()


HOUR_MS = 3.6e6  # a one-device step of an hour or more is said (STEP_OVER_AN_HOUR)
# A global batch kept beyond this many times the largest batch of the workload's reference
# convergence points is said (RCP_EXTRAPOLATED): E(B) there is the fit's form alone
RCP_REACH = 2.0
# which of the state's inputs a request left to their defaults (optimizer, precision unset)
UNASKED = {
    (True, True): "both",
    (True, False): "optimizer",
    (False, True): "precision",
    (False, False): "none",
}


def host_of(table: pd.DataFrame, cal: Calibration) -> BenchHost:
    """The host ``cal``'s configuration in ``table`` recorded at its every device count: its
    link (a preset), the board it implies, its GPUs and cores."""
    rows = table[table["config_group"] == cal.bench.config_group]

    def most(column: str) -> int | None:
        values = pd.to_numeric(rows.get(column, pd.Series(dtype=float)), errors="coerce")
        return None if values.isna().all() else int(values.max())

    named = set(rows.get("host_link", pd.Series(dtype=object)).dropna().astype(str)) - {""}
    link = named.pop() if len(named) == 1 and next(iter(named)) in PRESETS else None
    return BenchHost(
        None if link is None else Link.from_preset(link),
        None if link is None else implied_device(link),
        most("host_devices"),
        most("host_cpu_count"),
        cal.bench.device_kind,
        cal.bench.threads,
        cal.machine.device.name,
        most("host_cpu_total"),
    )


def build(request: AdviceRequest, data: AdviceData) -> Calibration:
    """The calibration of ``request`` on ``data.bench`` (else on its numbers); ``data.notes``
    said as warnings."""
    bench = data.bench
    numbers = request.shape_numbers  # a transformer's, counted once
    asked_by = _asked(request, numbers)  # what the memory check and the terms read of it
    # the model: calibrated on the bench's rows an advice may use, on the machine of the
    # host benched; else from the numbers given, on the machine asked
    host = None
    if bench is not None:
        runs_used = usable(bench, request)
        calibrated = advised(runs_used, request)
        host = host_of(runs_used.table, calibrated)
    span = span_of(request, data.topology, host)  # the devices searched, the nodes they span
    machine, said, link = machine_of(request, data.topology, data.collectives, span, host)
    # a sweep timed on other hardware (CPU processes, the model on GPUs, or the reverse; GPUs
    # under a device of its own fabric, a TPU or Gaudi) says nothing of the model's link:
    # refused, as the sweep was asked for
    curves = data.collectives
    on_cpu = host is not None and host.kind == "cpu"  # the runs calibrated on, as classified
    own = not on_cpu and machine.device.own_fabric is not None
    if (
        curves is not None
        and curves.device in ("cpu", "cuda")
        and ((curves.device == "cpu") != on_cpu or own)
    ):
        runs = "cpu" if on_cpu else machine.device.name
        instead = "cpu" if on_cpu else ("fabric" if own else "gpu")
        kind = FindingKind.SWEEP_OF_OTHER_HARDWARE
        sweep = request.collectives or curves.source  # the path as typed, else its name
        raise CalibrationError(
            Finding.of(kind, sweep=sweep, swept=curves.device, device=runs, instead=instead)
        )
    # what the saved matrix got wrong, as `gpuscale topo --file` warns it
    problems = () if data.topology is None else data.topology.problems
    kind = FindingKind.TOPOLOGY_PROBLEM
    read = tuple(Finding.of(kind, file=request.topo, problem=p) for p in problems)
    said = replace(said, warnings=(*said.warnings, *read, *data.notes))
    if bench is None:
        cal, rate = from_numbers(machine, said, request, numbers)
    else:
        cal, rate = from_bench(machine, said, request, bench, runs_used, calibrated)
    cal = replace(cal, asked=asked_by)
    # the rate against the peak: unchecked without one, impossible above it; the numbers
    # the request typed that cannot be true (every rate and typed warning is one)
    unchecked, impossible = checked(rate)
    impossible += request.implausible
    # fewer samples than one step of the batch advised on: a count typed bare (10 for 10M),
    # or a --global-batch kept at every count larger than all the samples to train, typed
    # or the default (its one step, not the samples asked, would be the time said); a
    # workload's own samples, none typed, are its reference runs' (E(B) at the batch)
    one_step = max(cal.run.batch * cal.run.accum, request.global_batch or 0)
    own_samples = request.samples is None and request.workload is not None
    if not own_samples and request.samples_to_train < one_step:
        value, default = request.samples_to_train, request.samples is None
        typed = {"field": "samples", "value": value, "floor": one_step, "default": default}
        impossible.append(Finding.of(FindingKind.TYPED_UNDER_FLOOR, **typed))
    said = cal.said
    sources, warnings = (*said.sources, *filter(None, [unchecked])), (*said.warnings, *impossible)
    implausible = said.implausible or bool(impossible)
    # a step of an hour or more: possible (a huge accumulation), far outside what the priors
    # measured, maybe seconds typed as ms; said, not counted implausible (the count stands)
    longest = max((ms for _, ms in request.step_points), default=0.0)
    if longest >= HOUR_MS:
        warnings = (*warnings, Finding.of(FindingKind.STEP_OVER_AN_HOUR, step_ms=longest))
    cal = cal.at({"said": {"sources": sources, "warnings": warnings, "implausible": implausible}})
    machine, run, ends = cal.machine, cal.run, list(cal.search.ends)
    term = "fabric" if link.fabric else "link"  # a device's own fabric, else a link
    for end, at, gbs in link.ends:  # an assumed link: the network at each end of its range
        network = replace(machine.network, intra=at)
        ends.append((term, end, gbs, "GB/s", {"machine": {"network": network}}))
    # the convergence: the workload's RCPs and their fit (read as the request was made,
    # ``named.NamedWorkload``; said where the convergence is: "RCPs of resnet, ruleset
    # 4.0.0"), a noise scale given or the bench's, and MLPerf's least time to train at
    # each count
    named = request.named_workload
    found, fitted = (None, None) if named is None else (named.rcps, named.fitted)
    if found is not None and fitted is None:  # none in this ruleset: the rulesets that have it
        raise CalibrationError(
            Finding.of(
                FindingKind.NO_RCPS,
                display=found.display,
                workload=found.workload,
                ruleset=found.ruleset,
                elsewhere=found.elsewhere,
                newest=found.elsewhere[-1] if found.elsewhere else None,
            )
        )
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
    # a global batch kept far beyond the reference runs' batches: said, the time resting on it
    largest = max((b for _, points in found.points for b, _ in points), default=0) if found else 0
    if largest and (request.global_batch or 0) > RCP_REACH * largest:
        batch, times = request.global_batch, request.global_batch / largest
        far = {"batch": batch, "largest": largest, "times": times, "display": found.display}
        far_said = Finding.of(FindingKind.RCP_EXTRAPOLATED, **far)
        cal = cal.at({"said": {"warnings": (*cal.said.warnings, far_said)}})
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
    if (
        request.bucket_mb is not None
        and request.strategy is None
        and run.strategy not in (None, "ddp")
    ):
        # DDP's bucket size given where the strategy advised, the one benched, has none
        bucket = {"model": cal.model.name, "strategy": run.strategy}
        raise CalibrationError(Finding.of(FindingKind.BUCKET_UNUSED_BY_BENCHED, **bucket))
    asked = {
        # default: the bucket size benched (its row's, else DEFAULT_BUCKET_MB), as the strategy
        "bucket_mb": run.bucket_mb if request.bucket_mb is None else request.bucket_mb,
        "strategy": request.strategy or run.strategy,  # default: as benched
        "global_batch": request.global_batch,
        "max_accum": run.accum_taking(request.global_batch),
        "scaling": scaling,
    }
    # checked on the run searched: a shape's activations follow each count's micro-batch
    searched = cal.at({"run": asked, "search": {"convergence": convergence}})
    held = memory_check(searched, bench)
    if held.memory is None and request.device_name:  # a device named of no memory recorded
        closest = request.hardware.device.closest or None  # a name the catalogue lacks
        unheld = Finding.of(
            FindingKind.MEMORY_UNCHECKED, device=request.device_name, closest=closest
        )
        cal = cal.at({"said": {"warnings": (*cal.said.warnings, unheld)}})
    # a step measured on one device (--step-ms) of a state the check says one cannot hold:
    # the measurement and the estimate disagree (the device, optimizer or precision it ran
    # with is not the one assumed), said with the state's numbers
    memory = held.memory
    one = memory.state_beyond_one() if memory is not None else None
    if request.step_ms is not None and bench is None and memory is not None and one is not None:
        beyond = Finding.of(
            FindingKind.MEMORY_MEASURED_BEYOND,
            state_gb=one.state_gb,
            usable_gb=one.usable_gb,
            bytes_per_param=memory.state.bytes_per_param,
            optimizer=memory.state.optimizer,
            precision=memory.state.precision,
            device=memory.device.memory.family,
            unasked=UNASKED[request.optimizer is None, request.precision is None],
        )
        cal = cal.at({"said": {"warnings": (*cal.said.warnings, beyond)}})
    bucketed = cal.at({"run": {"bucket_mb": asked["bucket_mb"]}})  # the overlap says it
    return replace(cal, machine=held).at(
        {
            "run": asked,
            "said": {"assumptions": of_calibration(bucketed, converging)},
            "search": {
                "convergence": convergence,
                "samples": request.samples_to_train,
                "target_efficiency": request.target_efficiency,
                "price_per_device_hour": request.price_per_device_hour,
                "mlperf_floor": converging.floor,
                "defaults": tuple(name for name, taken in defaulted.items() if taken),
                "noise_steps": converging.noise_steps,
                "ends": tuple(ends),
            },
        }
    )


def _asked(request: AdviceRequest, shape: ShapeNumbers | None) -> Asked:
    """What ``request`` set itself, as the calibration keeps it; ``shape``: its shape's numbers."""
    return Asked(
        strategy=request.strategy,
        optimizer=request.optimizer,
        precision=request.precision,
        devices_per_node=request.devices_per_node,
        overlap_given=request.overlap is not None,
        params_given=request.params is not None,
        convergence_given=request.workload is not None or request.noise_scale is not None,
        shape=shape,
    )

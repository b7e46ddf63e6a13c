"""The advice from a bench file (:func:`from_bench`, one step of ``build.build``, as
``from_numbers.from_numbers`` is the other): the calibration advised on, on the bench
host's link, what the model's runs say, the step's error and the family's break-even
basis; then its terms as assumptions (measured, or assumed where the bench did not
measure).

An advice from a bench file predicts the machine benched, which need not be this one (rows
of an 8-GPU H100 host read on a laptop): its link (``host_link``, the preset its topology
records) stands where none is given, measured or detected here, or where this machine's
detected topology is another; its cores (``host_cpu_count``; this machine's where the rows
record none) cap the CPU processes (gloo) one host runs.
"""

from __future__ import annotations

import os
from dataclasses import replace

import numpy as np
import pandas as pd

from gpuscale.advice import assumptions, remeasure
from gpuscale.advice.assumed import Assumption, Quantity
from gpuscale.advice.calibrate import fits, measured, model_runs
from gpuscale.advice.calibrate.calibration import advised
from gpuscale.advice.calibrate.error import step_error
from gpuscale.advice.calibrate.link import DEFAULT_LINK, implied_device
from gpuscale.advice.calibrate.rows import (
    BenchFieldError,
    CalibrationError,
    NamedCalibrationError,
    Usable,
)
from gpuscale.advice.calibration import Benched, Calibration, Machine, Run, Said, StepModel
from gpuscale.advice.explain.phrasebook import sentence
from gpuscale.advice.explain.runs import allowed_warning, chosen_said, weak_evidence
from gpuscale.advice.measured_runs import Measured
from gpuscale.advice.model.hardware import rate_warnings, unchecked_note
from gpuscale.advice.model.power import bench_power
from gpuscale.advice.model.priors import DDP_WORK
from gpuscale.advice.model.step import per_step_ms
from gpuscale.advice.request import AdviceRequest
from gpuscale.advice.types import Finding, Measure, Source, TermId
from gpuscale.advice.types import FindingKind as K
from gpuscale.hardware.links import NVLINK, PRESETS
from gpuscale.interconnect.network import Link
from gpuscale.quantities import article, counted, number


def from_bench(
    machine: Machine, said: Said, req: AdviceRequest, bench: pd.DataFrame, found: Usable
) -> Calibration:
    """The calibration on ``machine`` (``said``: where it came from) of the model advised
    on, from the bench's runs an advice may use (``found``). In a row: the calibration as
    benched and as asked, on the link of the host it ran on, what the runs say of that
    model, its communication read on that link and the network scaled by it, the step's
    error, the hardware, the family; then the terms, from those numbers."""
    table = found.table
    try:  # as benched, and as asked (the strategy, the fixed cost entered)
        cal, benched = advised(table, req)
    except BenchFieldError:  # a field refused (--fixed-ms), not the runs left out: as it is
        raise
    except CalibrationError as exc:
        if not found.left:
            raise
        raise NamedCalibrationError(exc.found, found.left) from None
    # on the link of the host it ran on; CPU processes capped at its cores
    machine, said = on_bench_host(machine, said, req, table, cal)
    # what the runs say beside the calibration: the model chosen, its N > 1 runs
    params_given = req.params is not None
    per_device = req.batch or cal.run.batch  # as advised
    of_model = model_runs.of_model(bench, found, cal, req, per_device)
    runs, host_devices = of_model.runs.measured, of_model.runs.host_devices
    # the communication measured, read on the link advised, scales the network; the error
    cal, network = measured.read_comm(cal, table, machine.network)
    error = step_error(table, machine.network, cal)
    # as advised: the overlap (gloo reduces on the cores backward uses)
    measured_on, kind = cal.bench, cal.bench.device_kind
    overlap = cal.run.overlap if req.overlap is None else req.overlap
    if overlap is None and kind == "cpu":
        overlap = 0.0
    one_device = bench_model = None  # a model given by its size: no bench run of its own
    if not params_given:  # the model a bench run would measure, and its one-device run
        one_device, bench_model = model_runs.one_device(benched), cal.model.name
    # the hardware: watts per device at each per-device batch; the rate against the peak
    precision = req.gradient_precision
    benched_on = cal.device  # the device the runs recorded, resolved with them
    power = bench_power(
        table,
        measured_on.bench_model,
        measured_on.config_group,
        device=kind,
        record=benched_on,
        given_w=req.power_w,
    )
    unchecked = unchecked_note(cal.model.compute.tflops, benched_on, precision, "bench")
    impossible = rate_warnings(benched.model.compute.tflops, benched_on, precision, low=False)
    # the family's basis for its break-even (the same whichever member is advised);
    # another strategy than benched: the member's own, converted (as_asked)
    strategy = cal.run.strategy
    basis_of_family = (
        None if req.strategy and req.strategy != strategy else measured.fitted(table, benched)
    )
    fixed, compute = benched.model.fixed, benched.model.compute
    fixed_measure = remeasure.as_run(fixed.measure, of_model.runs.evidence, host_devices)
    # the words, from the numbers, in one place: the runs' own (the flagged runs let in and
    # the broken models --allow-flagged could not, weak runs, why this model where none was
    # asked), the calibration's sources, contention that fell, the terms as assumptions
    allowed = None
    if req.allow_flagged:
        allowed = allowed_warning(found.flags, found.allowed, found.broken)
    weak, weak_in_full = weak_evidence(of_model.weak)
    passed_over, others = chosen_said(of_model.chosen)
    sources: list[str | Finding] = [*fits.bench_sources(cal), *filter(None, [weak_in_full])]
    if unchecked and kind != "cpu":  # a GPU without a peak: its rate not checked, said
        sources.append(unchecked)
    fell = measured.falling(cal.model.compute.slowdown)
    # the step's terms as the bench measured them, or said as assumed: the fixed cost, the
    # overlap, the strategy and its own work (``calibration.as_asked``'s rule), the wait
    asked, name = req.strategy or strategy, cal.model.name
    other = assumptions.other_strategy(name, strategy, asked)
    span = f" ({fixed.low_ms:.3g}-{fixed.high_ms:.3g} ms)" if fixed.uncertain else ""
    own_ms = per_step_ms(compute.ddp_ms_per_mparam, benched.model.spec.params)
    assumed = (
        Assumption(
            term=TermId.FIXED,
            value=f"{fixed.ms:.3g} ms{span}",
            quantity=assumptions.fixed_quantity(fixed),
            source=fixed.source,
            basis=fixed.basis,
            measure=Measure() if fixed.source == Source.MEASURED else fixed.measure,
        ),
        assumptions.overlap(
            overlap,
            measured=cal.run.overlap is not None and req.overlap is None,
            given=req.overlap is not None,
            model=bench_model,
            unmeasured=_overlap_unmeasured(runs),
            host_devices=host_devices,
        ),
        *assumptions.strategy_taken(measured_on.bench_model or name, strategy, req.strategy),
        assumptions.own_work(
            own_ms,
            strategy,
            asked,
            bench_model,
            (DDP_WORK.point, DDP_WORK.source),
            of=measured_on.bench_model if params_given else "",
        ),
        assumptions.wait(
            dict(compute.slowdown),
            bool(compute.jitter_ms),
            model=bench_model,
            spread=_spread(compute.jitter_ms, compute.jitter_ref_ms),
            held=dict(compute.held_slowdown()),
            host_devices=host_devices,
        ),
    )
    warnings = (
        *said.warnings,
        *(w for w in (allowed, weak, fell) if w),
        *filter(None, [of_model.beyond]),
    )
    said = replace(
        said,
        sources=(*said.sources, *sources),
        assumptions=(*said.assumptions, *assumed),
        # a rate the bench measured is a finding however low; above the peak, impossible
        warnings=(*warnings, *impossible, *other),
        implausible=said.implausible or bool(impossible),
        model_note=passed_over,
        chosen=others,
    )
    model = StepModel(
        name=name,
        spec=replace(benched.model.spec, grad_bytes_per_param=req.grad_bytes),
        compute=compute,
        fixed=replace(fixed, measure=fixed_measure),
        error=error,
        family=basis_of_family,
    )
    run = Run(
        batch=per_device,
        accum=cal.run.accum if req.batch is None else 1,  # the run's micro-steps per step
        min_batch=max(1, per_device // 8),  # the fitted fixed cost prices small batches
        # the memory measured decides the largest batch, unless one was asked for
        max_batch=max(measured_on.max_batch, per_device)
        if measured_on.max_batch is not None and req.batch is None
        else None,
        strategy=strategy,
        overlap=overlap,
    )
    runs_of = replace(of_model.runs, own_model=bench_model, one_device=one_device)
    machine = replace(machine, network=network, power=power)
    return Calibration(
        model=model, run=run, machine=machine, runs=runs_of, said=said, bench=measured_on
    )


def _overlap_unmeasured(measured: tuple[Measured, ...]) -> str:
    """Why the bench did not measure the overlap: its multi-device run of the model is
    flagged (left out), timed no communication, or there is none."""
    left_out = [m.devices for m in measured if m.flagged and not m.allowed]
    if left_out:
        return sentence("overlap_flagged", devices=left_out[0])
    if measured:
        return sentence("overlap_no_communication")
    return "no multi-device run"


def _spread(jitter: tuple[float, ...], mean_ms: float) -> float | None:
    """The standard deviation (n - 1) of the N = 1 steps the wait is drawn from over their
    mean (``mean_ms``, ``Compute.jitter_ref_ms``): a share of the step; None under two."""
    if len(jitter) < 2 or not mean_ms > 0:
        return None
    return float(np.std(jitter, ddof=1)) / mean_ms


def _recorded(table: pd.DataFrame, cal: Benched, column: str) -> pd.Series:
    """The values ``column`` records for the runs calibrated on (its configuration at
    every device count), missing ones dropped (none in a table made before the column)."""
    if column not in table:
        return pd.Series(dtype=object)
    rows = table[table["config_group"] == cal.bench.config_group]
    values = rows[column].dropna()
    return values[values.astype(str).str.len() > 0]


def host_link(table: pd.DataFrame, cal: Benched) -> str | None:
    """The link preset the bench host's topology records for the runs calibrated on, None
    where they record none, or several (runs of different hosts)."""
    links = set(_recorded(table, cal, "host_link").astype(str))
    return links.pop() if len(links) == 1 and next(iter(links)) in PRESETS else None


def on_bench_host(
    machine: Machine, said: Said, req: AdviceRequest, table: pd.DataFrame, cal: Benched
) -> tuple[Machine, Said]:
    """``machine`` on the link the bench host recorded, said, where no link was given or
    measured and this machine detected none or another (a host of one GPU records no link
    between GPUs: its link is said as assumed, :func:`inferred`); CPU processes capped
    at its cores (:func:`cpu_processes`)."""
    recorded = host_link(table, cal)
    detected = machine.link_detected
    taken = None  # the link inferred: (its link, the host's GPUs; None: not recorded)
    if recorded is not None and (machine.link_assumed or (detected and detected != recorded)):
        link = Link.from_preset(recorded)
        network = replace(machine.network, intra=link)
        gpus = pd.to_numeric(_recorded(table, cal, "host_devices"), errors="coerce").dropna()
        if not len(gpus) or gpus.max() < 2:  # no pair of GPUs: the link is inferred
            taken = (link, int(gpus.max()) if len(gpus) else None)
            machine = replace(machine, network=network)
            said = replace(said, sources=said.sources[1:])
        else:
            host_said = Finding.of(
                K.LINK_OF_BENCH_HOST,
                name=recorded,
                device=implied_device(recorded) or None,
                busbw_gbs=link.busbw_gbs,
                detected=detected,  # this machine's GPUs of another link
            )
            machine = replace(machine, network=network, link_assumed=False)
            said = replace(said, sources=(host_said, *said.sources[1:]))
    if cal.bench.device_kind == "cpu":
        machine, said = cpu_processes(machine, said, req, table, cal)
    if recorded is not None and taken is not None:
        link_said = inferred(recorded, *taken, cal, detected)
        said = replace(said, assumptions=(*said.assumptions, link_said))
    return machine, said


def inferred(
    preset: str, link: Link, gpus: int | None, cal: Benched, detected: str | None
) -> Assumption:
    """The link of a bench host whose topology holds fewer than 2 GPUs (``gpus``; None: not
    recorded), as an assumption: ``preset`` is what its GPU's model implies, no link it
    measured, with the command that measures one."""
    board = implied_device(preset)
    generation = NVLINK.get(preset)
    what = sentence("link_of_gpu_model", preset=preset, device=cal.device.name or "not recorded")
    if generation is not None:
        whose = f"{article(generation.architecture)} {generation.architecture} GPU's"
        if board:  # an H100, a B200
            whose = f"{article(board)} {board} board's on an HGX host"
        what += f": {generation.links_per_gpu} NVLinks per GPU, as {whose}"
    host = "its topology" if gpus is None else f"it had {counted(gpus, 'GPU')}"
    return Assumption(
        term=TermId.LINK,
        value=f"{preset}, {number(link.busbw_gbs)} GB/s",
        quantity=Quantity(link.busbw_gbs, "GB/s bus bandwidth"),
        source=Source.ASSUMED,
        basis=sentence("no_link_measured", host=host, what=what),
        measure=Measure(sentence("measure_link", detected=detected or None)),
    )


def cpu_processes(
    machine: Machine, said: Said, req: AdviceRequest, table: pd.DataFrame, cal: Benched
) -> tuple[Machine, Said]:
    """On CPU (gloo) the devices are processes of one host: their count is capped at the
    bench host's cores (as its rows record them; this machine's where they record none)
    // threads per process (at least 1; on one node), and their link is no GPU preset: an
    assumed one is named and said as such."""
    sources, network = list(said.sources), machine.network
    if machine.link_assumed:
        intra = network.intra
        network = replace(network, intra=replace(intra, name="CPU processes"))
        sources[0] = Finding.of(
            K.LINK_OF_PROCESSES,
            name=DEFAULT_LINK,
            busbw_gbs=intra.busbw_gbs,
            latency_us=intra.latency_us,
        )
    max_devices = machine.max_devices
    recorded = pd.to_numeric(_recorded(table, cal, "host_cpu_count"), errors="coerce").dropna()
    cores = int(recorded.max()) if len(recorded) else (os.cpu_count() or 1)
    per_process = max(1, cal.bench.threads or 1)
    host = max(1, cores // per_process)
    found = {"host": host, "cores": cores, "threads": per_process, "bench": bool(len(recorded))}
    one_node = req.nodes == 1  # processes of one host: several nodes are not capped
    if one_node and req.max_devices is None and host < max_devices:
        sources.append(Finding.of(K.PROCESSES_CAP, **found))
        max_devices = host
    elif one_node and host < max_devices:
        sources.append(Finding.of(K.PROCESSES_ABOVE, **found))
    machine = replace(machine, network=network, max_devices=max_devices)
    return machine, replace(said, sources=tuple(sources))

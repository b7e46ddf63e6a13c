"""The calibration, built once from the request and the data: ``build(request, bench=,
topology=, collectives=, notes=)`` -> :class:`~gpuscale.advice.inputs.Calibrated`.

In a row: the link (``network_basis``), the model from bench rows (:func:`from_bench`,
here) or from numbers (``basis.from_numbers``), the inputs at each end of every assumed
term's range (a model given by numbers: its FLOPs per sample and fixed cost; an assumed
link: its slowest and fastest preset), the convergence model, then the search's inputs,
each in ``build`` itself: no step calls back into this module."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

import pandas as pd

from gpuscale.advice import assumptions
from gpuscale.advice.calibrate import family, fits, measured, rows
from gpuscale.advice.calibrate.basis import Basis, from_numbers
from gpuscale.advice.calibrate.bench_terms import bench_assumed, other_strategy
from gpuscale.advice.calibrate.calibration import (
    BenchFieldError,
    CalibrationError,
    NamedCalibrationError,
    as_advised,
    step_error,
)
from gpuscale.advice.calibrate.link import network_basis
from gpuscale.advice.explain import weak_first
from gpuscale.advice.inputs import AdviceInputs, Calibrated
from gpuscale.advice.model.convergence import resolved
from gpuscale.advice.model.hardware import bench_power, rate_warnings, unchecked_note
from gpuscale.advice.model.network import Link, MeasuredCurves
from gpuscale.advice.request import DEFAULT_RULESET, AdviceRequest
from gpuscale.analysis.critical_batch import rcps
from gpuscale.hardware.links import PRESETS
from gpuscale.interconnect.topology import Topology
from gpuscale.tables.requests import NamedError

# An assumed link's range: across CPU sockets (its slowest) to PCIe 4.0 P2P through a switch.
LINK_ENDS = (("low", "pcie-sys"), ("high", "pcie4-x16"))


def build(
    request: AdviceRequest,
    *,
    bench: pd.DataFrame | None = None,
    topology: Topology | None = None,
    collectives: MeasuredCurves | None = None,
    notes: Sequence[str] = (),
) -> Calibrated:
    """The calibration of ``request`` on ``bench`` (else on its numbers): the search's
    inputs and their ends. ``notes``: sentences on reading the data, said among the
    sources."""
    basis = network_basis(request, topology, collectives)
    basis = replace(basis, sources=(*basis.sources, *notes))
    # the model: calibrated on the bench's rows, else from the numbers given
    basis = from_bench(basis, request, bench) if bench is not None else from_numbers(basis, request)
    other = _other_device(collectives, bench)
    basis = replace(basis, warnings=(*basis.warnings, other)) if other else basis
    # an assumed link (none given, detected or measured): the network at each end of its
    # range (``LINK_ENDS``)
    link_ends = tuple(
        (
            "link",
            end,
            PRESETS[name].busbw_gbs,
            "GB/s",
            {"network": replace(basis.network, intra=Link.from_preset(name))},
        )
        for end, name in (LINK_ENDS if basis.link_assumed else ())
    )
    # the convergence: the workload's RCPs in the ruleset asked, then the model they, a
    # noise scale given or the bench's give, and MLPerf's least time to train at each count
    ruleset = request.ruleset or DEFAULT_RULESET
    found = rcps(request.workload, ruleset) if request.workload is not None else None
    converging = resolved(
        found,
        workload=request.workload,
        noise_scale=request.noise_scale,
        samples=request.samples_to_train,
        samples_given=request.samples is not None,
        reference_batch=basis.per_device * basis.accum,
        measured=basis.noise,
        max_devices=basis.max_devices,
    )
    # the search's inputs: the basis (its model and per-device batch, the fields it
    # carries unchanged), the request's choices and the convergence resolved; ``auto``
    # scaling keeps the global batch unless a convergence model prices larger ones
    convergence = converging.model
    scaling = request.scaling
    if scaling == "auto":
        scaling = "search" if convergence is not None else "strong"
    evidence, host = basis.evidence, basis.host_devices
    said = assumptions.convergence(
        convergence.source if convergence else None,
        model=basis.bench_model,
        same_samples=basis.same_samples,
        host_devices=host,
        thin=converging.thin,
        found=evidence,
        given=request.workload is not None or request.noise_scale is not None,
    )
    # every assumption's bench run said once, as the file advised on runs it
    assumed = assumptions.not_held((*basis.assumed, said), evidence, host)
    inputs = AdviceInputs(
        model=basis.spec,
        batch=basis.per_device,
        **{name: getattr(basis, name) for name in _CARRIED},
        bucket_mb=request.bucket_mb,
        strategy=request.strategy or basis.strategy or "ddp",  # default: as benched
        convergence=convergence,
        samples=request.samples_to_train,
        global_batch=request.global_batch,
        scaling=scaling,
        assumptions=(*assumed, assumptions.input_pipeline()),
        target_efficiency=request.target_efficiency,
        price_per_device_hour=request.price,
        mlperf_floor=converging.floor,
    )
    return Calibrated(
        ends=(*basis.ends, *link_ends),
        inputs=inputs,
        samples_used=converging.samples_used,
        noise_steps=converging.noise_steps,
        link_assumed=basis.link_assumed,
        from_bench=bench is not None,
        model_note=basis.model_note,
        chosen=basis.chosen,
    )


def from_bench(basis: Basis, req: AdviceRequest, bench: pd.DataFrame) -> Basis:
    """``basis`` with the model calibrated on the bench's runs of it, its measured
    overlap, power and noise scale, and the step's interval from leave-one-out. In a row,
    one module a step: the runs used (``rows.usable``), the calibration on the link of
    the host it ran on (``family.on_bench_host``), what the runs say of that model
    (``rows.of_model``), its communication read on that link (``measured.read_comm``),
    the step's error, the model as advised (``calibration.as_advised``), the hardware,
    the family; then the words, from those numbers."""
    # the runs: a broken model (its loss not finite) is used by nothing, --allow-flagged or
    # not: not advised on, not a family's representative, no contention measured on it
    found = rows.usable(bench, req)
    table = found.table
    try:
        cal, basis = family.on_bench_host(table, req, basis)  # on the link it ran on
    except CalibrationError as exc:
        more = found.left_out()
        if not more:
            raise
        # the fields it names (``ref``) still said as the caller names them
        said = exc.text if isinstance(exc, NamedError | BenchFieldError) else str(exc)
        raise NamedCalibrationError(f"{said}{more}.") from None
    # what the runs say beside the calibration: the model chosen, its N > 1 runs
    params_given = req.params is not None
    of_model = rows.of_model(bench, found, cal, req)
    runs, host = of_model.runs, of_model.host_devices
    # the communication measured, read on the link advised; the step's error as benched
    cal = measured.read_comm(cal, table, basis.network)
    error = step_error(table, basis.network, cal)
    # as advised: the communication measured, the strategy asked, the fixed cost entered,
    # the per-device batch and the overlap (gloo reduces on the cores backward uses)
    network, benched = as_advised(cal, basis.network, req.strategy, req.fixed_ms)
    basis = replace(basis, network=network)
    per_device = req.batch or cal.batch
    overlap = cal.overlap if req.overlap is None else req.overlap
    if overlap is None and cal.device == "cpu":
        overlap = 0.0
    one_device = None if params_given else measured.one_device(benched)
    bench_model = None if params_given else cal.name  # the model a bench run would measure
    # the hardware: watts per device at each per-device batch; the rate against the peak
    precision = "bf16" if req.grad_bytes == 2 else "fp32"
    power = bench_power(
        table,
        cal.bench_model,
        cal.config_group,
        device=cal.device,
        device_name=cal.device_name,
        given_w=req.power_w,
    )
    unchecked = unchecked_note(cal.compute.tflops, cal.device_name, precision, "the bench measured")
    impossible = rate_warnings(benched.compute.tflops, cal.device_name, precision, low=False)
    # the family's basis for its break-even (the same whichever member is advised);
    # another strategy than benched: the member's own, converted (as_advised)
    basis_of_family = (
        None if req.strategy and req.strategy != cal.strategy else family.fitted(table, benched)
    )
    # the words, from the numbers: weak evidence, the batch beyond the one timed, the
    # calibration's sources, contention that fell, the strategy, the terms as assumptions
    weak, weak_in_full, evidence = weak_first.weak_said(
        table[rows.on_hardware(table, cal)], cal.name, req.bench
    )
    if evidence is not None:  # the bench command of the advised run, on the file advised on
        evidence = replace(evidence, run=weak_first.run_options(table, cal, req))
    fixed_measure = assumptions.as_run(benched.fixed.measure, evidence, host)
    beyond = weak_first.far_beyond_the_batch_timed(cal, per_device)
    sources = fits.bench_sources(cal) + ([weak_in_full] if weak_in_full else [])
    if unchecked and cal.device != "cpu":  # a GPU without a peak: its rate not checked, said
        sources.append(unchecked)
    fell = measured.falling(cal.compute.slowdown)
    other = other_strategy(cal.name, cal.strategy, req.strategy or cal.strategy)
    assumed = bench_assumed(benched, req, overlap, bench_model, runs, host)
    warnings = (
        *basis.warnings,
        *(w for w in (found.warning, weak, fell) if w),
        *filter(None, [beyond]),
    )
    return replace(
        basis,
        evidence=evidence,
        measured=runs,
        error=error,
        spec=replace(benched.model, grad_bytes_per_param=req.grad_bytes),
        name=cal.name,
        compute=benched.compute,
        per_device=per_device,
        accum=cal.accum if req.batch is None else 1,  # the run's micro-steps per step
        # the memory measured decides the largest batch, unless one was asked for
        max_batch=max(cal.max_batch, per_device)
        if cal.max_batch is not None and req.batch is None
        else None,
        overlap=overlap,
        power=power,
        sources=(*basis.sources, *sources),
        noise=cal.noise,
        same_samples=of_model.same_samples,
        min_batch=max(1, per_device // 8),  # the fitted fixed cost prices small batches
        fixed=replace(benched.fixed, measure=fixed_measure),
        assumed=(*basis.assumed, *assumed),
        # a rate the bench measured is a finding however low; above the peak, impossible
        warnings=(*warnings, *impossible, *other),
        implausible=basis.implausible or bool(impossible),
        bench_model=bench_model,
        model_note=of_model.passed_over,
        chosen=of_model.others,
        host_devices=host,
        one_device=one_device,
        strategy=cal.strategy,
        family=basis_of_family,
    )


def _other_device(curves: MeasuredCurves | None, bench: pd.DataFrame | None) -> str:
    """A warning where the sweep timed CPU processes and the model is a GPU's (given by
    numbers, or benched on a GPU): a gloo curve is no GPU link's (a user walk: applied
    without a word)."""
    on_cpu = bench is not None and bool((bench["device"] == "cpu").all())
    if curves is None or curves.device != "cpu" or on_cpu:
        return ""
    return (
        f"WARNING: other hardware: {curves.source} timed CPU processes (gloo), not the GPUs "
        "the model runs on: its link is not theirs; sweep the GPU host (gpuscale "
        "collectives there) or give --interconnect"
    )


# What the search takes from the basis as it is: the same name and meaning in both.
_CARRIED = (
    *("compute", "network", "overlap", "fixed", "prior_range", "power"),  # the step's terms
    *("max_devices", "min_batch", "max_batch", "accum"),  # the bounds of the search
    *("name", "sources", "error", "warnings", "host_devices", "evidence", "one_device"),  # said
    "family",  # the family's break-even basis
    "implausible",  # an input cannot be true: no count above 1
    "measured",  # the bench's N > 1 runs: a count they disagree with rests on them
)

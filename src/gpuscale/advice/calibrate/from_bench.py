"""The advice from ``gpuscale bench`` results (``from_bench``): the model calibrated on
the runs of one model, its measured overlap, DDP overhead, wait, fixed per-step cost,
power and noise scale, the step's interval from leave-one-out, and every term the runs
did not measure said as assumed (``advice/assumptions.py``). Flagged runs are left out
unless allowed; ``--fixed-ms`` replaces the measured split of the step
(``fixed_cost.resplit``). The bench table is read before (``advice/load.py``); the advice
from numbers is ``basis.from_numbers``.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pandas as pd

from gpuscale.advice.calibrate import family, fits, link, measured, rows
from gpuscale.advice.calibrate.basis import Basis, bench_assumed
from gpuscale.advice.calibrate.calibration import (
    BenchFieldError,
    CalibrationError,
    NamedCalibrationError,
    step_error,
    with_comm_scale,
    with_fixed,
)
from gpuscale.advice.explain import weak_first
from gpuscale.advice.model.hardware import bench_power, rate_warnings, unchecked_note
from gpuscale.advice.request import AdviceRequest
from gpuscale.tables.bench import most_host_devices
from gpuscale.tables.requests import NamedError


def from_bench(basis: Basis, req: AdviceRequest, bench: pd.DataFrame) -> Basis:
    """``basis`` with the model calibrated on the bench's runs of it, its measured
    overlap, power and noise scale, and the step's interval from leave-one-out. In a row,
    one module a step: the runs used, the calibration (on the bench host's link where
    it had one), what the runs say of the advice, the step's error and measured
    communication, the strategy and hardware read, the family, then the words."""
    # the runs: a broken model (its loss not finite) is used by nothing, --allow-flagged or
    # not: not advised on, not a family's representative, no contention measured on it
    rows.check_columns(bench)
    if req.model is not None:
        rows.known_model(bench, req.model, req.bench)
    where = "the bench results" if req.bench is None else Path(req.bench).name
    table, warning, broken = rows.usable_runs(bench, req.allow_flagged, req.model, where)
    try:
        cal = family.calibrated(table, req, basis.network)
        on_host = link.on_bench_host_link(basis, req, table, cal)
        if on_host is not basis:  # the bench host's link: its communication read on it
            basis, cal = on_host, family.calibrated(table, req, on_host.network)
    except CalibrationError as exc:
        more = f"{rows.flagged_help(table)}{rows.broken_note(broken)}"
        if not more:
            raise
        # the fields it names (``ref``) still said as the caller names them
        said = exc.text if isinstance(exc, NamedError | BenchFieldError) else str(exc)
        raise NamedCalibrationError(f"{said}{more}.") from None
    # what the runs say beside the calibration: the model chosen, its N > 1 runs
    params_given = req.params is not None
    note = "" if req.model or params_given else rows.why_this_model(bench, cal.name, broken)
    chosen = (
        "" if note or req.model else rows.models_benched(bench, None if params_given else cal.name)
    )
    same = rows.same_samples(bench, cal.name)
    like = (cal.config_group, cal.device_name, req.strategy)
    runs = tuple(rows.measured_runs(bench, cal.name, req.allow_flagged, like))
    host = most_host_devices(table)
    # the step's error and the communication measured, on the calibration as benched
    error = step_error(table, basis.network, cal)
    basis = replace(basis, network=with_comm_scale(basis.network, cal))
    benched = with_fixed(cal, req.fixed_ms) if req.fixed_ms is not None else cal
    if cal.device == "cpu":
        basis = link.cpu_processes(basis, req, table, cal)
    # the strategy: the other strategy's own work where one was asked
    fell = measured.falling(cal.compute.slowdown)
    asked = req.strategy or cal.strategy
    if req.strategy and req.strategy != cal.strategy:
        benched = replace(
            benched, compute=measured.for_strategy(benched.compute, cal.strategy, req.strategy)
        )
    other = measured.other_strategy(cal.name, cal.strategy, asked)
    one_device = None if params_given else measured.one_device(benched)
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
    # another strategy than benched: the member's own, converted (for_strategy)
    basis_of_family = (
        None
        if req.strategy and req.strategy != cal.strategy
        else family.fitted(table, benched, basis.network)
    )
    # the words: weak evidence, the batch beyond the one timed, the calibration's sources
    weak, weak_in_full, evidence = weak_first.weak_said(
        table[rows.on_hardware(table, cal)], cal.name, req.bench
    )
    if evidence is not None:  # the bench command of the advised run, on the file advised on
        evidence = replace(evidence, run=weak_first.run_options(table, cal, req))
    fixed_measure = weak_first.as_run(benched.fixed.measure, evidence, host)
    per_device = req.batch or cal.batch
    beyond = fits.far_beyond_the_batch_timed(cal, per_device)
    sources = fits.bench_sources(cal) + ([weak_in_full] if weak_in_full else [])
    if unchecked and cal.device != "cpu":  # a GPU without a peak: its rate not checked, said
        sources.append(unchecked)
    overlap = cal.overlap if req.overlap is None else req.overlap
    if overlap is None and cal.device == "cpu":
        overlap = 0.0  # gloo reduces on the cores backward uses
    bench_model = None if req.params else cal.name  # the model a bench run would measure
    assumed = bench_assumed(benched, req, overlap, bench_model, runs, host)
    warnings = (*basis.warnings, *(w for w in (warning, weak, fell) if w), *filter(None, [beyond]))
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
        same_samples=same,
        min_batch=max(1, per_device // 8),  # the fitted fixed cost prices small batches
        fixed=replace(benched.fixed, measure=fixed_measure),
        assumed=(*basis.assumed, *assumed),
        # a rate the bench measured is a finding however low; above the peak, impossible
        warnings=(*warnings, *impossible, *other),
        implausible=basis.implausible or bool(impossible),
        bench_model=None if params_given else cal.name,
        model_note=note,
        chosen=chosen,
        host_devices=host,
        one_device=one_device,
        strategy=cal.strategy,
        family=basis_of_family,
    )

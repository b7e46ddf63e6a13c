"""The advice from a bench file (:func:`from_bench`, one step of ``build.build``, as
``from_numbers.from_numbers`` is the other): the calibration advised on, on the bench
host's link, what the model's runs say, the step's error and the family's break-even
basis; then its terms as assumptions (measured, or assumed where the bench did not
measure).

The family's basis (:func:`fitted`, ``step.FamilyBasis``): every member of the advised
model's family benched in its configuration (device, backend, precision, TF32, threads,
strategy), unflagged, the latest run of each; None with fewer than two sizes.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pandas as pd

from gpuscale.advice import assumptions, remeasure
from gpuscale.advice.assumed import Assumption
from gpuscale.advice.calibrate import fits, model_runs
from gpuscale.advice.calibrate.calibration import advised, calibrate
from gpuscale.advice.calibrate.fixed_split import one_rank_own
from gpuscale.advice.calibrate.link import cpu_processes, on_bench_host_link
from gpuscale.advice.calibrate.rows import (
    HARDWARE_COLUMNS,
    BenchFieldError,
    CalibrationError,
    NamedCalibrationError,
    Usable,
    as_step_model,
    same_hardware,
)
from gpuscale.advice.calibration import Benched, Calibration, Machine, Run, Said, StepModel
from gpuscale.advice.explain.phrasebook import sentence
from gpuscale.advice.explain.runs import allowed_warning
from gpuscale.advice.measured_runs import Measured, trusted_runs
from gpuscale.advice.model.ceiling import ceiling
from gpuscale.advice.model.fixed_cost import line
from gpuscale.advice.model.hardware import rate_warnings, unchecked_note
from gpuscale.advice.model.network import Network
from gpuscale.advice.model.power import bench_power
from gpuscale.advice.model.priors import DDP_WORK, StepError, leave_one_out, with_own_runs
from gpuscale.advice.model.step import Compute, FamilyBasis, per_step_ms, step_of
from gpuscale.advice.request import AdviceRequest
from gpuscale.advice.types import Finding, Measure, Source, TermId


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
        left = found.left_out(req.model, req.family)  # the runs of what was asked
        if not left:
            raise
        raise NamedCalibrationError(exc.found, left) from None
    # on the link of the host it ran on; CPU processes capped at its cores
    machine, said = on_bench_host_link(machine, said, table, cal)
    if cal.bench.device_kind == "cpu":
        machine, said = cpu_processes(machine, said, req, table, cal)
    # what the runs say beside the calibration: the model chosen, its N > 1 runs
    params_given = req.params is not None
    per_device = req.batch or cal.run.batch  # as advised
    of_model = model_runs.of_model(bench, found, cal, req, per_device)
    runs, host_devices = of_model.runs.measured, of_model.runs.host_devices
    # the communication measured, read on the link advised, scales the network; the error
    cal, network = model_runs.read_comm(cal, table, machine.network)
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
    basis_of_family = None if req.strategy and req.strategy != strategy else fitted(table, benched)
    # the words, from the numbers: weak evidence and the batch beyond the one timed (read
    # with the model's runs), the calibration's sources, contention that fell, the strategy,
    # the terms as assumptions
    weak, weak_in_full, evidence = of_model.weak, of_model.weak_in_full, of_model.runs.evidence
    fixed, compute = benched.model.fixed, benched.model.compute
    fixed_measure = remeasure.as_run(fixed.measure, evidence, host_devices)
    sources: list[str | Finding] = [*fits.bench_sources(cal), *filter(None, [weak_in_full])]
    if unchecked and kind != "cpu":  # a GPU without a peak: its rate not checked, said
        sources.append(unchecked)
    fell = model_runs.falling(cal.model.compute.slowdown)
    # the step's terms as the bench measured them, or said as assumed: the fixed cost, the
    # overlap, the strategy and its own work (``calibration.for_strategy``'s rule), the wait
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
    allowed = allowed_warning(found.flags, found.allowed, found.broken)
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
        model_note=of_model.passed_over,
        chosen=of_model.others,
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


def _jitter(rows: pd.DataFrame) -> tuple[float, ...]:
    """Every member's N = 1 no-sync steps over their own mean, pooled (the wait's spread
    as a share of the step, ``Compute.jitter_ref_ms`` 1)."""
    pooled: list[float] = []
    for samples in rows["nosync_step_ms_samples"]:
        if isinstance(samples, tuple | list) and len(samples) > 1:
            mean = float(np.mean(samples))
            pooled += [float(s) / mean for s in samples if mean > 0]
    return tuple(pooled)


def fitted(table: pd.DataFrame, cal: Benched) -> FamilyBasis | None:
    """The family basis of ``cal``'s model from ``table``:
    its members' compute and the no-sync slowdown they measured (no link: the break-even
    prices the communication on the advice's own network)."""
    rows = as_step_model(table)
    rows = trusted_runs(rows)
    of = cal.bench
    own = rows[(rows["model"] == of.bench_model) & (rows["config_group"] == of.config_group)]
    if own.empty:
        return None
    like = own.iloc[-1]
    hardware = same_hardware(rows, like, (*HARDWARE_COLUMNS, "strategy"))
    single = hardware[(hardware["accelerators"] == 1) & (hardware["family"] == like["family"])]
    single = single.dropna(subset=["params", "flops_per_sample", "optimizer_ms"])
    single = single.groupby("model", sort=False).tail(1).sort_values("params")
    mparams = (single["params"] / 1e6).to_numpy(float)
    fit = fits.fit_compute(single)
    if len(np.unique(mparams)) < 2 or fit is None:
        return None
    fixed, tflops, _ = fit
    peak, _ = ceiling(
        like["device"], like.get("threads"), like.get("peak_tflops"), like.get("precision")
    )
    tflops = min(tflops, peak)
    opt = line(list(zip(mparams, single["optimizer_ms"].to_numpy(float), strict=True)))
    ddp_rows = single.dropna(subset=["ddp_overhead_ms"])
    ddp_x = (ddp_rows["params"] / 1e6).to_numpy(float)
    ddp = (
        line(list(zip(ddp_x, ddp_rows["ddp_overhead_ms"].to_numpy(float), strict=True)))
        if len(np.unique(ddp_x)) >= 2
        else (0.0, 0.0)
    )
    fb = single["forward_ms"] + single["backward_ms"]
    multi = hardware[hardware["accelerators"] > 1]
    family_multi = multi[multi["family"] == like["family"]]
    slowdown, _ = model_runs.slowdowns(
        hardware[hardware["accelerators"] == 1],
        (multi, family_multi, family_multi),
        str(like["family"]),
    )
    jitter = _jitter(single)
    compute = Compute(
        tflops=tflops,
        fixed_ms=fixed,
        backward_share=float((single["backward_ms"] / fb).median()),
        jitter_ms=jitter,
        jitter_ref_ms=float(bool(jitter)),  # 1: the spreads are shares of the step
        slowdown=tuple(sorted(slowdown.items())),
        # FSDP's own work one device without it does not do: the members' median
        one_rank_own_ms=float(np.median([one_rank_own(r) for _, r in single.iterrows()])),
    )
    return FamilyBasis(
        family=str(like["family"]),
        members=tuple(str(m) for m in single["model"]),
        flops_per_param=float((single["flops_per_sample"] / single["params"]).median()),
        compute=compute,
        opt_ms=opt,
        ddp_ms=ddp,
    )


def step_error(table: pd.DataFrame, network: Network, cal: Benched) -> StepError:
    """The 80% interval of the step at N > 1 from a bench file: leave-one-out over the
    bench's models with N > 1 rows of the configuration advised on (each calibrated on the
    others, ``priors.leave_one_out``), and ``cal``'s own N > 1 runs against it
    (``priors.with_own_runs``)."""

    def predict(rest: pd.DataFrame, model: str, ns: list[int]) -> list[float | None]:
        try:
            other, _ = model_runs.read_comm(calibrate(rest, model), rest, network)
        except (CalibrationError, ValueError):
            return [None] * len(ns)
        same_kind = other.bench.device_kind == cal.bench.device_kind
        if not same_kind or other.device.name != cal.device.name:
            return [None] * len(ns)
        return steps(other, ns)

    def steps(other: Benched, ns: list[int]) -> list[float | None]:
        run = other.run
        if run.overlap is None and other.bench.device_kind == "cpu":
            run = replace(run, overlap=0.0)  # as the advice itself does
        scaled = network.scaled(other.bench.comm_scale)
        model = other.model
        return [
            step_of(
                scaled, run, model.spec, model.compute, n, batch=run.batch, accum=run.accum
            ).step_ms
            for n in ns
        ]

    ok = trusted_runs(table)
    own = ok[(ok["config_group"] == cal.bench.config_group) & (ok["accelerators"] > 1)]
    own = own.dropna(subset=["step_ms_mean"])
    ns = [int(n) for n in own["accelerators"]]
    predicted = steps(cal, ns)  # the calibration advised on, not calibrated again
    measured = own["step_ms_mean"].astype(float).tolist()
    return with_own_runs(
        leave_one_out(table, network, predict), list(zip(measured, predicted, strict=True))
    )

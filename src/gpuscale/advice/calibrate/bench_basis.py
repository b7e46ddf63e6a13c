"""The calibration from a bench file (:func:`from_bench`, one step of ``build.build``, as
``from_numbers.from_numbers`` is the other): the model advised on, as benched and as asked
(``calibration.advised``), on the bench host's machine, with what the model's runs say,
its communication read on that machine, the step's error, the hardware, the family's
break-even basis, and what the bench measured of the step's terms (``BenchTerms``, said
as assumptions where ``build`` ends).
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pandas as pd

from gpuscale.advice import remeasure
from gpuscale.advice.assumed import BenchTerms
from gpuscale.advice.calibrate import fits, measured, model_runs
from gpuscale.advice.calibrate.calibration import calibrate
from gpuscale.advice.calibrate.measured import read_comm
from gpuscale.advice.calibrate.rows import CalibrationError, Usable
from gpuscale.advice.calibration import Benched, Calibration, Machine, Run, Said, StepModel
from gpuscale.advice.explain.runs import allowed_warning, chosen_said, weak_evidence
from gpuscale.advice.measured_runs import trusted_runs
from gpuscale.advice.model.hardware import bench_power, rate_warnings, unchecked_note
from gpuscale.advice.model.priors import (
    StepError,
    leave_one_out,
    phrase,
    strategy_name,
    with_own_runs,
)
from gpuscale.advice.model.step import per_step_ms, step_table
from gpuscale.advice.request import AdviceRequest
from gpuscale.advice.types import Finding
from gpuscale.bench.config import STRATEGIES as BENCHED
from gpuscale.interconnect.network import Network
from gpuscale.quantities import joined


def from_bench(
    machine: Machine,
    said: Said,
    req: AdviceRequest,
    bench: pd.DataFrame,
    found: Usable,
    calibrated: tuple[Benched, Benched],
) -> tuple[Calibration, BenchTerms]:
    """The calibration on ``machine`` (``said``: where it came from) of the model advised
    on, ``calibrated`` (as benched, as asked) from the runs ``found`` usable, and what the
    bench measured of the step's terms."""
    table, (cal, benched) = found.table, calibrated
    params_given = req.params is not None
    per_device = req.batch or cal.run.batch  # as advised
    benched_as = cal.run.strategy  # a warning where another strategy is predicted
    other = _other_strategy(cal.model.name, benched_as, req.strategy or benched_as)
    # what the runs say beside the calibration: the model chosen, its N > 1 runs
    of_model = model_runs.of_model(bench, found, (cal, benched), req, per_device)
    host_devices = of_model.runs.host_devices
    # the communication measured, read on the link advised, scales the network; the
    # contention that fell; the family's basis for its break-even (the same whichever
    # member is advised; another strategy than benched: the member's own, converted)
    cal, network = read_comm(cal, table, machine.network)
    fell = measured.falling(cal.model.compute.slowdown)
    strategy = cal.run.strategy
    basis_of_family = (
        None if req.strategy and req.strategy != strategy else measured.fitted(table, benched)
    )
    error = step_error(table, machine.network, cal)
    # as advised: the overlap (gloo reduces on the cores backward uses)
    measured_on, kind = cal.bench, cal.bench.device_kind
    overlap = cal.run.overlap if req.overlap is None else req.overlap
    if overlap is None and kind == "cpu":
        overlap = 0.0
    bench_model = None if params_given else cal.model.name  # a model a bench run measures
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
    fixed, compute = benched.model.fixed, benched.model.compute
    fixed_measure = remeasure.as_run(fixed.measure, of_model.runs.evidence, host_devices)
    # the words, from the numbers, in one place: the runs' own (the flagged runs let in and
    # the broken models --allow-flagged could not, weak runs, why this model where none was
    # asked), the calibration's sources
    allowed = None
    if req.allow_flagged:
        allowed = allowed_warning(found.flags, found.allowed, found.broken)
    weak, weak_in_full = weak_evidence(of_model.weak)
    passed_over, others = chosen_said(of_model.chosen)
    sources: list[str | Finding] = [*fits.bench_sources(cal), *filter(None, [weak_in_full])]
    if unchecked and kind != "cpu":  # a GPU without a peak: its rate not checked, said
        sources.append(unchecked)
    # the step's terms as the bench measured them: the overlap, the strategy's own work
    # (``calibration.as_asked``'s rule), the N = 1 steps' spread, the slowdowns held
    terms = BenchTerms(
        overlap_measured=cal.run.overlap is not None and req.overlap is None,
        own_ms=per_step_ms(compute.ddp_ms_per_mparam, benched.model.spec.params),
        spread=_spread(compute.jitter_ms, compute.jitter_ref_ms),
        held=compute.held_slowdown(),
    )
    warnings = (
        *said.warnings,
        *(w for w in (allowed, weak, fell) if w),
        *filter(None, [of_model.beyond]),
    )
    said = replace(
        said,
        sources=(*said.sources, *sources),
        # a rate the bench measured is a finding however low; above the peak, impossible
        warnings=(*warnings, *impossible, *other),
        implausible=said.implausible or bool(impossible),
        model_note=passed_over,
        chosen=others,
    )
    model = StepModel(
        name=cal.model.name,
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
    runs_of = replace(of_model.runs, own_model=bench_model)
    machine = replace(machine, network=network, power=power)
    calibration = Calibration(
        model=model, run=run, machine=machine, runs=runs_of, said=said, bench=measured_on
    )
    return calibration, terms


def _other_strategy(model: str, benched: str, asked: str) -> tuple[str, ...]:
    """A warning where the runs measured another strategy than the one predicted."""
    if benched == asked:
        return ()
    name = strategy_name(asked)
    added = phrase("assumed_other_added_ddp")
    if asked != "ddp":
        added = phrase("assumed_other_added", asked=name)
    settle = phrase("assumed_other_settle", asked=asked)
    if asked not in BENCHED:
        settle = phrase("assumed_other_unbenched", benched=joined(BENCHED, "or"), asked_name=name)
    said = {"model": model, "benched": benched, "asked": asked, "asked_name": name}
    return (phrase("assumed_other_strategy", added=added, settle=settle, **said),)


def _spread(jitter: tuple[float, ...], mean_ms: float) -> float | None:
    """The N = 1 steps' standard deviation (n - 1) over their mean; None under two."""
    if len(jitter) < 2 or not mean_ms > 0:
        return None
    return float(np.std(jitter, ddof=1)) / mean_ms


def step_error(table: pd.DataFrame, network: Network, cal: Benched) -> StepError:
    """The 80% interval of the step at N > 1 from a bench file: leave-one-out over the
    bench's models with N > 1 rows of the configuration advised on (each calibrated on the
    others, ``priors.leave_one_out``), and ``cal``'s own N > 1 runs against it
    (``priors.with_own_runs``)."""

    def predict(rest: pd.DataFrame, model: str, ns: list[int]) -> list[float | None]:
        try:
            other, _ = read_comm(calibrate(rest, model), rest, network)
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
        candidates = [(n, run.batch, run.accum) for n in ns]
        rows = step_table(scaled, run, model.spec, (model.compute,), candidates)
        return [row[0].step_ms for row in rows]

    ok = trusted_runs(table)
    own = ok[(ok["config_group"] == cal.bench.config_group) & (ok["accelerators"] > 1)]
    own = own.dropna(subset=["step_ms_mean"])
    ns = [int(n) for n in own["accelerators"]]
    predicted = steps(cal, ns)  # the calibration advised on, not calibrated again
    measured = own["step_ms_mean"].astype(float).tolist()
    return with_own_runs(leave_one_out(table, predict), list(zip(measured, predicted, strict=True)))

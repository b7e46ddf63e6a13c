"""The advice from a bench file: the model calibrated on the bench's runs of it
(:func:`from_bench`), one step of ``build.build``, as ``build.from_numbers`` is the other;
then its terms said, after the numbers, as ``advice/assumptions.py`` says them: the step's
terms as the bench measured them, or as assumed where it did not, the strategy's own work
by the strategy's rules, and the warning where the runs measured another strategy than the
one predicted.
"""

from __future__ import annotations

from dataclasses import replace

import pandas as pd

from gpuscale.advice import assumptions
from gpuscale.advice.assumptions import Assumption
from gpuscale.advice.calibrate import family, fits, measured, rows
from gpuscale.advice.calibrate.calibration import step_error
from gpuscale.advice.calibrate.rows import BenchFieldError, CalibrationError, NamedCalibrationError
from gpuscale.advice.inputs import Basis
from gpuscale.advice.model.hardware import bench_power, rate_warnings, unchecked_note
from gpuscale.advice.model.priors import DDP_WORK
from gpuscale.advice.model.step import per_step_ms
from gpuscale.advice.request import AdviceRequest
from gpuscale.advice.types import Measure, Measured, Source, TermId
from gpuscale.tables.requests import NamedError


def from_bench(basis: Basis, req: AdviceRequest, bench: pd.DataFrame) -> Basis:
    """``basis`` with the model calibrated on the bench's runs of it, its measured
    overlap, power and noise scale, and the step's interval from leave-one-out. In a row,
    one module a step: the runs used (``rows.usable``), the calibration as benched and as
    asked, on the link of the host it ran on (``family.on_bench_host``), what the runs say
    of that model (``measured.of_model``), its communication read on that link and the network
    scaled by it (``measured.read_comm``), the step's error, the hardware, the family;
    then the words, from those numbers."""
    # the runs: a broken model (its loss not finite) is used by nothing, --allow-flagged or
    # not: not advised on, not a family's representative, no contention measured on it
    found = rows.usable(bench, req)
    table = found.table
    try:  # as benched, and as asked (the strategy, the fixed cost entered); on the host's link
        cal, benched, basis = family.on_bench_host(table, req, basis)
    except BenchFieldError:  # a field refused (--fixed-ms), not the runs left out: as it is
        raise
    except CalibrationError as exc:
        more = found.left_out()
        if not more:
            raise
        # the fields it names (``ref``) still said as the caller names them
        said = exc.text if isinstance(exc, NamedError) else str(exc)
        raise NamedCalibrationError(f"{said}{more}.") from None
    # what the runs say beside the calibration: the model chosen, its N > 1 runs
    params_given = req.params is not None
    per_device = req.batch or cal.batch  # as advised
    of_model = measured.of_model(bench, found, cal, req, per_device)
    runs, host_devices = of_model.runs, of_model.host_devices
    # the communication measured, read on the link advised, scales the network; the step's
    # error as benched
    cal, network = measured.read_comm(cal, table, basis.network)
    error = step_error(table, basis.network, cal)
    basis = replace(basis, network=network)
    # as advised: the overlap (gloo reduces on the cores backward uses)
    overlap = cal.overlap if req.overlap is None else req.overlap
    if overlap is None and cal.device == "cpu":
        overlap = 0.0
    one_device = None if params_given else measured.one_device(benched)
    bench_model = None if params_given else cal.name  # the model a bench run would measure
    # the hardware: watts per device at each per-device batch; the rate against the peak
    precision = "bf16" if req.grad_bytes == 2 else "fp32"
    benched_on = cal.device_record  # the device the runs recorded, resolved with them
    power = bench_power(
        table,
        cal.bench_model,
        cal.config_group,
        device=cal.device,
        record=benched_on,
        given_w=req.power_w,
    )
    unchecked = unchecked_note(cal.compute.tflops, benched_on, precision, "the bench measured")
    impossible = rate_warnings(benched.compute.tflops, benched_on, precision, low=False)
    # the family's basis for its break-even (the same whichever member is advised);
    # another strategy than benched: the member's own, converted (as_asked)
    basis_of_family = (
        None if req.strategy and req.strategy != cal.strategy else family.fitted(table, benched)
    )
    # the words, from the numbers: weak evidence and the batch beyond the one timed (read
    # with the model's runs), the calibration's sources, contention that fell, the strategy,
    # the terms as assumptions
    weak, weak_in_full, evidence = of_model.weak, of_model.weak_in_full, of_model.evidence
    fixed_measure = assumptions.as_run(benched.fixed.measure, evidence, host_devices)
    sources = fits.bench_sources(cal) + ([weak_in_full] if weak_in_full else [])
    if unchecked and cal.device != "cpu":  # a GPU without a peak: its rate not checked, said
        sources.append(unchecked)
    fell = measured.falling(cal.compute.slowdown)
    # the step's terms as the bench measured them, or said as assumed: the fixed cost, the
    # overlap, the strategy and its own work (``calibration.for_strategy``'s rule), the wait
    asked = req.strategy or cal.strategy
    other = assumptions.other_strategy(cal.name, cal.strategy, asked)
    fixed, compute = benched.fixed, benched.compute
    span = f" ({fixed.low_ms:.3g}-{fixed.high_ms:.3g} ms)" if fixed.uncertain else ""
    own_ms = per_step_ms(compute.ddp_ms_per_mparam, benched.model.params)
    assumed = (
        Assumption(
            term=TermId.FIXED,
            value=f"{fixed.ms:.3g} ms{span}",
            source=fixed.source,
            basis=fixed.basis,
            measure=Measure() if fixed.source == Source.MEASURED else fixed.measure,
        ),
        assumptions.overlap(
            overlap,
            measured=cal.overlap is not None and req.overlap is None,
            given=req.overlap is not None,
            model=bench_model,
            unmeasured=_overlap_unmeasured(runs),
            host_devices=host_devices,
        ),
        *assumptions.strategy_taken(cal.name, cal.strategy, req.strategy),
        assumptions.own_work(
            own_ms, cal.strategy, asked, bench_model, (DDP_WORK.point, DDP_WORK.source)
        ),
        assumptions.wait(
            dict(compute.slowdown),
            bool(compute.jitter_ms),
            model=bench_model,
            held=dict(compute.held_slowdown()),
            host_devices=host_devices,
        ),
    )
    warnings = (
        *basis.warnings,
        *(w for w in (found.warning, weak, fell) if w),
        *filter(None, [of_model.beyond]),
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
        host_devices=host_devices,
        one_device=one_device,
        strategy=cal.strategy,
        family=basis_of_family,
    )


def _overlap_unmeasured(measured: tuple[Measured, ...]) -> str:
    """Why the bench did not measure the overlap: its multi-device run of the model is
    flagged (left out), timed no communication, or there is none."""
    left_out = [m.devices for m in measured if m.flagged and not m.allowed]
    if left_out:
        return (
            f"the run on {left_out[0]} devices exists but is flagged (reasons in the bench "
            "table), so it was not used"
        )
    if measured:
        return "the multi-device run timed no communication"
    return "no multi-device run"

"""The advice from a bench file: the model calibrated on the bench's runs of it
(:func:`from_bench`), one step of ``build.build``, as ``build.from_numbers`` is the other;
then its terms said, after the numbers: the step's terms as the bench measured them, or as
assumed where it did not (:func:`bench_assumed`), the strategy's own work by the strategy's
rules (:func:`strategy_taken`, :func:`own_work`), and the warning where the runs measured
another strategy than the one predicted (:func:`other_strategy`).
"""

from __future__ import annotations

from dataclasses import replace

import pandas as pd

from gpuscale.advice import assumptions
from gpuscale.advice.assumptions import Assumption
from gpuscale.advice.calibrate import family, fits, host, measured, rows
from gpuscale.advice.calibrate.calibration import (
    BenchFieldError,
    Calibration,
    CalibrationError,
    NamedCalibrationError,
    step_error,
)
from gpuscale.advice.explain import weak_first
from gpuscale.advice.inputs import Basis
from gpuscale.advice.model.hardware import bench_power, rate_warnings, unchecked_note
from gpuscale.advice.model.priors import DDP_WORK
from gpuscale.advice.model.step import per_step_ms
from gpuscale.advice.request import AdviceRequest
from gpuscale.advice.types import Measure, Measured, Source, TermId, words
from gpuscale.tables.requests import NamedError


def from_bench(basis: Basis, req: AdviceRequest, bench: pd.DataFrame) -> Basis:
    """``basis`` with the model calibrated on the bench's runs of it, its measured
    overlap, power and noise scale, and the step's interval from leave-one-out. In a row,
    one module a step: the runs used (``rows.usable``), the calibration as benched and as
    asked, on the link of the host it ran on (``family.on_bench_host``), what the runs say
    of that model (``host.of_model``), its communication read on that link and the network
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
    of_model = host.of_model(bench, found, cal, req)
    runs, host_devices = of_model.runs, of_model.host_devices
    # the communication measured, read on the link advised, scales the network; the step's
    # error as benched
    cal, network = measured.read_comm(cal, table, basis.network)
    error = step_error(table, basis.network, cal)
    basis = replace(basis, network=network)
    # as advised: the per-device batch and the overlap (gloo reduces on the cores backward
    # uses)
    per_device = req.batch or cal.batch
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
    # the words, from the numbers: weak evidence, the batch beyond the one timed, the
    # calibration's sources, contention that fell, the strategy, the terms as assumptions
    weak, weak_in_full, evidence = weak_first.weak_said(
        table[rows.on_hardware(table, cal)], cal.name, req.bench
    )
    if evidence is not None:  # the bench command of the advised run, on the file advised on
        evidence = replace(evidence, run=weak_first.run_options(table, cal, req))
    fixed_measure = assumptions.as_run(benched.fixed.measure, evidence, host_devices)
    beyond = weak_first.far_beyond_the_batch_timed(cal, per_device)
    sources = fits.bench_sources(cal) + ([weak_in_full] if weak_in_full else [])
    if unchecked and cal.device != "cpu":  # a GPU without a peak: its rate not checked, said
        sources.append(unchecked)
    fell = measured.falling(cal.compute.slowdown)
    other = other_strategy(cal.name, cal.strategy, req.strategy or cal.strategy)
    assumed = bench_assumed(benched, req, overlap, bench_model, runs, host_devices)
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
        host_devices=host_devices,
        one_device=one_device,
        strategy=cal.strategy,
        family=basis_of_family,
    )


def bench_assumed(
    cal: Calibration,
    req: AdviceRequest,
    overlap: float | None,
    model: str | None,
    measured: tuple[Measured, ...],
    host_devices: int | None,
) -> list[Assumption]:
    """The step's terms as the bench measured them, or said as assumed (``model``: the
    bench model that measures them, None for a model given by its numbers; on a host of
    ``host_devices`` GPUs)."""
    fixed = cal.fixed
    span = f" ({fixed.low_ms:.3g}-{fixed.high_ms:.3g} ms)" if fixed.uncertain else ""
    compute = cal.compute
    # the strategy's terms, by this module's rules, then the terms said as assumptions.py
    # says them
    taken = strategy_taken(cal.name, cal.strategy, req.strategy)
    own = own_work(
        compute.ddp_ms_per_mparam,
        cal.model.params,
        cal.strategy,
        req.strategy or cal.strategy,
        model,
    )
    return [
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
            model=model,
            unmeasured=_overlap_unmeasured(measured),
            host_devices=host_devices,
        ),
        *taken,
        own,
        assumptions.wait(
            dict(compute.slowdown),
            bool(compute.jitter_ms),
            model=model,
            held=dict(compute.held_slowdown()),
            host_devices=host_devices,
        ),
    ]


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


def strategy_taken(model: str, benched: str, asked: str | None) -> tuple[Assumption, ...]:
    """The strategy predicted where none was asked for: the one ``model`` was benched
    with, said with the option that predicts the other (a walk: tf-30m benched with FSDP
    was predicted as DDP by default, the report with no way to ask otherwise)."""
    if asked is not None:
        return ()
    other = "ddp" if benched == "fsdp" else "fsdp"
    return (
        Assumption(
            term=TermId.STRATEGY,
            value=benched.upper(),
            source=Source.MEASURED,
            basis=f"{model} was benched with --strategy {benched}, and this predicts what was "
            f"benched; --strategy {other} predicts {other.upper()}",
        ),
    )


def own_work(
    ms_per_mparam: float, params: float, benched: str, asked: str, model: str | None
) -> Assumption:
    """The strategy's own work, by ``calibration.for_strategy``'s rule: measured where the runs
    were the strategy predicted, else DDP's from its prior or FSDP's unmeasured."""
    command = words(f"gpuscale bench --models {model or 'MODEL'} --strategy {asked} --nproc 1")
    if benched == asked == "ddp":
        return assumptions.ddp_overhead(
            per_step_ms(ms_per_mparam, params), measured=True, model=model
        )
    if asked == "fsdp" and benched == "fsdp":
        return _fsdp_work(
            "in the fixed per-step cost",
            Source.MEASURED,
            "FSDP's synchronised minus no-sync step at N = 1, or its step less its plain "
            "one where that is larger (the calibration note gives the numbers); not "
            "spread over the devices' smaller batches",
        )
    if asked == "fsdp":
        return _fsdp_work(
            "0 ms per step",
            Source.ASSUMED,
            "the runs were DDP's, which measure none of FSDP's; the steps price the "
            "bare module's compute (DDP's own work measured left out) and FSDP's "
            "communication",
            command,
        )
    return Assumption(
        term=TermId.DDP,
        value=f"{per_step_ms(ms_per_mparam, params):.3g} ms per step",
        source=Source.ASSUMED,
        basis=f"prior: {DDP_WORK.point:g} ms per million parameters, the median of "
        f"{DDP_WORK.source}; the runs were FSDP's, which measure no DDP copies",
        measure=command,
    )


def _fsdp_work(
    value: str, source: Source, basis: str, measure: Measure | None = None
) -> Assumption:
    """FSDP's own work as an assumption (``TermId.DDP``: the strategy's own work)."""
    return Assumption(
        term=TermId.DDP,
        strategy="fsdp",
        value=value,
        source=source,
        basis=basis,
        measure=measure or Measure(),
    )


def other_strategy(model: str, benched: str, asked: str) -> tuple[str, ...]:
    """A warning where the runs measured another strategy than the one predicted (a
    walk: tf-30m benched with FSDP was advised as DDP without a word, its FSDP
    synchronised-minus-no-sync gap charged as "DDP's own copies")."""
    if benched == asked:
        return ()
    added = (
        "DDP's own work from its prior (assumed)"
        if asked == "ddp"
        else "no own work of FSDP's (unmeasured, taken as 0)"
    )
    return (
        f"STRATEGY: {model} was benched with --strategy {benched}; this advice predicts "
        f"{asked} (--strategy {asked}) from the bare module's compute its runs measured, "
        f"{benched}'s own work left out, plus {asked.upper()}'s communication and {added}: "
        f"give --strategy {benched} to predict what was benched, or bench with "
        f"--strategy {asked} to measure it.",
    )

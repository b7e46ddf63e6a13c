"""A bench model's fixed per-step cost where data fix it (:func:`split`, from its N = 1 run;
``model/fixed_cost.py``: the line, the prior): measured where the bench timed two batches
(the plain step's intercept less the optimizer), checked against the device's peak; FSDP's
own work at N = 1; fitted from its family's (else its configuration's) rate; else assumed
(:func:`unmeasured`): on a GPU the device prior less the optimizer step, at most the step
less its work at the peak; on a CPU none (the GPU's prior is kernel launches)."""

from __future__ import annotations

from dataclasses import replace

import pandas as pd

from gpuscale.advice.calibrate.rows import cell
from gpuscale.advice.explain.caveats import fsdp_own_basis
from gpuscale.advice.explain.phrasebook import sentence
from gpuscale.advice.model.compute import ModelSpec, work_ms
from gpuscale.advice.model.fixed_cost import GPU_PRIOR, FixedCost, Split, prior, within_peak
from gpuscale.advice.model.hardware import ceiling
from gpuscale.advice.types import BenchRun, Measure, Source
from gpuscale.tables.bench_runs import bench_options


def split(row: pd.Series, model: ModelSpec, fitted: tuple[float, float] | None) -> Split:
    """The fixed cost of ``row``'s forward and backward (its N = 1 run) and the split of the
    step it gives (``fitted``: ``fits.fit_compute`` over its family's N = 1 runs)."""
    fb = float(row["forward_ms"] + row["backward_ms"])
    batch = float(row["batch_per_device"])
    work_ms_per_tflop = work_ms(batch, model.flops, 1.0)
    measured = _own_fixed(row, fb)
    own = measured  # FSDP's own work at N = 1, fixed per step, where more than that
    gap = cell(row, "fsdp_overhead_ms", float, 0.0)
    if row["strategy"] == "fsdp" and gap > 0:
        accum = cell(row, "accum", int, 1)
        ms = min(gap / max(accum, 1), fb * (1 - 1e-6))  # per micro-step, as fixed_ms
        if measured is None or measured.ms < ms:
            own = FixedCost.exact(
                ms,
                source=Source.MEASURED,
                basis=sentence("fsdp_own_work", basis=fsdp_own_basis(row)),
                at_batch=batch,
            )
    if measured is None and own is not None:  # FSDP's gap measured, not the rest: assumed
        rest = unmeasured(row, max(fb - own.ms, 1e-9), model.flops)
        if rest.high_ms > 0:
            own = replace(
                rest,
                ms=own.ms + rest.ms,
                low_ms=own.low_ms + rest.low_ms,
                high_ms=own.high_ms + rest.high_ms,
                basis=sentence(
                    "with_unmeasured",
                    part=own.ms,
                    source=own.source,
                    basis=own.basis,
                    rest=rest.ms,
                    rest_low=rest.low_ms,
                    rest_high=rest.high_ms,
                    rest_basis=rest.basis,
                ),
            )
    small = cell(row, "small_batch_step_ms_mean", float)
    peak, found = ceiling(row.get("device"), row.get("threads"), row.get("peak_tflops"))
    if own is not None and small is not None:  # ``within_peak`` on the row's plain steps
        checked = within_peak(
            own,
            fb_ms=fb,
            batch=batch,
            flops_per_sample=model.flops,
            peak_tflops=float(peak),
            plain_ms=(
                (float(row["small_batch_per_device"]), small),
                (batch, float(row["plain_step_ms_mean"])),
            ),
            ceiling=found,
        )
        if checked is not None:
            return replace(
                checked, note=sentence("model_note", model=row["model"], note=checked.note)
            )
    if own is not None:  # an FSDP gap with the prior added is assumed, not measured
        said = sentence("fixed_measured_for", ms=own.ms, source=own.source, model=row["model"])
    elif fitted is not None:  # the family's rate, no faster than the device can go
        tflops = min(fitted[1], peak)
        fixed = fb - work_ms_per_tflop / tflops  # absorbs the model's own measured step
        if fixed < 0:  # faster than the family: all of the step is work at its own rate
            fixed, tflops = 0.0, work_ms_per_tflop / fb
        cost = FixedCost.exact(
            fixed,
            source=Source.FITTED,
            basis=sentence("family_rate", family=row["family"]),
            at_batch=batch,
            measure=measure_command(row),
        )
        said = sentence(
            "family_split", tflops=tflops, family=row["family"], fixed=fixed, model=row["model"]
        )
        return Split(cost, fixed, tflops, 0.0, said)
    else:  # one batch of one model: the device prior, its range in the interval
        own = unmeasured(row, fb, model.flops)
        said = sentence("one_batch", work=own.ms == 0, ms=own.ms)
    return Split(own, own.ms, work_ms_per_tflop / max(fb - own.ms, 1e-9), 0.0, said)


def _own_fixed(row: pd.Series, fb_ms: float) -> FixedCost | None:
    """The fixed cost the bench measured (two batches at N = 1) less the optimizer's time;
    None without it."""
    point = cell(row, "fixed_ms", float)
    if point is None:
        return None
    opt = float(row["optimizer_ms"])

    def ms(value: float) -> float:
        return min(max(float(value) - opt, 0.0), fb_ms * (1 - 1e-6))

    low = ms(cell(row, "fixed_ms_low", float, point))
    high = ms(cell(row, "fixed_ms_high", float, point))
    return FixedCost(
        ms=min(max(ms(point), low), high),
        low_ms=low,
        high_ms=high,
        source=Source.MEASURED,
        basis=sentence(
            "plain_steps_intercept",
            small=int(row["small_batch_per_device"]),
            batch=int(row["batch_per_device"]),
        ),
        at_batch=float(row["batch_per_device"]),
    )


def measure_command(row: pd.Series) -> Measure:
    """The bench run that measures ``row``'s fixed cost: its N = 1 run in its own
    configuration, timed at its batch and a quarter of it."""
    batch = int(row["batch_per_device"])
    config = bench_options(row, model=False)  # the run's own configuration
    quarter = batch // 4 if batch >= 4 else batch // 2
    return Measure(
        bench=BenchRun(str(row["model"]), (1,), config=config),
        after=sentence("bench_times_bare", batch=batch, quarter=quarter),
    )


def unmeasured(row: pd.Series, fb_ms: float, flops_per_sample: float) -> FixedCost:
    """The fixed cost of ``row``'s forward and backward (``fb_ms``) where nothing measured
    it."""
    batch = float(row["batch_per_device"])
    measure = measure_command(row)
    if row.get("device") == "cpu":
        return FixedCost.exact(
            0.0,
            source=Source.ASSUMED,
            basis=sentence("cpu_no_prior", low=GPU_PRIOR.low, high=GPU_PRIOR.high),
            at_batch=batch,
            measure=measure,
        )
    opt = cell(row, "optimizer_ms", float, 0.0)
    base = replace(
        GPU_PRIOR,
        **{end: max(GPU_PRIOR.at(end) - opt, 0.0) for end in ("low", "point", "high")},
        said=sentence("prior_less_optimizer", why=GPU_PRIOR.said, opt=opt),
    )
    peak = cell(row, "peak_tflops", float, 0.0)
    at_peak = work_ms(batch, flops_per_sample, peak) if peak > 0 else None
    found = prior(fb_ms, batch, work_at_peak_ms=at_peak, measure=measure, base=base)
    if at_peak is None:
        bound = sentence("no_peak_unbounded")
    elif found.high_ms < base.at("high"):
        bound = sentence(
            "peak_bound",
            high=found.high_ms,
            fb=fb_ms,
            batch=batch,
            at_peak=at_peak,
            peak=peak,
        )
    else:
        bound = None
    basis = sentence("unmeasured_fixed", basis=found.basis, bound=bound, batch=batch)
    return replace(found, basis=basis, below_prior_ms=None)


def one_rank_own(row: pd.Series) -> float:
    """Of each micro-step of an FSDP row's N = 1 step, what the bare module's step did not
    do (0 for another strategy, or where the plain step is no faster)."""
    plain = cell(row, "plain_step_ms_mean", float)
    if row["strategy"] != "fsdp" or plain is None or not plain > 0:
        return 0.0
    whole = float(row["forward_ms"] + row["backward_ms"] + row["optimizer_ms"])
    return max(0.0, whole - plain)

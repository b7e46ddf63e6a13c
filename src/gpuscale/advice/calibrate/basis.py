"""What the advice rests on (:class:`Basis`), and the advice from numbers: a model given
by its parameters and one device's step time at one batch or more (``from_numbers``).

From numbers, the step is split into a fixed per-step cost and per-sample work
(``advice/model/fixed_cost.py``): entered (``--step-ms`` at two batches, or ``--fixed-ms``),
else the device-level prior narrowed by the step itself. Everything the numbers do not
say (overlap, DDP's own work, the wait for the slowest device) is assumed and said, with
the command that would measure it (``advice/assumptions.py``).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from gpuscale.advice import assumptions
from gpuscale.advice.assumptions import Assumption, bench_run
from gpuscale.advice.calibrate.measured import own_work, strategy_taken
from gpuscale.advice.inputs import OneDevice
from gpuscale.advice.model import fixed_cost, peak_bound, priors
from gpuscale.advice.model.fixed_cost import FixedCost
from gpuscale.advice.model.hardware import (
    Power,
    device_power,
    implied_device,
    rate_warnings,
    unchecked_note,
)
from gpuscale.advice.model.network import Network
from gpuscale.advice.model.priors import StepError
from gpuscale.advice.model.step import Compute, FamilyBasis, ModelSpec, rate_tflops, work_ms
from gpuscale.advice.request import AdviceRequest
from gpuscale.advice.types import BENCH, End, Measure, Measured, Source, TermId, words
from gpuscale.analysis.critical_batch import NoiseScale
from gpuscale.bench.support import Support
from gpuscale.hardware.peaks import Peak, peak_for
from gpuscale.quantities import format_count, format_ms, number

# The link assumed where none is given, detected or measured.
DEFAULT_LINK = "pcie-phb"


@dataclass(frozen=True, slots=True)
class Basis:
    """What the advice rests on: the network, the model and its rate per device, and
    where each came from (``sources``, ``warnings``, ``assumed``). A value: each step
    (``network_basis``, then ``from_numbers`` or ``from_bench.from_bench``) returns a new
    one."""

    network: Network
    max_devices: int
    sources: tuple[str, ...]
    warnings: tuple[str, ...] = ()
    spec: ModelSpec | None = None
    compute: Compute | None = None
    per_device: int = 0
    accum: int = 1  # micro-steps per optimizer step of the run advised on (bench)
    min_batch: int = 1
    max_batch: int | None = None  # the largest per-device batch that fits (None: per_device)
    overlap: float | None = None
    power: Power | None = None
    noise: NoiseScale | None = None
    name: str = ""
    error: StepError = field(default_factory=StepError)
    link_assumed: bool = False  # no link given, detected or measured: the default link
    link_detected: str | None = None  # the link is this machine's detected topology's preset
    fixed: FixedCost | None = None
    prior_range: tuple[Compute, ...] = ()  # the compute at the priors' low and high ends
    assumed: tuple[Assumption, ...] = ()
    same_samples: bool = False  # the bench's N > 1 runs saw the same samples per rank
    measured: tuple[Measured, ...] = ()  # the model's N > 1 runs
    bench_model: str | None = None  # the bench model whose runs measure a term (None: numbers)
    host_devices: int | None = None  # the GPUs the bench's host had (None: unknown, or a CPU)
    model_note: str = ""  # the bench model advised on where larger ones were passed over, why
    chosen: str = ""  # which benched model was advised on, said after the decision
    ends: tuple[End, ...] = ()  # the terms at each end of an assumed term's range
    evidence: Support | None = None  # what the bench runs advised on rest on (None: numbers)
    one_device: OneDevice | None = None  # the bench's N = 1 run of the model advised on
    strategy: str | None = None  # the strategy the bench measured the model with (None: numbers)
    family: FamilyBasis | None = None  # its family's break-even basis (None: the model alone)
    implausible: bool = False  # an input cannot be true (an IMPLAUSIBLE warning among them)


# What measures the fixed cost of a model given by numbers.
MEASURE_FIXED = words(
    "the step at a second batch (`--step-ms T --batch B` again, e.g. at half the batch), "
    f"or `{BENCH} --nproc 1` (times two batches at N = 1)"
)


def from_numbers(basis: Basis, req: AdviceRequest) -> Basis:
    """``basis`` with the model of the numbers given: the first (batch, step) pair is
    the configuration advised on, split into fixed cost and per-sample work."""
    points = req.step_points
    per_device, step_ms = points[0]
    spec = ModelSpec(
        params=float(req.params),
        flops_per_sample=req.flops_per_sample,
        grad_bytes_per_param=req.grad_bytes,
    )
    link = basis.network.intra.name
    device = req.device_name or implied_device(link)
    precision = "bf16" if req.grad_bytes == 2 else "fp32"
    peak = peak_for(device)  # the device's catalogue peaks, read once
    # the fastest the step's work could run (TFLOP/s; None: no peak): fp32 under PyTorch's
    # defaults runs convolutions in TF32, so the TF32 peak bounds it (the fp32 peak left
    # no room for a fixed cost in a ResNet-50 step that is plainly possible on an A100)
    fastest = peak.tflops(precision, tf32="on") if peak else None
    whole = rate_tflops(per_device, spec.flops, step_ms)  # TFLOP/s of the whole step
    fixed = _fixed(req, points, spec, fastest)
    bound = _bound_note(req, fixed, spec, (peak, fastest, precision), device, link)
    compute, prior_range = _split(spec, per_device, whole, fixed)
    flops = "the FLOPs given" if req.flops_per_sample else "6 x parameters FLOPs per sample"
    source = (
        f"Compute: {format_ms(step_ms)} per step of {per_device:,} samples -> "
        f"{number(whole)} TFLOP/s over the whole step at {flops}; of it "
        f"{format_ms(fixed.ms, step_ms)} fixed per step ({fixed.source}) and "
        f"{format_ms(step_ms - compute.fixed_ms, step_ms)} of per-sample work."
    )
    if fixed.source == Source.ASSUMED and req.flops_per_sample is None:  # the rate rests on 6 x
        # parameters, a lower bound of the work: only a rate above the peak is impossible
        # (a low one's two readings: ``peak_bound.flops_reading``, priced by ``_ends``)
        warnings = rate_warnings(whole, device, precision, low=False)
    elif fixed.source == Source.ASSUMED:  # one step time: the whole step's rate is all we know
        low = f"or nearly all of the step is a fixed per-step cost (taken as {format_ms(fixed.ms)})"
        warnings = rate_warnings(whole, device, precision, low_note=low)
    else:  # the fixed cost measured or entered: a low per-sample rate is a small model's
        # (kernels too short to fill the device: the published study's own), one above the
        # peak cannot be
        warnings = rate_warnings(compute.tflops, device, precision, low=False)
    # a device named without a known peak: the check above could not be made, said
    assumed = fixed.source == Source.ASSUMED
    unchecked = unchecked_note(
        whole if assumed else compute.tflops,
        device,
        precision,
        "the inputs imply over the whole step" if assumed else "the inputs imply",
    )
    return replace(
        basis,
        spec=spec,
        per_device=per_device,
        fixed=fixed,
        compute=compute,
        prior_range=prior_range,
        error=priors.ERROR,
        min_batch=max(1, per_device // 8),  # the fixed cost prices smaller batches
        overlap=req.overlap,
        power=_power(req, device, basis.network.intra.name),
        sources=(*basis.sources, source, *filter(None, [bound, unchecked])),
        warnings=(*basis.warnings, *warnings),
        implausible=basis.implausible or bool(warnings),  # every rate warning is one
        name=f"a {format_count(spec.params)}-parameter model",
        assumed=(*basis.assumed, *_assumed(req, fixed, spec)),
        ends=_ends(req, spec, fastest, whole, fixed),
    )


def _split(
    spec: ModelSpec, per_device: int, whole_tflops: float, fixed: FixedCost
) -> tuple[Compute, tuple[Compute, ...]]:
    """The compute of a step given by numbers split at ``fixed`` (the measured step kept),
    with DDP's work and the slowest device's wait from their priors (``advice/model/priors.py``:
    their range carried into the interval in place of the unmeasured +/-35%), and the
    compute at the priors' low and high ends."""
    split = fixed_cost.resplit(Compute(tflops=whole_tflops), spec, per_device, fixed.ms)
    return priors.with_priors(split, spec, per_device, "point"), tuple(
        priors.with_priors(split, spec, per_device, end) for end in ("low", "high")
    )


def _ends(
    req: AdviceRequest,
    spec: ModelSpec,
    fastest: float | None,
    whole: float,
    fixed: FixedCost,
) -> tuple[End, ...]:
    """The step's terms at each end of the range of an assumed term of a model given by
    numbers, as (term, end, its value there, unit, the terms there): the FLOPs per sample
    not given, at 6 x parameters (a transformer's; then the step at under 1% of the
    device's peak leaves the rest of it a fixed cost), and a fixed cost nothing measured
    at its prior's ends. ``fastest``: the device's peak that bounds the work (TFLOP/s,
    None: unknown); ``whole``: the whole step's TFLOP/s."""
    if fixed.source != Source.ASSUMED:
        return ()
    points = req.step_points
    per_device = points[0][0]

    def at(cost: FixedCost) -> dict[str, object]:
        compute, prior_range = _split(spec, per_device, whole, cost)
        return {"fixed": cost, "compute": compute, "prior_range": prior_range}

    ends: list[End] = []
    if req.flops_per_sample is None:
        dense = _fixed(req, points, spec, fastest, floor_from_peak=True)
        if dense.ms > fixed.high_ms:
            ends.append(("flops_per_sample", "low", spec.flops, "FLOPs", at(dense)))
    for end, ms in (("low", fixed.low_ms), ("high", fixed.high_ms)):
        if ms != fixed.ms:
            ends.append(("fixed_cost", end, ms, "ms", at(replace(fixed, ms=ms))))
    return tuple(ends)


def _power(req: AdviceRequest, device: str | None, link: str) -> Power:
    """The power per device of the device named, else of the one the link implies (as
    the rate check reads it: ``nvlink4``, an H100 SXM), said so."""
    power = device_power(None, device, given_w=req.power_w)
    if req.device_name is None and req.power_w is None and power.watts is not None:
        said = f"{power.source}, the device the link {link} implies (--device-name to name it)"
        return replace(power, source=said)
    return power


def _fixed(
    req: AdviceRequest,
    points: tuple[tuple[int, float], ...],
    spec: ModelSpec,
    fastest: float | None,
    floor_from_peak: bool | None = None,
) -> FixedCost:
    """The fixed cost: entered as such, from two step times, else the prior narrowed by
    the step (the device's peak, ``fastest`` TFLOP/s, bounds the per-sample work from
    below and, at 1% of it, from above: only with FLOPs per sample given, or
    ``floor_from_peak``)."""
    per_device, step_ms = points[0]
    if req.fixed_ms is not None:
        return fixed_cost.given(min(req.fixed_ms, step_ms), per_device)
    if len(points) > 1:
        return fixed_cost.entered(points)
    at_peak = work_ms(per_device, spec.flops, fastest) if fastest else None
    floor = req.flops_per_sample is not None if floor_from_peak is None else floor_from_peak
    return fixed_cost.prior(
        step_ms, per_device, work_at_peak_ms=at_peak, measure=MEASURE_FIXED, floor_from_peak=floor
    )


def _bound_note(
    req: AdviceRequest,
    fixed: FixedCost,
    spec: ModelSpec,
    at_peak: tuple[Peak | None, float | None, str],
    device: str | None,
    link: str,
) -> str:
    """Why an assumed fixed cost is what it is: the device's peak bounded it (said with
    the peak and the FLOPs it rests on), or no peak did (the prior's alone). ``at_peak``:
    the device's peaks, the one that bounds the work (TFLOP/s) and the precision."""
    peak, fastest, precision = at_peak
    if peak is None or fastest is None:
        return peak_bound.unbounded(fixed, device, link, MEASURE_FIXED)
    per_device, step_ms = req.step_points[0]
    at = peak_bound.AtPeak(
        peak=peak,
        peak_tflops=fastest,
        precision=precision,
        step_ms=step_ms,
        batch=per_device,
        flops_per_sample=spec.flops,
    )
    return peak_bound.bounded(
        fixed,
        at,
        flops_given=req.flops_per_sample is not None,
        implied_by=None if req.device_name else link,
        measure=MEASURE_FIXED,
    )


def _assumed(req: AdviceRequest, fixed: FixedCost, spec: ModelSpec) -> list[Assumption]:
    """What numbers leave unmeasured: every N > 1 term."""
    return [
        Assumption(
            term=TermId.FIXED,
            value=format_ms(fixed.ms, fixed.high_ms)
            + (
                f" ({format_ms(fixed.low_ms, fixed.high_ms)}-{format_ms(fixed.high_ms)})"
                if fixed.uncertain
                else ""
            ),
            source=fixed.source,
            basis=fixed.basis,
            measure=fixed.measure,
        ),
        assumptions.overlap(req.overlap, measured=False, given=req.overlap is not None, model=None),
        priors.assumption(priors.DDP_WORK, "ms per million parameters", bench_run(None, (1,))),
        priors.assumption(
            priors.STEP_SPREAD, "coefficient of variation of the step", bench_run(None, (1, 2))
        ),
    ]


def bench_assumed(
    cal: Any,
    req: AdviceRequest,
    overlap: float | None,
    model: str | None,
    measured: tuple[Measured, ...],
    host_devices: int | None,
) -> list:
    """The step's terms as the bench measured them, or said as assumed (``model``: the
    bench model that measures them, None for a model given by its numbers; on a host of
    ``host_devices`` GPUs)."""
    fixed = cal.fixed
    span = f" ({fixed.low_ms:.3g}-{fixed.high_ms:.3g} ms)" if fixed.uncertain else ""
    compute = cal.compute
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
        *strategy_taken(cal.name, cal.strategy, req.strategy),
        own_work(
            compute.ddp_ms_per_mparam,
            cal.model.params,
            cal.strategy,
            req.strategy or cal.strategy,
            model,
        ),
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

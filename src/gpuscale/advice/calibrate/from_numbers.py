"""A model given by its numbers (:func:`from_numbers`, one step of ``build.build``, as
``bench_basis.from_bench`` is the other): the step is split into a fixed per-step cost and
per-sample work (``step_split.by_numbers``); what numbers do not say (overlap, DDP's own
work, the wait) is assumed and said with the command that measures it."""

from __future__ import annotations

from dataclasses import replace

from gpuscale.advice.assumed import Assumption, Quantity
from gpuscale.advice.assumptions import PER_STEP
from gpuscale.advice.calibrate import fixed_split
from gpuscale.advice.calibrate.shape import shape_findings
from gpuscale.advice.calibrate.step_split import by_numbers
from gpuscale.advice.calibration import Calibration, Machine, Run, Said, Search, StepModel
from gpuscale.advice.explain.phrasebook import sentence
from gpuscale.advice.model import hardware, priors
from gpuscale.advice.model.hardware import DeviceRecord, device_power, rate_warnings, unchecked_note
from gpuscale.advice.model.network import link_class, spread_said
from gpuscale.advice.model.priors import SharePrior
from gpuscale.advice.model.step import (
    DDP_COPIES,
    REFERENCE_MEMORY_GBS,
    ModelSpec,
)
from gpuscale.advice.remeasure import bench_run
from gpuscale.advice.request import AdviceRequest
from gpuscale.advice.types import BenchRun, Finding, FindingKind, Measure, Source
from gpuscale.hardware import transformer
from gpuscale.quantities import format_count, with_article

SPREAD_SAID = sentence("spread_said")  # the wait prior's value
# What measures the fixed cost of a model given by numbers.
MEASURE_FIXED = Measure(
    sentence("measure_fixed_before"),
    BenchRun(None, (1,)),
    " (times two batches at N = 1)",
)


def from_numbers(
    machine: Machine, said: Said, req: AdviceRequest, numbers: transformer.ShapeNumbers | None
) -> Calibration:
    """The calibration on ``machine`` (``said``: where it came from) of the model of the
    numbers given (``numbers``: its transformer shape's), its first (batch, step) pair the
    one advised on."""
    points = req.step_points
    per_device, step_ms = points[0]
    device = machine.device  # named, else the link's: resolved with the link
    params = float(req.model_params)  # type: ignore[arg-type]
    # what the numbers leave unmeasured at N > 1, from priors
    ddp_copies = _copies(device, params * req.grad_bytes)
    ddp_work = _prior_assumed(priors.DDP_WORK, ddp_copies, bench_run(None, (1,)))
    spread = _prior_assumed(priors.STEP_SPREAD, SPREAD_SAID, bench_run(None, (1, 2)))
    # the most micro-steps a step may take: the search's default, or, for a transformer's
    # shape, as many as one device needs for the global batch given (an LLM's 1,024
    # sequences at one a device)
    most_accum = Run(batch=per_device).max_accum
    if req.shape is not None and req.global_batch is not None:
        most_accum = max(most_accum, -(-req.global_batch // per_device))
    shape_said, shape_warnings = shape_findings(req, numbers)
    shape = req.shape  # a transformer's: FLOPs with attention, one FSDP unit per layer
    spec = ModelSpec(
        params=params,
        flops_per_sample=req.flops_per_sample or (numbers and numbers.flops_per_sample),
        grad_bytes_per_param=req.grad_bytes,
        units=shape.layers if shape is not None else 1,
    )
    link = machine.network.intra.name
    implied_by = None if req.device_name else link  # the device is the one the link implies
    # the ranks' spread fitted on published tables, where it stands (``model/network.py``)
    nodes = machine.network.inter is not None and machine.network.per_node is not None
    if fitted := spread_said(link_class(link, nodes)):
        spread = replace(spread, basis=f"{spread.basis}; {fitted}")
    said_priors = (ddp_work, spread)
    precision = req.gradient_precision
    peak = device.peak
    # the fastest the step's work could run (TFLOP/s; None: no peak): fp32 under PyTorch's
    # defaults runs convolutions in TF32; a step faster than that runs in mixed precision
    peaks = (device.tflops(precision, tf32=True), device.tflops("bf16"))
    flops_given = req.flops_per_sample is not None or shape is not None  # counted, not 6 P
    memory_gbs = getattr(device.part, "memory_bw_gbs", None)
    split = by_numbers(spec, points, req.fixed_ms, peaks, flops_given, MEASURE_FIXED, memory_gbs)
    whole, fastest = split.whole_tflops, split.bound_tflops
    precision = "bf16" if fastest and fastest != peaks[0] else precision
    fixed, compute = split.fixed, split.compute
    assumed = fixed.source == Source.ASSUMED
    # the rate against the peak: the whole step's where the fixed cost is assumed, else
    # the per-sample rate; under 1% of the peak is flagged only with the FLOPs given (at
    # 6 x parameters a low rate has two readings, priced at the ends)
    rate = whole if assumed else compute.tflops
    low = assumed and flops_given
    power = device_power(None, device, given_w=req.power_w, implied_by=implied_by)
    whose = "inputs_whole_step" if assumed else "inputs"
    unchecked = unchecked_note(rate, device, precision, whose)
    taken = fixed.ms if low else None  # the other reading of a low rate
    warnings = rate_warnings(rate, device, precision, low=low, fixed_taken_ms=taken)
    warnings += hardware.step_warnings(points)
    # why an assumed fixed cost is what it is: the peak bounded it, or no peak did
    if peak is None or not fastest:
        bound = fixed_split.unbounded(fixed, device.name, link)
    else:
        bound = fixed_split.bounded(
            fixed,
            (peak, fastest, precision),
            (per_device, step_ms, spec.flops),
            flops_given=flops_given,
            implied_by=implied_by,
        )
    source = Finding.of(
        FindingKind.COMPUTE_OF_NUMBERS,
        step_ms=step_ms,
        batch=per_device,
        tflops=whole,
        # whose FLOPs the rate is at: --flops-per-sample's, the shape's or 6 x parameters
        flops_of="given" if req.flops_per_sample is not None else "shape" if shape else "params",
        fixed_ms=fixed.ms,
        fixed_source=str(fixed.source),
        work_ms=step_ms - compute.fixed_ms,
    )
    model = StepModel(
        name=f"{with_article(format_count(spec.params))}-parameter model",
        spec=spec,
        compute=compute,
        fixed=fixed,
        prior_range=split.prior_range,
        error=priors.ERROR,
    )
    said = replace(
        said,
        sources=(*said.sources, *shape_said, source, *filter(None, [bound, unchecked])),
        warnings=(*said.warnings, *shape_warnings, *warnings),
        implausible=said.implausible or bool(warnings),  # every rate warning is one
        priors_said=said_priors,
    )
    return Calibration(
        model=model,
        # the fixed cost prices smaller batches
        run=Run(
            batch=per_device,
            min_batch=max(1, per_device // 8),
            overlap=req.overlap,
            max_accum=most_accum,
        ),
        machine=replace(machine, power=power),
        said=said,
        search=Search(ends=split.ends),
    )


def _prior_assumed(found: SharePrior, what: str, measure: Measure) -> Assumption:
    """A term set from a prior (``model/priors.py``): its most likely value, its range and
    source."""
    unit = PER_STEP if found.in_ms else f"share {SPREAD_SAID}"
    values = {"point": found.point, "low": found.low, "high": found.high}
    return Assumption(
        term=found.term,
        value=sentence("prior_value", in_ms=found.in_ms, what=what, **values),
        quantity=Quantity(found.point, unit, found.low, found.high),
        source=Source.PRIOR,
        basis=found.source,
        measure=measure,
    )


def _copies(device: DeviceRecord, grad_bytes: float) -> str:
    """What DDP's prior is beside its bucket copies, at this model's ``grad_bytes`` and the
    device's memory bandwidth (an H100 SXM's unknown)."""
    bandwidth = getattr(device.part, "memory_bw_gbs", REFERENCE_MEMORY_GBS)
    copies_ms = DDP_COPIES * grad_bytes / bandwidth / 1e6
    named = device.part is not None
    return sentence("ddp_copies", copies_ms=copies_ms, bandwidth=bandwidth, named=named)

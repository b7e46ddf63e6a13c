"""A model given by its numbers (:func:`from_numbers`): the step split into a fixed per-step
cost and per-sample work; what numbers do not say (overlap, DDP's own work, the wait) assumed
from priors and said with the command that measures it."""

from __future__ import annotations

from dataclasses import replace

from gpuscale.advice.assumptions import PER_STEP
from gpuscale.advice.calibration import Calibration, End, Machine, Run, Said, Search, StepModel
from gpuscale.advice.model import hardware, priors, step
from gpuscale.advice.model.fixed_cost import GPU_PRIOR, FixedCost, of_step_points
from gpuscale.advice.model.priors import SourcedPrior
from gpuscale.advice.records import Assumption, Quantity
from gpuscale.advice.request import AdviceRequest
from gpuscale.advice.types import BenchRun, Finding, Measure, Source, TermId, Value
from gpuscale.advice.types import FindingKind as K
from gpuscale.hardware import transformer
from gpuscale.hardware.memory import DEFAULT_PRECISION

# --params this far from the shape's count is said (a published count is rounded to a
# few digits: 1,542M for GPT-2 XL's 1,557.6M, 1.0%)
PARAMS_AGREE = 0.05
SPREAD_SAID = priors.phrase("spread_said")  # the wait prior's value
MEASURE_FIXED = Measure(
    Finding.of(K.MEASURE_FIXED_BEFORE),
    BenchRun(None, (1,)),
    " (times two batches at N = 1)",
)
FLOPS_UNIT = "FLOPs per sample"


def shape_findings(
    req: AdviceRequest, numbers: transformer.ShapeNumbers | None
) -> tuple[tuple[Finding, ...], tuple[Finding, ...]]:
    """(sources, warnings) of the transformer's shape: what it gives and whether ``--params``
    disagrees with it by more than ``PARAMS_AGREE``; without one, under a sharded strategy,
    what is assumed instead."""
    shape, strategy = req.shape, req.strategy or "ddp"
    if shape is None or numbers is None:
        if strategy == "ddp":  # DDP's buckets and a model state: no shape needed
            return (), ()
        return (Finding.of(K.NO_SHAPE, strategy=strategy),), ()
    source = ""  # a preset's: its citation's first clause
    if shape.source:
        source = transformer.sources()[shape.source].citation.split(";")[0].split(" (")[0]
    counted = float(numbers.params)
    found = Finding.of(
        K.TRANSFORMER_SHAPE,
        name=shape.name,
        layers=shape.layers,
        hidden=shape.hidden,
        heads=shape.heads,
        seq_len=shape.seq_len,
        params=counted,
        params_given=req.params is not None,
        flops_per_sample=req.flops_per_sample or numbers.flops_per_sample,
        flops_given=req.flops_per_sample is not None,
        attention_share=numbers.attention_share,
        units=shape.layers,
        unit_params=float(numbers.layer_params),
        source=source,
        # one sequence's (activations are per micro-batch); "default": the one assumed
        activations_gb=next(a for a in numbers.activations if a.micro_batch == 1).total_gb,
        checkpointing=req.checkpointing or "default",
    )
    off = (req.params or counted) / counted - 1
    if abs(off) <= PARAMS_AGREE:
        return (found,), ()
    kind = K.PARAMS_NOT_SHAPE
    disagree = Finding.of(kind, given=req.params, off=off, shape_params=counted, name=shape.name)
    return (found,), (disagree,)


def from_numbers(
    machine: Machine, said: Said, req: AdviceRequest, numbers: transformer.ShapeNumbers | None
) -> tuple[Calibration, hardware.Rate]:
    """The calibration on ``machine`` of the numbers given, advised at their first point,
    and its rate to check against the peak."""
    points, shape, device = req.step_points, req.shape, machine.device
    per_device, step_ms = points[0]
    shape_said, shape_warnings = shape_findings(req, numbers)
    spec = step.ModelSpec(
        params=float(req.model_params),  # type: ignore[arg-type]
        flops_per_sample=req.flops_per_sample or (numbers and numbers.flops_per_sample),
        grad_bytes_per_param=req.grad_bytes,
        units=shape.layers if shape is not None else 1,
    )
    # what the numbers leave unmeasured at N > 1, from priors: DDP's work beside its bucket
    # copies at the device's memory bandwidth (an H100 SXM's unknown), the wait beside the
    # ranks' spread fitted on published tables where it stands (``model/network.py``)
    memory_gbs = getattr(device.part, "memory_bw_gbs", None)
    copies_ms = spec.copies_ms(memory_gbs)
    bandwidth = memory_gbs or priors.REFERENCE_MEMORY_GBS
    # whose bandwidth that is: the device's own, else the reference's where none is named,
    # or where the one named has no memory bandwidth in the catalogue (an A10G, a Gaudi2)
    whose = "own" if memory_gbs else "unrecorded" if device.name else "unnamed"
    copies = Finding.of(
        K.DDP_COPIES, copies_ms=copies_ms, bandwidth=bandwidth, named=whose, device=device.name
    )
    ddp_work = _prior_assumed(priors.DDP_WORK, TermId.DDP, copies, (1,), copies_ms)
    spread = _prior_assumed(priors.STEP_SPREAD, TermId.WAIT, SPREAD_SAID, (1, 2))
    sigma, stacks_differ = machine.spread
    if sigma > 0:
        fitted = Finding.of(
            K.SPREAD_FITTED, basis=spread.basis, spread=sigma, stacks_differ=stacks_differ
        )
        spread = replace(spread, basis=fitted)
    link = machine.network.intra.name
    implied_by = None if req.device_name else link  # the device is the one the link implies
    # none named: the board power of the device the memory check assumes (one device)
    assumed = machine.assumed_device
    watts = hardware.device_power(
        None, device, given_w=req.power_w, implied_by=implied_by, assumed=assumed
    )
    weights = req.precision or DEFAULT_PRECISION  # --precision: mixed unless fp32
    flops_given = req.flops_per_sample is not None or shape is not None  # counted, not 6 P
    whole = step.rate_tflops(per_device, spec.flops, step_ms)  # TFLOP/s of the whole step
    # the fastest the step's work could run (TFLOP/s; None: no peak: ``hardware.work_peak``)
    fastest, precision = hardware.work_peak(device, weights, whole)
    at_peak = step.work_ms(per_device, spec.flops, fastest) if fastest else None
    fixed, dense = of_step_points(points, req.fixed_ms, at_peak, flops_given, MEASURE_FIXED)
    token_read = dense is not None and dense.ms > fixed.high_ms  # the FLOPs' low end read again
    # why an assumed fixed cost is what it is (None: measured, entered, or not raised): no
    # peak bounded it, or the peak raised it above the prior's low end; FLOPs per sample not
    # given, the step's two readings: a transformer's (``floor_ms`` of it fixed) or more work
    # per parameter (``F = share x peak x work / b``: the FLOPs per sample assumed over those
    # two, their geometric mean the value; else at 6 x parameters, on which no prediction rests)
    bound, assumed = None, fixed.source == Source.ASSUMED
    unbounded = device.peak is None or at_peak is None
    why = ("none" if unbounded else "peak") if assumed else "entered"  # 6 x P moves none
    flops_said: dict[str, Value] = {"case": "token", "flops": spec.flops, "why": why}
    flops_at = Quantity(spec.flops, FLOPS_UNIT)
    if assumed and unbounded:
        bound = Finding.of(
            K.FIXED_UNBOUNDED,
            device=device.name or None,
            link=link,
            link_measured=bool(machine.network.inside_curves()),  # its name a phrase of its own
            fixed_ms=fixed.ms,
            low_ms=fixed.low_ms,
            high_ms=fixed.high_ms,
            min_mfu=hardware.MIN_MFU,
            measure=fixed.measure,
        )
    elif assumed:
        at_most_ms = at_peak / hardware.MIN_MFU
        floor_ms = step_ms - at_most_ms
        read = {  # what both findings say of the step at the peak
            "flops_per_sample": spec.flops,
            "step_ms": step_ms,
            "label": "TF32" if precision == "fp32" else precision,  # PyTorch's for fp32
            "device": device.peak.device,
            "peak_tflops": fastest,
            "floor_ms": floor_ms,
            "fixed_ms": fixed.ms,
        }
        work = step_ms - fixed.ms
        if floor_ms > GPU_PRIOR.low and not flops_given:
            low, high = (share * fastest * 1e12 * work / 1e3 / per_device for share in (0.1, 0.5))
            bound = Finding.of(
                K.FLOPS_TWO_READINGS,
                **read,
                share_pct=100 * at_peak / step_ms,  # the step's rate over the peak
                low_ms=fixed.low_ms,
                high_ms=fixed.high_ms,
                work_ms=work,
                flops_low=low,
                flops_high=high,
            )
            token = spec.flops if token_read else None
            said_at = {"case": "readings", "low": low, "high": high, "token": token}
            flops_said = dict(bound.values) | said_at
            flops_at = Quantity((low * high) ** 0.5, FLOPS_UNIT, token or low, high)
        elif floor_ms > GPU_PRIOR.low:
            bound = Finding.of(
                K.FIXED_BOUNDED,
                **read,
                batch=per_device,
                at_peak_ms=at_peak,
                at_most_ms=at_most_ms,
                implied_by=implied_by or None,
                min_mfu=hardware.MIN_MFU,
                prior_ms=GPU_PRIOR.point,
                prior_low_ms=GPU_PRIOR.low,
                prior_high_ms=GPU_PRIOR.high,
                like_ms=max(step_ms, GPU_PRIOR.high),
                measure=fixed.measure,
            )

    # the step's compute at the rate ``whole`` less ``fixed``, DDP's work and the wait from
    # their priors (and at the priors' ends), and the same at each end of an assumed range:
    # the fixed cost's, or the FLOPs' low reading (``dense``)
    def priced(cost: FixedCost) -> dict[str, object]:
        split = step.Compute(tflops=whole).resplit(spec, per_device, cost.ms)
        compute_ms = split.compute_ms(spec, per_device)  # one device's compute step, once
        at = {  # DDP's work: its prior's rest a step and the model's bucket copies
            which: replace(
                step.with_priors(split, compute_ms, which),
                ddp_ms_per_mparam=spec.ddp_ms_per_mparam(priors.DDP_WORK.at(which), memory_gbs),
            )
            for which in ("low", "high", "point")
        }
        return {"fixed": cost, "compute": at["point"], "prior_range": (at["low"], at["high"])}

    ends: list[End] = []
    if token_read:
        ends.append((TermId.FLOPS.value, "low", spec.flops, FLOPS_UNIT, {"model": priced(dense)}))
    for end, ms in (("low", fixed.low_ms), ("high", fixed.high_ms)):
        if assumed and ms != fixed.ms:
            ends.append(("fixed_cost", end, ms, "ms", {"model": priced(replace(fixed, ms=ms))}))
    model = StepModel(
        name=Finding.of(K.PARAMS_MODEL, params=spec.params, family=None),
        spec=spec,
        error=priors.ERROR,
        **priced(fixed),  # type: ignore[arg-type]
    )
    # the rate to check against the peak (``build``): the whole step's where the fixed cost
    # is assumed, else the per-sample rate; under 1% of the peak is flagged only with the
    # FLOPs given (at 6 x parameters a low rate has two readings, priced at the ends)
    tflops = whole if assumed else model.compute.tflops
    low = assumed and flops_given
    rate = hardware.Rate(
        tflops,
        device,
        weights,
        "inputs_whole_step" if assumed else "inputs",
        said_tflops=tflops,
        low=low,
        fixed_taken_ms=fixed.ms if low else None,  # the other reading of a low rate
    )
    source = Finding.of(
        K.COMPUTE_OF_NUMBERS,
        step_ms=step_ms,
        batch=per_device,
        tflops=whole,
        # whose FLOPs the rate is at: --flops-per-sample's, the shape's or 6 x parameters
        flops_of="given" if req.flops_per_sample is not None else "shape" if shape else "params",
        fixed_ms=fixed.ms,
        fixed_source=str(fixed.source),
        work_ms=step_ms - model.compute.fixed_ms,
    )
    said = replace(
        said,
        sources=(*said.sources, *shape_said, source, *filter(None, [bound])),
        warnings=(*said.warnings, *shape_warnings),
        priors_said=(ddp_work, spread),
    )
    if not flops_given:  # the range the advice reads the FLOPs per sample over
        # said as the record: its value, its range (the low end priced: 6 x parameters)
        ranged = flops_at.low is not None
        read_at = {"value": flops_at.value, "low": flops_at.low, "high": flops_at.high}
        flops_value = Finding.of(K.FLOPS_VALUE, **(flops_said | (read_at if ranged else {})))
        flops = Assumption(
            term=TermId.FLOPS,
            value=flops_value,
            quantity=flops_at,
            source=Source.ASSUMED,
            basis=Finding.of(K.FLOPS_ASSUMED, **flops_said),
            measure=Measure(Finding.of(K.MEASURE_FLOPS)),
        )
        said = replace(said, assumptions=(*said.assumptions, flops))
    # the fixed cost prices smaller batches
    min_batch = max(1, per_device // 8)
    run = Run(batch=per_device, min_batch=min_batch, overlap=req.overlap)
    machine = replace(machine, power=watts)
    search = Search(ends=tuple(ends))
    return Calibration(model=model, run=run, machine=machine, said=said, search=search), rate


def _prior_assumed(
    prior: SourcedPrior,
    term: TermId,
    what: str | Finding,
    counts: tuple[int, ...],
    copies_ms: float = 0.0,
) -> Assumption:
    """A term set from a prior (``model/priors.py``), its range and source, measured by a run
    at ``counts``: DDP's work in ms with the model's bucket copies (``copies_ms``) added to its
    point and ends as the steps price it, the wait a share."""
    in_ms = term == TermId.DDP
    unit = PER_STEP if in_ms else priors.phrase("spread_unit", said=SPREAD_SAID)
    low, high = (None if end is None else end + copies_ms for end in (prior.low, prior.high))
    values = {"point": prior.point, "low": low, "high": high}  # the ends as the steps price
    return Assumption(
        term=term,
        value=Finding.of(K.PRIOR_VALUE, in_ms=in_ms, said_as=what, **values),
        quantity=Quantity(prior.point + copies_ms, unit, low, high, copies_ms=copies_ms or None),
        source=Source.PRIOR,
        basis=prior.said,
        measure=Measure(bench=BenchRun(None, counts)),
    )

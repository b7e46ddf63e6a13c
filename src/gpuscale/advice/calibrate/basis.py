"""What the advice rests on (:class:`Basis`), and the advice from numbers: a model given
by its parameters and one device's step time at one batch or more (``from_numbers``).

From numbers, the step is split into a fixed per-step cost and per-sample work
(``advice/model/fixed_cost.py``): entered (``--step-ms`` at two batches, or ``--fixed-ms``),
else the device-level prior narrowed by the step itself. Everything the numbers do not
say (overlap, DDP's own work, the wait for the slowest device) is assumed and said, with
the command that would measure it (``advice/assumptions.py``). From a bench file, the
same terms as measured: ``calibrate/bench_terms.py``.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from gpuscale.advice import assumptions
from gpuscale.advice.assumptions import Assumption, bench_run
from gpuscale.advice.calibrate import fixed_split
from gpuscale.advice.inputs import OneDevice
from gpuscale.advice.model import priors
from gpuscale.advice.model.fixed_cost import FixedCost
from gpuscale.advice.model.hardware import (
    NO_DEVICE,
    DeviceRecord,
    Power,
    named_power,
    rate_warnings,
    unchecked_note,
)
from gpuscale.advice.model.network import Network
from gpuscale.advice.model.priors import StepError
from gpuscale.advice.model.step import (
    Compute,
    FamilyBasis,
    ModelSpec,
    rate_tflops,
    work_ms,
)
from gpuscale.advice.request import AdviceRequest
from gpuscale.advice.types import BENCH, End, Measured, Source, TermId, words
from gpuscale.analysis.critical_batch import NoiseScale
from gpuscale.bench.support import Support
from gpuscale.quantities import format_count, format_ms, number

# The link assumed where none is given, detected or measured.
DEFAULT_LINK = "pcie-phb"


@dataclass(frozen=True, slots=True)
class Basis:
    """What the advice rests on: the network, the model and its rate per device, and
    where each came from (``sources``, ``warnings``, ``assumed``). A value: each step
    (``network_basis``, then ``from_numbers`` or ``bench_basis.from_bench``) returns a new
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
    device: DeviceRecord = NO_DEVICE  # named, else the link's (by numbers), resolved once
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
    the configuration advised on, split into fixed cost and per-sample work. In a row:
    the device (named, else the one the link implies) with its power and peaks, the
    step's work, the fixed cost, the split (at each end of an assumed range too), the
    rate checked against the peak, then the words."""
    points = req.step_points
    per_device, step_ms = points[0]
    spec = ModelSpec(
        params=float(req.params),
        flops_per_sample=req.flops_per_sample,
        grad_bytes_per_param=req.grad_bytes,
    )
    link = basis.network.intra.name
    implied_by = None if req.device_name else link  # the device is the one the link implies
    device = basis.device  # named, else the link's: resolved with the link
    precision = "bf16" if req.grad_bytes == 2 else "fp32"
    peak = device.peak
    # the fastest the step's work could run (TFLOP/s; None: no peak): fp32 under PyTorch's
    # defaults runs convolutions in TF32, so the TF32 peak bounds it (the fp32 peak left
    # no room for a fixed cost in a ResNet-50 step that is plainly possible on an A100)
    fastest = peak.tflops(precision, tf32="on") if peak else None
    whole = rate_tflops(per_device, spec.flops, step_ms)  # TFLOP/s of the whole step
    at_peak = work_ms(per_device, spec.flops, fastest) if fastest else None
    # the split, once: the fixed cost entered, from two step times, else the prior narrowed
    # by the step (the peak bounds the per-sample work from below and, at 1% of it, from
    # above: only with FLOPs per sample given), at each end of an assumed range too
    flops_given = req.flops_per_sample is not None
    split = priors.by_numbers(
        spec,
        points,
        req.fixed_ms,
        whole_tflops=whole,
        work_at_peak_ms=at_peak,
        flops_given=flops_given,
        measure=MEASURE_FIXED,
    )
    fixed, compute = split.fixed, split.compute
    assumed = fixed.source == Source.ASSUMED
    # the device's power and the rate against its peak: the whole step's where the fixed
    # cost is assumed (one step time: the whole step's rate is all we know), else the
    # per-sample rate (a low one is a small model's: kernels too short to fill the device,
    # the published study's own; one above the peak cannot be). Under 1% of the peak is
    # flagged only with the FLOPs given: at 6 x parameters, a lower bound of the work, a
    # low rate has two readings (``fixed_split.flops_reading``, priced at the ends)
    rate = whole if assumed else compute.tflops
    low = assumed and flops_given
    taken = f"or nearly all of the step is a fixed per-step cost (taken as {format_ms(fixed.ms)})"
    power = named_power(device, req.power_w, implied_by)
    # a device named without a known peak: the check below cannot be made, said
    whose = "the inputs imply over the whole step" if assumed else "the inputs imply"
    unchecked = unchecked_note(rate, device, precision, whose)
    warnings = rate_warnings(rate, device, precision, low=low, low_note=taken if low else "")
    # why an assumed fixed cost is what it is: the peak bounded it, or no peak did
    if peak is None or fastest is None or at_peak is None:
        bound = fixed_split.unbounded(fixed, device.name, link, MEASURE_FIXED)
    else:
        at = fixed_split.AtPeak(
            peak=peak,
            peak_tflops=fastest,
            precision=precision,
            step_ms=step_ms,
            batch=per_device,
            flops_per_sample=spec.flops,
            peak_work_ms=at_peak,
        )
        bound = fixed_split.bounded(
            fixed, at, flops_given=flops_given, implied_by=implied_by, measure=MEASURE_FIXED
        )
    flops = "the FLOPs given" if flops_given else "6 x parameters FLOPs per sample"
    source = (
        f"Compute: {format_ms(step_ms)} per step of {per_device:,} samples -> "
        f"{number(whole)} TFLOP/s over the whole step at {flops}; of it "
        f"{format_ms(fixed.ms, step_ms)} fixed per step ({fixed.source}) and "
        f"{format_ms(step_ms - compute.fixed_ms, step_ms)} of per-sample work."
    )
    # what numbers leave unmeasured: every N > 1 term
    span = f" ({format_ms(fixed.low_ms, fixed.high_ms)}-{format_ms(fixed.high_ms)})"
    said = (
        Assumption(
            term=TermId.FIXED,
            value=format_ms(fixed.ms, fixed.high_ms) + (span if fixed.uncertain else ""),
            source=fixed.source,
            basis=fixed.basis,
            measure=fixed.measure,
        ),
        assumptions.overlap(req.overlap, measured=False, given=req.overlap is not None, model=None),
        priors.assumption(priors.DDP_WORK, "ms per million parameters", bench_run(None, (1,))),
        priors.assumption(
            priors.STEP_SPREAD, "coefficient of variation of the step", bench_run(None, (1, 2))
        ),
    )
    return replace(
        basis,
        spec=spec,
        per_device=per_device,
        fixed=fixed,
        compute=compute,
        prior_range=split.prior_range,
        error=priors.ERROR,
        min_batch=max(1, per_device // 8),  # the fixed cost prices smaller batches
        overlap=req.overlap,
        power=power,
        sources=(*basis.sources, source, *filter(None, [bound, unchecked])),
        warnings=(*basis.warnings, *warnings),
        implausible=basis.implausible or bool(warnings),  # every rate warning is one
        name=f"a {format_count(spec.params)}-parameter model",
        assumed=(*basis.assumed, *said),
        ends=split.ends,
    )

"""Priors for the N > 1 terms a model given by its numbers leaves unmeasured: DDP's own
work per step and the wait for the slowest of N devices, each in the form the step model
gives it (``advice/model.py``), with a low, a most likely and a high value (10th, 50th and
90th percentiles of what measured it) and where they come from.

* **DDP's own work** (bucket copies, autograd hooks; ``t_ddp``, per parameter): the
  synchronised minus the no-sync step at N = 1, per million parameters, in gpuscale's own
  25 one-GPU DDP runs on an H100 (``../shared/gpu/h100``; PyTorch 2.11, steps of 1.6-68
  ms, MLPs, CNNs, transformers, ResNet-50, fp32/bf16/fp16, no accumulation): 0.014,
  0.069 and 0.23 ms per million parameters. The PyTorch DDP paper (Li et al., "PyTorch
  Distributed: Experiences on Accelerating Data Parallel Training", VLDB 2020) describes
  the same work and reaches near-linear scaling at 256 GPUs once it overlaps backward.
* **The wait for the slowest device** (``t_wait``, a share of the step): ``E[max of N] -
  mean`` of step times spread as one device's are (Chen et al., "Revisiting distributed
  synchronous SGD", 2016): a normal spread whose coefficient of variation is that of the
  no-sync steps in the same 25 runs, 0.75%, 8.7% and 14.8% (at N = 8 a wait of 1%, 12%
  and 20% of the step). Horovod (Sergeev and Del Balso, 2018) reports 88%
  efficiency on 128 GPUs for Inception V3 and ResNet-101: what both terms and the
  communication together left there.

The input pipeline has no prior here: the advice says at what samples per second it
would cap the throughput (``with_input_rate``). NVIDIA's DeepLearningExamples performance
tables check these priors (``benchmarks/eight_gpus_by_numbers.py``); nothing is fitted
to them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

from gpuscale.advice.assumptions import Assumption, input_pipeline
from gpuscale.advice.model import Compute, ModelSpec
from gpuscale.advice.step_error import StepError
from gpuscale.advice.types import Measure, Source, TermId
from gpuscale.quantities import counted, factor_interval

# Standard normal quantiles at (i - 0.5) / 20, i = 1..20: the shape of the spread the
# wait prior draws its E[max of N] from (``Compute.wait_ms``).
_NORMAL_20 = (
    -1.9600,
    -1.4395,
    -1.1503,
    -0.9346,
    -0.7554,
    -0.5978,
    -0.4538,
    -0.3186,
    -0.1891,
    -0.0627,
    0.0627,
    0.1891,
    0.3186,
    0.4538,
    0.5978,
    0.7554,
    0.9346,
    1.1503,
    1.4395,
    1.9600,
)


@dataclass(frozen=True, slots=True)
class SharePrior:
    """A term as a share of one device's compute step: low, most likely, high (the
    10th, 50th and 90th percentiles of what measured it), its term, its unit (``in_ms``:
    ms per million parameters, else a share) and source."""

    low: float
    point: float
    high: float
    term: TermId
    source: str
    in_ms: bool = False

    def at(self, which: str) -> float:
        return {"low": self.low, "point": self.point, "high": self.high}[which]


DDP_WORK = SharePrior(
    0.0143,
    0.0689,
    0.2336,
    TermId.DDP,
    "gpuscale's 25 one-H100 DDP runs (synchronised minus no-sync step at N = 1, per "
    "million parameters, 10th-90th percentile); the work the PyTorch DDP paper (Li et al., "
    "VLDB 2020) overlaps with backward",
    in_ms=True,
)
STEP_SPREAD = SharePrior(
    0.0075,
    0.0874,
    0.1477,
    TermId.WAIT,
    "E[max of N] - mean of steps spread as in gpuscale's 25 one-H100 runs (coefficient of "
    "variation, 10th-90th percentile; Chen et al. 2016); Horovod's 88% on 128 GPUs "
    "(Sergeev and Del Balso 2018) bounds the losses together",
)


# With the priors' range in the interval, what is left for the rest of an unmeasured
# N > 1 step (the link model, the overlap): +/-10% at N = 2, widening as sqrt(log2 N).
ERROR = StepError(
    width_log=math.log(1.10),
    measured_n=1,
    source="no measurement at N > 1: DDP's own work and the slowest device's wait over "
    f"their priors' ranges, and {factor_interval(math.log(1.10))} at N = 2 for the rest "
    "(widening with log2 N)",
)


def with_priors(compute: Compute, model: ModelSpec, batch: float, which: str) -> Compute:
    """``compute`` with DDP's work (per parameter) and the step's spread (a share of its
    compute step at ``batch``) set from the priors (``which``: low, point or high)."""
    step = compute.compute_ms(model, batch)
    cv = STEP_SPREAD.at(which)
    return replace(
        compute,
        ddp_ms_per_mparam=DDP_WORK.at(which),
        jitter_ms=tuple(step * (1 + cv * q) for q in _NORMAL_20),
        jitter_ref_ms=step,
    )


def with_input_rate(
    assumed: tuple[Assumption, ...], samples_per_s: float, devices: int
) -> tuple[Assumption, ...]:
    """``assumed`` with the input pipeline's term saying the samples per second the
    largest count (``devices``) consumes, in all and per process."""
    rate = (
        f"{samples_per_s:,.0f} samples/s in all at {counted(int(devices), 'device')}, the largest "
        "count predicted, "
        f"{samples_per_s / devices:,.0f} per process: a data loader slower than that caps "
        "the throughput there"
    )
    return tuple(input_pipeline(rate) if a.term == TermId.INPUT else a for a in assumed)


def assumption(found: SharePrior, what: str, measure: Measure) -> Assumption:
    """A term set from a published or measured prior (``advice/priors.py``): its most
    likely value and range, and the source; the range enters the interval."""

    def share(value: float) -> str:
        return f"{value:.3g}" if found.in_ms else f"{value:.1%}"

    return Assumption(
        term=found.term,
        value=f"{share(found.point)} {what} ({share(found.low)}-"
        f"{share(found.high)}, its range in the interval)",
        source=Source.ASSUMED,
        basis=f"prior: {found.source}",
        measure=measure,
    )

"""Priors for the N > 1 terms a model given by its numbers leaves unmeasured: DDP's own
work per step and the wait for the slowest of N devices, each in the form the step model
gives it (``advice/model/step.py``), with a low, a most likely and a high value (10th, 50th and
90th percentiles of what measured it) and where they come from.

* **DDP's own work** (bucket copies, autograd hooks; ``t_ddp``, per parameter): the
  synchronised minus the no-sync step at N = 1, per million parameters, in gpuscale's own
  25 one-GPU DDP runs on an H100 (``../shared/gpu/h100``; PyTorch 2.11, steps of 1.6-68
  ms, MLPs, CNNs, transformers, ResNet-50, fp32/bf16/fp16, no accumulation): 0.014,
  0.069 and 0.23 ms per million parameters. The PyTorch DDP paper (Li et al., "PyTorch
  Distributed: Experiences on Accelerating Data Parallel Training", VLDB 2020) describes
  the same work and reaches near-linear scaling at 256 GPUs once it overlaps backward.
* **The wait for the slowest device** (``t_wait``): ``E[max of N] - mean`` of step times
  spread as one device's are (Chen et al., "Revisiting distributed synchronous SGD",
  2016), a normal spread in milliseconds that is a share of the step's **host time**, its
  fixed per-step cost, not of the whole step: in gpuscale's own 26 one-H100 DDP runs with
  NVML (``../shared/gpu/h100``, the same rows) the no-sync steps' standard deviation is
  0.06, 0.13 and 0.31 (10th, 50th, 90th percentile) of the time the device sat idle
  ((1 - utilisation) x step), while as a share of the step it ranged from 0.2% (steps
  the device was busy through: tf-7m at batch 256, 42.6 ms, sd 0.07 ms) to 15-17%
  (launch-bound steps: tf-7m at batch 1, 11.9 ms, sd 1.9 ms). A step the device is busy
  through barely varies; the host's launches and Python do. The spread does not grow
  with the per-device batch (the fixed cost does not). Horovod (Sergeev and Del Balso,
  2018) reports 88% efficiency on 128 GPUs for Inception V3 and ResNet-101: what both
  terms and the communication together left there.

The input pipeline has no prior here: the advice says at what samples per second it
would cap the throughput (``Advice.input_rate``, said by ``explain/caveats.assumed``).
NVIDIA's DeepLearningExamples performance tables check these priors
(``benchmarks/eight_gpus_by_numbers.py``); nothing is fitted to them.

Step error: How sure a prediction is: an 80% interval on the step at N > 1 from the calibration's
own errors.

With bench rows at N > 1, each model that has one is left out in turn (its N > 1 rows
removed; at most ``MAX_LEFT_OUT`` models, spread over their sizes, so the cost does not
grow with the rows), calibrated on the rest and its measured N > 1 steps predicted; the log errors
``r = ln(measured / predicted)`` give the interval's half-width ``z_0.9 sqrt(mean r^2)
sqrt(1 + 1/k)`` (k errors; bias and spread together). Without them (numbers only, or
N = 1 rows only) the N > 1 figures are extrapolated and the width is ``EXTRAPOLATED``:
issue 26 measured 24-38% errors at N = 2 on unseen models calibrated from N = 1 alone.
Counts above the largest measured one widen by ``sqrt(log2 N)``. The sentence also says how
far the calibrated model is from the advised model's own N > 1 runs (``with_own_runs``): a
model off at the runs it was calibrated on is off there whatever the others' errors.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, replace

import numpy as np
import pandas as pd

from gpuscale.advice.assumptions import Assumption
from gpuscale.advice.model.step import Compute
from gpuscale.advice.types import Measure, Source, TermId, trusted_runs
from gpuscale.quantities import counted, factor_interval, span

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

FEW_NOISE_STEPS = 10  # a noise scale from fewer steps is a guess


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
    0.0600,
    0.1340,
    0.3102,
    TermId.WAIT,
    "E[max of N] - mean of steps whose spread is a share of the fixed per-step cost (the "
    "host's time: standard deviation over idle device time in gpuscale's 26 one-H100 DDP "
    "runs, 10th-90th percentile; Chen et al. 2016); Horovod's 88% on 128 GPUs (Sergeev "
    "and Del Balso 2018) bounds the losses together",
)


def with_priors(compute: Compute, step: float, which: str) -> Compute:
    """``compute`` with DDP's work (per parameter) and the step's spread (a share of its
    fixed cost, ms, whatever the batch) set from the priors (``which``: low, point or
    high) around its compute step ``step`` ms."""
    sd_ms = STEP_SPREAD.at(which) * compute.fixed_ms
    return replace(
        compute,
        ddp_ms_per_mparam=DDP_WORK.at(which),
        jitter_ms=tuple(step + sd_ms * q for q in _NORMAL_20),
        jitter_fixed_ref_ms=compute.fixed_ms,  # the host's: it scales with the fixed cost
    )


def assumption(found: SharePrior, what: str, measure: Measure) -> Assumption:
    """A term set from a published or measured prior (``advice/model/priors.py``): its most
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


Z80 = 1.2816  # two-sided 80%: the 10th and 90th percentiles of a normal
EXTRAPOLATED = math.log(1.35)  # half-width (log) when nothing at N > 1 was measured
FEW_RESIDUALS = 3  # fewer leave-one-out errors than this give no spread of their own


@dataclass(frozen=True, slots=True)
class StepError:
    """The log half-width of the 80% interval of a step at N > 1, up to ``measured_n``
    devices, and where it came from."""

    width_log: float = EXTRAPOLATED
    measured_n: int = 1
    source: str = (
        "no measurement at N > 1: the N > 1 figures are extrapolated, 80% interval "
        f"{factor_interval(EXTRAPOLATED)} assumed (unseen models predicted at N = 2 from "
        "N = 1 alone were 24-38% off)"
    )
    residuals: tuple[float, ...] = ()

    def width_at(self, n: int) -> float:
        if n < 2:
            return 0.0
        beyond = max(1.0, math.log2(n) / math.log2(max(2, self.measured_n)))
        return self.width_log * math.sqrt(beyond)


def from_residuals(residuals: list[float], measured_n: int, what: str) -> StepError:
    """The interval of ``residuals`` (log errors); extrapolated when there are none."""
    r = np.asarray(residuals, float)
    r = r[np.isfinite(r)]
    if len(r) == 0:
        return StepError()
    width = Z80 * math.sqrt(float(np.mean(r**2))) * math.sqrt(1 + 1 / len(r))
    low, high = math.exp(float(r.min())) - 1, math.exp(float(r.max())) - 1
    few = ""
    if len(r) < FEW_RESIDUALS:  # one or two errors are no spread: never narrower than none
        width = max(width, EXTRAPOLATED)
        measure = "measures" if len(r) == 1 else "measure"
        few = f"; {counted(len(r), 'error')} {measure} no spread: at least the unmeasured width"
    return StepError(
        width_log=max(width, math.log(1.02)),
        measured_n=measured_n,
        source=(
            f"80% interval {factor_interval(width)} from "
            f"{counted(len(r), 'leave-one-out prediction')} of {what} ({_errors(low, high)}){few}"
        ),
        residuals=tuple(float(v) for v in r),
    )


def with_own_runs(error: StepError, pairs: list[tuple[float, float | None]]) -> StepError:
    """``error`` saying also how far the calibrated model is from the N > 1 runs it was
    calibrated on (``pairs``: measured, predicted step): leave-one-out measures unseen
    models; a model off at its own runs is off there too."""
    r = [math.log(m / p) for m, p in pairs if p and p > 0 and m > 0]
    if not r:
        return error
    low, high = math.exp(min(r)) - 1, math.exp(max(r)) - 1
    said = (
        f"; at its own {counted(len(r), 'measured N > 1 run')} the calibrated model is "
        f"off by {_span(low, high)} "
        "(measured over predicted)"
    )
    return replace(error, source=error.source + said)


def _span(low: float, high: float) -> str:
    """``-12% to +30%``, or ``+35%`` where both ends read alike (one residual)."""
    return span(f"{low:+.0%}", f"{high:+.0%}", " to ")


def _errors(low: float, high: float) -> str:
    """``errors -12% to +30%``, or ``error +35%`` where both ends read alike."""
    one = f"{low:+.0%}" == f"{high:+.0%}"
    return f"{'error' if one else 'errors'} {_span(low, high)}"


# The most models left out in turn: each costs one calibration on the whole table, so the
# interval's cost is capped (~10 calibrations) however many models a results file holds.
MAX_LEFT_OUT = 10


def _spread(models: list[str], sizes: dict[str, float], most: int) -> list[str]:
    """``most`` of ``models`` spread evenly over their sizes (all when there are fewer):
    the smallest, the largest and those between, the same choice on every run."""
    ordered = sorted(models, key=lambda m: (sizes.get(m, 0.0), m))
    if len(ordered) <= most:
        return ordered
    picks = {round(i * (len(ordered) - 1) / (most - 1)) for i in range(most)}
    return [ordered[i] for i in sorted(picks)]


def leave_one_out(
    table: pd.DataFrame,
    network,
    predict: Callable[[pd.DataFrame, str, list[int]], list[float | None]],
    most: int = MAX_LEFT_OUT,
) -> StepError:
    """Each model with N > 1 rows in ``table`` predicted without them (at most ``most``
    models, spread over their sizes: one calibration each): ``predict(rest, model, ns)``
    gives the predicted step (ms, or None) at each N of ``ns``."""
    ok = trusted_runs(table)
    multi = ok[ok["accelerators"] > 1].dropna(subset=["step_ms_mean"])
    sizes = multi.groupby("model")["params"].max().astype(float).to_dict()
    models = [str(m) for m in multi["model"].unique()]
    chosen = _spread(models, sizes, most)
    residuals, largest = [], 1
    for model in chosen:
        rows = multi[multi["model"] == model]
        rest = ok[~((ok["model"] == model) & (ok["accelerators"] > 1))]
        ns = [int(n) for n in rows["accelerators"]]
        for n, measured, predicted in zip(
            ns, rows["step_ms_mean"].astype(float), predict(rest, model, ns), strict=True
        ):
            if predicted and predicted > 0:
                residuals.append(math.log(measured / predicted))
                largest = max(largest, n)
    what = "the measured N > 1 steps"
    if len(chosen) < len(models):
        what += f" of {len(chosen)} of the {len(models)} models (spread over their sizes)"
    return from_residuals(residuals, largest, what)


# With the priors' range in the interval, what is left for the rest of an unmeasured
# N > 1 step (the link model, the overlap): +/-10% at N = 2, widening as sqrt(log2 N).
ERROR = StepError(
    width_log=math.log(1.10),
    measured_n=1,
    source="no measurement at N > 1: DDP's own work and the slowest device's wait over "
    f"their priors' ranges, and {factor_interval(math.log(1.10))} at N = 2 for the rest "
    "(widening with log2 N)",
)

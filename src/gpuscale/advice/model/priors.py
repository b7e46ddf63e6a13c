"""The model's data, read once, and what the runs do not measure.

``PRIORS`` (``data/advice_priors.json``): each prior's point, range, unit and source. The
N > 1 terms a model given by its numbers leaves unmeasured (10th, 50th and 90th
percentiles; checked by ``benchmarks/eight_gpus_by_numbers.py``): ``DDP_WORK`` (``t_ddp``,
ms: the synchronised less the no-sync step at N = 1, less the bucket copies) and
``STEP_SPREAD`` (``t_wait``: ``E[max of N] - mean`` of a normal spread whose sd is a share
of the fixed cost; Chen et al., "Revisiting distributed synchronous SGD", 2016).
``phrase``: the model's refusals (``data/advice_phrases.json``: the model cannot import
``explain``).

The step's 80% interval at N > 1: each model with N > 1 bench rows left out in turn (at
most ``MAX_LEFT_OUT``), its N > 1 steps predicted from the rest; the log errors ``r`` give
the half-width ``z_0.9 sqrt(mean r^2) sqrt(1 + 1/k)``. Without them, ``EXTRAPOLATED``
(unseen models predicted at N = 2 from N = 1 alone: 24-38% off,
``benchmarks/advise_unseen.py``); wider by ``sqrt(log2 N)`` above the largest measured."""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from dataclasses import dataclass, replace
from importlib import resources
from typing import TYPE_CHECKING

from gpuscale.advice.types import Finding, FindingKind

if TYPE_CHECKING:  # the request's fields read PRIORS at the CLI's start: no pandas there
    import pandas as pd


def read_data(name: str) -> dict:
    return json.loads((resources.files("gpuscale") / "data" / name).read_text("utf-8"))


_BOOK = read_data("advice_phrases.json")
MODEL_PHRASES: dict[str, str] = _BOOK["model"]


def phrase(key: str, **values: object) -> str:
    return MODEL_PHRASES[key].format(**values)


def strategy_name(strategy: str) -> str:
    """The strategy's name in the phrasebook's ``strategies`` (``zero2``: ZeRO-2)."""
    return _BOOK["strategies"][strategy]["name"]


@dataclass(frozen=True, slots=True)
class SourcedPrior:
    """A prior: its most likely value, its range (None: taken as it is), unit, source and
    citation as the advice's sentences give it (``said``)."""

    point: float
    low: float | None
    high: float | None
    unit: str
    source: str
    said: str = ""

    def at(self, which: str) -> float:
        """The value at ``which``: ``low``, ``point`` or ``high``."""
        value = getattr(self, which)
        if value is None:
            raise ValueError(phrase("prior_no_range", source=self.source))
        return value


PRIORS: dict[str, SourcedPrior] = {
    name: SourcedPrior(**{k: entry[k] for k in SourcedPrior.__slots__ if k in entry})
    for name, entry in read_data("advice_priors.json")["priors"].items()
}

# Standard normal quantiles at (i - 0.5) / 20, i = 1..20: the shape of the spread the
# wait prior draws its E[max of N] from (``Compute.wait_ms``).
_HALF_NORMAL_20 = (0.0627, 0.1891, 0.3186, 0.4538, 0.5978, 0.7554, 0.9346, 1.1503, 1.4395, 1.96)
NORMAL_20 = tuple(-q for q in reversed(_HALF_NORMAL_20)) + _HALF_NORMAL_20

FEW_NOISE_STEPS = 10  # a noise scale from fewer steps is a guess


DDP_WORK = PRIORS["ddp_work"]  # ms
STEP_SPREAD = PRIORS["step_spread"]  # a share of the fixed cost


# DDP's gradient bucket, MiB: ``bucket_cap_mb``'s default in PyTorch's
# DistributedDataParallel (the request's default, read where the CLI starts)
DEFAULT_BUCKET_MB = 25.0
Z80 = 1.2816  # two-sided 80%: the 10th and 90th percentiles of a normal
# half-width (log) when nothing at N > 1 was measured
EXTRAPOLATED = math.log(PRIORS["step_error_extrapolated"].point)
FEW_RESIDUALS = 3  # fewer leave-one-out errors than this give no spread of their own
EXTRAPOLATED_SAID = Finding.of(FindingKind.STEP_EXTRAPOLATED, width_log=EXTRAPOLATED, own=())


@dataclass(frozen=True, slots=True)
class StepError:
    """The log half-width of a step's 80% interval at N > 1 up to ``measured_n``, wider by
    ``sqrt(log2 N / log2 measured_n)`` beyond, and whence."""

    width_log: float = EXTRAPOLATED
    measured_n: int = 1
    source: Finding = EXTRAPOLATED_SAID
    residuals: tuple[float, ...] = ()

    def width_at(self, n: int) -> float:
        if n < 2:
            return 0.0
        beyond = max(1.0, math.log2(n) / math.log2(max(2, self.measured_n)))
        return self.width_log * math.sqrt(beyond)


def from_residuals(
    residuals: list[float],
    measured_n: int,
    what: str,
    chosen: int | None = None,
    models: int | None = None,
) -> StepError:
    """The interval of the log errors ``residuals`` of ``what`` (``chosen`` of the ``models``
    where not all were left out)."""
    r = [float(e) for e in residuals if math.isfinite(e)]
    if len(r) == 0:
        return StepError()
    width = Z80 * math.sqrt(sum(e * e for e in r) / len(r)) * math.sqrt(1 + 1 / len(r))
    low, high = math.exp(min(r)) - 1, math.exp(max(r)) - 1
    few = None
    if len(r) < FEW_RESIDUALS:  # one or two errors are no spread: never narrower than none
        width = max(width, EXTRAPOLATED)
        few = len(r)
    source = Finding.of(
        FindingKind.STEP_LEFT_OUT,
        width_log=width,
        predictions=len(r),
        what=what,
        chosen=chosen,
        models=models,
        low=low,
        high=high,
        ends_alike=f"{low:+.0%}" == f"{high:+.0%}",  # to the percent shown: one error
        few=few,
        own=(),
    )
    return StepError(
        width_log=max(width, math.log(1.02)),
        measured_n=measured_n,
        source=source,
        residuals=tuple(r),
    )


def with_own_runs(error: StepError, pairs: list[tuple[float, float | None]]) -> StepError:
    """``error`` saying also how far the model is from its own N > 1 runs (``pairs``:
    measured, predicted step)."""
    r = [math.log(m / p) for m, p in pairs if p and p > 0 and m > 0]
    if not r:
        return error
    low, high = math.exp(min(r)) - 1, math.exp(max(r)) - 1
    own = Finding.of(FindingKind.STEP_OWN_RUNS, runs=len(r), low=low, high=high)
    return replace(error, source=error.source.with_values(own=(own,)))


MAX_LEFT_OUT = 10  # models left out in turn, one calibration each: the interval's cost capped


def leave_one_out(
    table: pd.DataFrame,
    predict: Callable[[pd.DataFrame, str, list[int]], list[float | None]],
) -> StepError:
    """Each model with N > 1 rows in ``table`` predicted without them (at most
    ``MAX_LEFT_OUT``, spread evenly over the sizes, the smallest and largest among them):
    ``predict(rest, model, ns)`` gives the step (ms, or None) at each N of ``ns``."""
    from gpuscale.advice.records import trusted_runs  # lazy: pandas (as the table)

    ok = trusted_runs(table)
    multi = ok[ok["accelerators"] > 1].dropna(subset=["step_ms_mean"])
    sizes = multi.groupby("model")["params"].max().astype(float).to_dict()
    models = [str(m) for m in multi["model"].unique()]
    chosen = sorted(models, key=lambda m: (sizes.get(m, 0.0), m))
    if len(chosen) > MAX_LEFT_OUT:
        last = len(chosen) - 1
        picks = {round(i * last / (MAX_LEFT_OUT - 1)) for i in range(MAX_LEFT_OUT)}
        chosen = [chosen[i] for i in sorted(picks)]
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
    spread = len(chosen) < len(models)  # not all left out: how many, of how many
    of = (len(chosen), len(models)) if spread else (None, None)
    return from_residuals(residuals, largest, "the measured N > 1 steps", *of)


# With the priors' range in the interval, what is left for the rest of an unmeasured
# N > 1 step (the link model, the overlap): +/-10% at N = 2, widening as sqrt(log2 N).
UNMEASURED_REST = math.log(PRIORS["step_error_rest"].point)
ERROR = StepError(
    width_log=UNMEASURED_REST,
    measured_n=1,
    source=Finding.of(FindingKind.STEP_OVER_PRIORS, width_log=UNMEASURED_REST, own=()),
)

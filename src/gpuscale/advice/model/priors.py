"""The model's data, read once: ``PRIORS`` (``data/advice_priors.json``: each prior's point,
range, unit and source), ``phrase`` (the model's refusals, ``data/advice_phrases.json``: the
model cannot import ``explain``), the step's 80% interval at N > 1 (``StepError``); and what
training to the target takes: ``E(B) = E_min (1 + B / B_noise)`` samples at global batch
``B`` (``analysis.critical_batch``), from an MLPerf workload's reference convergence points,
a noise scale given or the bench's (``resolved``); and MLPerf's least time to train."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from importlib import resources

from gpuscale.advice.types import Finding, FindingKind
from gpuscale.analysis.critical_batch import ConvergenceModel, NoiseScale
from gpuscale.mlperf.bundled import load_round
from gpuscale.mlperf.rcp import WorkloadRcps
from gpuscale.tables.requests import NamedError, ref
from gpuscale.tables.workloads import Unit


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


# The N > 1 terms a model given by its numbers leaves unmeasured (10th, 50th and 90th
# percentiles; checked by ``benchmarks/eight_gpus_by_numbers.py``): ``t_ddp``, ms (the
# synchronised less the no-sync step at N = 1, less the bucket copies), and the spread of
# ``t_wait``, a share of the fixed cost (Chen et al., "Revisiting distributed synchronous
# SGD", 2016)
DDP_WORK = PRIORS["ddp_work"]
STEP_SPREAD = PRIORS["step_spread"]


# DDP's gradient bucket, MiB: ``bucket_cap_mb``'s default in PyTorch's
# DistributedDataParallel (the request's default, read where the CLI starts)
# The overlap assumed where nothing measured it, by the link class a count's gradients take:
# half through host memory (no P2P), else all (``data/advice_priors.json`` overlap).
OVERLAP_BY_CLASS: dict[str, float] = read_data("advice_priors.json")["priors"]["overlap"][
    "by_link_class"
]


def assumed_overlap(link: str | None) -> float:
    """The overlap on ``link`` class (None: a link of no class, the prior's point)."""
    return OVERLAP_BY_CLASS.get(link or "", PRIORS["overlap"].point)


DEFAULT_BUCKET_MB = 25.0
# half-width (log) when nothing at N > 1 was measured (unseen models predicted at N = 2 from
# N = 1 alone: 24-38% off, ``benchmarks/advise_unseen.py``)
EXTRAPOLATED = math.log(PRIORS["step_error_extrapolated"].point)
EXTRAPOLATED_SAID = Finding.of(FindingKind.STEP_EXTRAPOLATED, width_log=EXTRAPOLATED, own=())


@dataclass(frozen=True, slots=True)
class StepError:
    """The log half-width of a step's 80% interval at N > 1 (from left-out errors:
    ``calibrate/measured.py``) up to ``measured_n``, wider by
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


# With the priors' range in the interval, what is left for the rest of an unmeasured
# N > 1 step (the link model, the overlap): +/-10% at N = 2, widening as sqrt(log2 N).
UNMEASURED_REST = math.log(PRIORS["step_error_rest"].point)
ERROR = StepError(
    width_log=UNMEASURED_REST,
    measured_n=1,
    source=Finding.of(FindingKind.STEP_OVER_PRIORS, width_log=UNMEASURED_REST, own=()),
)


@dataclass(frozen=True, slots=True)
class Convergence:
    """The convergence ``model`` (None: none prices a larger batch), whether the samples to
    train are its scale, the bench's noise scale measured over too few steps (``thin``),
    MLPerf's ``floor``, and the bench noise scale's steps where it prices the batch."""

    model: ConvergenceModel | None
    samples_used: bool
    thin: NoiseScale | None
    floor: tuple[tuple[int, float, Finding], ...]
    noise_steps: int | None


def resolved(
    found: WorkloadRcps | None,
    fitted: ConvergenceModel | None,
    *,
    workload: str | None,
    noise_scale: float | None,
    samples: float,
    samples_given: bool,
    reference_batch: float,
    measured: NoiseScale | None,
    max_devices: int,
) -> Convergence:
    """``convergence_for`` (the bench's noise scale only from ``FEW_NOISE_STEPS`` steps) and
    MLPerf's least time to train up to ``max_devices``."""
    given = noise_scale is not None or workload is not None
    few = measured is not None and measured.steps < FEW_NOISE_STEPS
    thin = measured if few and not given else None
    kept = measured if thin is None else None
    model, samples_used = convergence_for(
        noise_scale=noise_scale,
        rcps=found,
        fitted=fitted,
        samples=samples,
        reference_batch=reference_batch,
        measured=kept,
        samples_given=samples_given,
    )
    floor = mlperf_floor(workload, max_devices) if workload else ()
    bench_priced = kept is not None and noise_scale is None and not workload
    steps = kept.steps if bench_priced else None
    return Convergence(model, samples_used, thin, floor, steps)


def convergence_for(
    *,
    noise_scale: float | None,
    rcps: WorkloadRcps | None,
    samples: float,
    reference_batch: float,
    measured: NoiseScale | None = None,
    samples_given: bool = False,
    fitted: ConvergenceModel | None = None,
) -> tuple[ConvergenceModel | None, bool]:
    """The convergence model, and whether ``samples`` are its scale: an MLPerf workload's RCP
    fit (``fitted``, of ``rcps``; where its RCPs count samples, its own, ``samples_given``
    refused; RCPs without a fit are refused by ``calibrate/build.py``), else a given noise
    scale, else the bench's, with ``E_min`` such that ``samples`` are needed at
    ``reference_batch``; None without any."""
    if rcps is not None and fitted is not None:
        if rcps.unit is Unit.SAMPLES:
            if samples_given:
                workload = ref("workload", rcps.workload)
                raise NamedError(
                    phrase("samples_with_rcps", samples=ref("samples"), workload=workload)
                )
            return fitted, False
        # RCPs in epochs: the shape (B_noise) from them, the scale from ``samples``
        b_noise, source = fitted.b_noise, fitted.source + ", scaled"
    elif noise_scale is not None:
        if not noise_scale > 0:
            raise ValueError(f"noise scale must be positive, got {noise_scale}")
        b_noise, source = noise_scale, "noise scale as given"
    elif measured is not None:  # the bench's: its numbers said by ``explain.explanation.worded``
        b_noise, source = measured.b_simple, ""
    else:
        return None, True
    e_min = samples / (1 + reference_batch / b_noise)
    return ConvergenceModel(e_min, b_noise, source), True


MARGIN = 2.0  # mlperf_floor's allowance for convergence at a smaller batch


def mlperf_floor(workload: str, largest: int = 1024) -> tuple[tuple[int, float, Finding], ...]:
    """(N, minutes, the system) for N = 1..``largest``: the least time to train N accelerators
    could need on ``workload`` by the bundled MLPerf results: the fastest system with M >= N,
    scaled ideally to N and halved (``T_M M / N / 2``: a margin for a smaller global batch).
    Below it the inputs cannot be true."""
    scores = load_round().scores
    rows = scores[scores["workload"] == workload].dropna(subset=["time_to_train_min"])
    if rows.empty:
        return ()
    fastest = rows.loc[rows.groupby("accelerators")["time_to_train_min"].idxmin()]
    out = []
    for n in range(1, largest + 1):
        above = fastest[fastest["accelerators"] >= n]
        if above.empty:
            break
        bound = above["time_to_train_min"] * above["accelerators"] / n / MARGIN
        best = above.loc[bound.idxmin()]
        why = Finding.of(
            FindingKind.MLPERF_SYSTEM,
            round=str(best["round"]),
            submitter=str(best["submitter"]),
            devices=int(best["accelerators"]),
            accelerator=str(best["accelerator_model"]),
            minutes=float(best["time_to_train_min"]),
        )
        out.append((n, float(bound.min()), why))
    return tuple(out)

"""The model's data, read once: ``PRIORS`` (``data/advice_priors.json``: each prior's point,
range, unit and source), ``phrase`` (the model's refusals, ``data/advice_phrases.json``: the
model cannot import ``explain``) and the step's 80% interval at N > 1 (``StepError``)."""

from __future__ import annotations

import math
from dataclasses import dataclass

from gpuscale.advice.types import Finding, FindingKind, read_data

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
    said: str | Finding = ""

    def at(self, which: str) -> float:
        """The value at ``which``: ``low``, ``point`` or ``high``."""
        value = getattr(self, which)
        if value is None:
            raise ValueError(phrase("prior_no_range", source=self.source))
        return value


_PRIORS = read_data("advice_priors.json")["priors"]
PRIORS: dict[str, SourcedPrior] = {
    name: SourcedPrior(**{k: entry[k] for k in SourcedPrior.__slots__ if k in entry})
    for name, entry in _PRIORS.items()
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
DDP_COPIES = PRIORS["ddp_copies"].point  # bytes of memory traffic per gradient byte
REFERENCE_MEMORY_GBS = PRIORS["reference_memory_gbs"].point  # the DDP prior's runs' device
# that device, assumed where none is named (DDP's copies, the memory check)
REFERENCE_DEVICE = "H100 SXM5 80GB"
REFERENCE_PCIE_DEVICE = "H100 PCIe 80GB"  # its PCIe board: the memory check's on a PCIe link


# The overlap assumed where nothing measured it, by the link class a count's gradients take:
# half through host memory (no P2P), else all (``data/advice_priors.json`` overlap).
OVERLAP_BY_CLASS: dict[str, float] = _PRIORS["overlap"]["by_link_class"]


def assumed_overlap(link: str | None) -> float:
    """The overlap on ``link`` class (None: a link of no class, the prior's point)."""
    return OVERLAP_BY_CLASS.get(link or "", PRIORS["overlap"].point)


# DDP's gradient bucket, MiB: ``bucket_cap_mb``'s default in PyTorch's
# DistributedDataParallel (the request's default, read where the CLI starts)
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

"""What the advice is computed from, as one record of small parts (``cal.model.compute``,
``cal.run.batch``), each term said as an :class:`Assumption`: ``calibrate.build`` makes it
once, the search and the words read it."""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import pandas as pd

from gpuscale.advice.memory import MemoryCheck, MemorySaid
from gpuscale.advice.model.fixed_cost import FixedCost
from gpuscale.advice.model.hardware import NO_DEVICE, DeviceRecord, Power
from gpuscale.advice.model.priors import DEFAULT_BUCKET_MB, StepError, strategy_name
from gpuscale.advice.model.step import Compute, FamilyBasis, ModelSpec
from gpuscale.advice.records import Measured
from gpuscale.advice.types import Finding, FindingKind, Measure, Source, TermId
from gpuscale.analysis.critical_batch import ConvergenceModel, NoiseScale
from gpuscale.bench.support import Support
from gpuscale.interconnect.network import Network
from gpuscale.quantities import filled
from gpuscale.tables import DEFAULT_EFFICIENCY_THRESHOLD

# Each term's name in the words (``-f json``'s ``term``)
TERM_NAMES = {
    TermId.FIXED: "Fixed per-step cost",
    TermId.OVERLAP: "Overlap",
    TermId.DDP: "DDP's own work",
    TermId.WAIT: "Wait for the slowest device",
    TermId.INPUT: "Input pipeline",
    TermId.CONVERGENCE: "Samples to converge at a larger global batch",
    TermId.LINK: "Link",
    TermId.INTER_NODE: "Link between nodes",
    TermId.LINK_CLASS: "Link class",
}


NUMBER = ("value", "low", "high", "unit")


@dataclass(frozen=True, slots=True)
class Quantity:
    """A term's value in ``unit``, its range, its value per device count (``at``), DDP's
    bucket copies (``copies_ms``) where the value and ends include them."""

    value: float
    unit: str
    low: float | None = None
    high: float | None = None
    at: tuple[tuple[int, float], ...] = ()
    copies_ms: float | None = None

    def with_copies(self, copies_ms: float) -> Quantity:
        """The term with DDP's bucket copies (ms) in its value and ends."""
        if not copies_ms:
            return self
        low = None if self.low is None else self.low + copies_ms
        high = None if self.high is None else self.high + copies_ms
        return replace(self, value=self.value + copies_ms, low=low, high=high, copies_ms=copies_ms)

    def to_dict(self) -> dict[str, object]:
        found = {key: getattr(self, key) for key in NUMBER}
        if self.at:
            found["at"] = {str(n): v for n, v in self.at}
        if self.copies_ms is not None:
            found["copies_ms"] = self.copies_ms
        return found


@dataclass(frozen=True, kw_only=True, slots=True)
class Assumption:
    """One term: its value said and as a number (None for a choice), whence, how to measure it."""

    term: TermId
    value: str
    source: Source
    basis: str
    measure: Measure = field(default_factory=Measure)  # empty where measured
    strategy: str = "ddp"  # whose own work a ``TermId.DDP`` term is (ddp, zero2, fsdp, hybrid)
    quantity: Quantity | None = None

    @property
    def name(self) -> str:
        """The term's name: ``Overlap``, ``FSDP's own work``."""
        if self.term == TermId.DDP:
            return f"{strategy_name(self.strategy)}'s own work"
        return TERM_NAMES[self.term]

    def to_dict(self) -> dict[str, object]:
        """The term as ``-f json`` gives it: its number, range and unit, then the words."""
        number = dict.fromkeys(NUMBER) if self.quantity is None else self.quantity.to_dict()
        return {
            "term": self.name,
            **number,
            "said": self.value,
            "source": str(self.source),
            "basis": self.basis,
            "measure": str(self.measure),
            "kind": str(self.term),
        }

    def sentence(self) -> str:
        how = filled("; to measure: {}", self.measure)
        return f"{self.name}: {self.value} ({self.source}: {self.basis}{how})."


@dataclass(frozen=True, kw_only=True, slots=True)
class BenchTerms:
    """What a bench file measured beside the calibration: the strategy's own work (ms per
    step), the N = 1 steps' sd over their mean (None: under two), the slowdowns held."""

    overlap_measured: bool
    own_ms: float
    spread: float | None
    held: tuple[tuple[int, float], ...]


@dataclass(frozen=True, slots=True)
class OneDevice:
    """The bench's N = 1 run of the model advised on (ms; ``own_ms``: the strategy's own work
    the N = 1 row leaves out) and the group and device a run set beside it shares."""

    step_ms: float
    batch: int
    accum: int
    strategy: str
    own_ms: float
    config_group: str = ""
    device_name: str | None = None
    fsdp_own_ms: float = 0.0  # FSDP's own work in ``step_ms``


@dataclass(frozen=True, kw_only=True, slots=True)
class Shape:
    """``t(b) = max(floor_ms, fixed_ms + b ms_per_sample)`` fitted to (batch, forward +
    backward ms) points; ``left_out``: (batch, relative error) predicted from the rest."""

    floor_ms: float
    fixed_ms: float
    ms_per_sample: float
    points: tuple[tuple[float, float], ...]
    left_out: tuple[tuple[float, float], ...] = ()

    def ms(self, batch: float) -> float:
        return max(self.floor_ms, self.fixed_ms + batch * self.ms_per_sample)

    @property
    def knee(self) -> float | None:
        """The batch where the line meets the floor (None: no floor)."""
        if self.floor_ms <= self.fixed_ms or self.ms_per_sample <= 0:
            return None
        return (self.floor_ms - self.fixed_ms) / self.ms_per_sample

    def finding(self) -> Finding:
        return Finding.of(
            FindingKind.STEP_SHAPE,
            batches=tuple(b for b, _ in self.points),
            floor_ms=self.floor_ms,
            knee=self.knee,
            ms_per_sample=self.ms_per_sample,
            from_ms=self.fixed_ms if self.fixed_ms > 0 else None,
            left_out=tuple(e for _, e in self.left_out),
            left_out_batches=tuple(b for b, _ in self.left_out),
            errors_measured=bool(self.left_out),
        )


@dataclass(frozen=True, kw_only=True, slots=True)
class StepModel:
    """The model and one device's step: the fixed cost (None: not split), the compute at
    the priors' ends, the step's 80% interval at N > 1, its family's basis."""

    name: str = "the model"
    spec: ModelSpec
    compute: Compute
    fixed: FixedCost | None = None
    prior_range: tuple[Compute, ...] = ()
    error: StepError = field(default_factory=StepError)
    family: FamilyBasis | None = None


SCALINGS = ("search", "weak", "strong")
# One end of an assumed term's range: (term, end, its value there, unit, the fields that
# differ there by part: ``Calibration.at``)
End = tuple[str, str, float, str, dict[str, dict[str, object]]]


@dataclass(frozen=True, kw_only=True, slots=True)
class Run:
    """How a step is run: the per-device batch (``accum`` micro-steps a step), the batches
    the search may try, the global batch kept (None: it may change), ``scaling`` ("search":
    a convergence model decides), the share of communication hidden (None: the default)."""

    batch: int
    accum: int = 1
    min_batch: int = 1
    max_batch: int | None = None
    max_accum: int = 64
    global_batch: int | None = None
    scaling: str = "search"
    strategy: str = "ddp"
    overlap: float | None = None
    bucket_mb: float = DEFAULT_BUCKET_MB  # DDP's bucket (MiB)

    def __post_init__(self) -> None:
        if self.batch < 1 or self.max_accum < 1:
            raise ValueError("batch and max accumulation must be >= 1")
        if self.max_batch is not None and self.max_batch < self.batch:
            raise ValueError("the largest per-device batch is at least the batch")
        most = self.largest_batch * self.max_accum  # what one device takes in one step
        if self.global_batch is not None and self.global_batch > most:
            raise ValueError(
                f"global batch {self.global_batch:,} is more than one device takes in a step: "
                f"at most {most:,} (per-device batch at most {self.largest_batch:,} x at most "
                f"{self.max_accum} accumulation steps); give a global batch of {most:,} or less"
            )
        if self.scaling not in SCALINGS:
            raise ValueError(f"scaling is one of {', '.join(SCALINGS)}, not {self.scaling!r}")

    @property
    def largest_batch(self) -> int:
        return self.max_batch if self.max_batch is not None else self.batch

    @property
    def kept_global_batch(self) -> int | None:
        if self.global_batch is not None:
            return self.global_batch
        if self.scaling == "strong":
            return self.batch * self.accum
        return None


@dataclass(frozen=True, kw_only=True, slots=True)
class Machine:
    """The network and the devices on it: whether the link was assumed, what each device
    holds (``memory``; None: one device holds the model, or its memory is unknown)."""

    network: Network
    max_devices: int = 8
    device: DeviceRecord = NO_DEVICE
    power: Power = field(default_factory=lambda: Power(None, "unknown"))
    link_assumed: bool = False
    memory: MemoryCheck | None = None
    memory_said: MemorySaid = field(default_factory=MemorySaid)

    @property
    def device_counts(self) -> list[int]:
        return self.network.counts_up_to(self.max_devices)

    @property
    def network_name(self) -> str:
        return self.network.name_over(self.device_counts)


@dataclass(frozen=True, kw_only=True, slots=True)
class Runs:
    """What the bench's runs of the model advised on say: the model whose runs measure a
    term (None: by numbers), the GPUs its host had (None: unknown), whether its N > 1 runs
    saw the same samples on every rank."""

    from_bench: bool = False
    own_model: str | None = None
    measured: tuple[Measured, ...] = ()
    one_device: OneDevice | None = None
    evidence: Support | None = None
    host_devices: int | None = None
    same_samples: bool = False


@dataclass(frozen=True, kw_only=True, slots=True)
class Bench:
    """What the bench measured of one model beside its step: communication measured over
    predicted (``comm_scale``, read from ``comm_levels``), the largest batch it holds."""

    bench_model: str = ""
    config_group: str = ""
    device_kind: str | None = None
    threads: int | None = None
    shape: Shape | None = None
    noise: NoiseScale | None = None
    comm_scale: float | None = None
    comm_support: Support | None = None
    comm_levels: tuple[pd.DataFrame, ...] = ()
    max_batch: int | None = None
    memory_note: Finding | None = None
    measured_steps: pd.DataFrame = field(default_factory=pd.DataFrame)
    one_device: OneDevice | None = None
    notes: tuple[str | Finding, ...] = ()


@dataclass(frozen=True, kw_only=True, slots=True)
class Said:
    """Where each value came from: every term not measured (by numbers, the N > 1 priors
    apart), whether an input cannot be true, why this bench model was chosen."""

    sources: tuple[str | Finding, ...] = ()
    warnings: tuple[str | Finding, ...] = ()
    assumptions: tuple[Assumption, ...] = ()
    priors_said: tuple[Assumption, ...] = ()
    implausible: bool = False
    model_note: str = ""
    chosen: str = ""


@dataclass(frozen=True, kw_only=True, slots=True)
class Search:
    """The search's settings (the request's, checked there); MLPerf's fastest system per
    count (devices, minutes, system); the changes at each end of each assumed range."""

    target_efficiency: float = 0.7
    price_per_device_hour: float | None = None
    threshold: float = DEFAULT_EFFICIENCY_THRESHOLD
    samples: float = 1e7
    convergence: ConvergenceModel | None = None
    defaults: tuple[str, ...] = ()
    noise_steps: int | None = None
    mlperf_floor: tuple[tuple[int, float, str], ...] = ()
    ends: tuple[End, ...] = ()


@dataclass(frozen=True, kw_only=True, slots=True)
class Benched:
    """The bench's calibration of one model (``calibrate.calibration.calibrate``)."""

    model: StepModel
    run: Run
    device: DeviceRecord
    bench: Bench


@dataclass(frozen=True, kw_only=True, slots=True)
class Calibration:
    """What the advice is computed from; ``bench``: None by numbers."""

    model: StepModel
    run: Run
    machine: Machine
    runs: Runs = field(default_factory=Runs)
    said: Said = field(default_factory=Said)
    search: Search = field(default_factory=Search)
    bench: Bench | None = None

    def at(self, changes: dict[str, dict[str, object]]) -> Calibration:
        """This record with ``changes`` (part name -> the part's fields changed)."""
        parts = {name: replace(getattr(self, name), **fields) for name, fields in changes.items()}
        return replace(self, **parts)

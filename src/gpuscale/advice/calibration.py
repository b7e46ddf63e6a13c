"""What the advice is computed from, as one record: :class:`Calibration`, made of small
parts, each one concept and each read by name (``cal.model.compute``, ``cal.run.batch``).

Its parts: :class:`StepModel`, :class:`Run`, :class:`Machine`, :class:`Runs`,
:class:`Bench`, :class:`Said` and :class:`Search`, each said by its own docstring.

``calibrate.build`` makes it once, in steps that each return parts: the machine
(``link.machine_of``), then the model from a bench (``bench_basis.from_bench``, on the
bench's calibration of one model: :class:`Benched`, the same parts) or from numbers
(``from_numbers.from_numbers``), then the request's run and search settings. The search
reads it (``search.recommend``) and the words render it (``explain``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace

import pandas as pd

from gpuscale.advice.assumed import Assumption
from gpuscale.advice.measured_runs import Measured
from gpuscale.advice.memory import MemoryCheck
from gpuscale.advice.model.fixed_cost import FixedCost
from gpuscale.advice.model.hardware import NO_DEVICE, DeviceRecord
from gpuscale.advice.model.network import DEFAULT_BUCKET_MB
from gpuscale.advice.model.power import Power
from gpuscale.advice.model.priors import StepError
from gpuscale.advice.model.step import Compute, FamilyBasis, ModelSpec
from gpuscale.advice.types import End, Finding, FindingKind
from gpuscale.analysis.critical_batch import ConvergenceModel, NoiseScale
from gpuscale.bench.support import Support
from gpuscale.interconnect.network import Network
from gpuscale.tables import DEFAULT_EFFICIENCY_THRESHOLD


@dataclass(frozen=True, slots=True)
class OneDevice:
    """The bench's N = 1 run of the model advised on, as it trained: its step (ms, DDP's
    synchronised step or FSDP's), its per-device batch and accumulation, its strategy and
    the strategy's own work in it that the N = 1 row leaves out (``own_ms``: DDP's, its
    synchronised minus no-sync step; FSDP's, its step less its bare step); its configuration
    group and device, what a measured run must share to be set beside the advice
    (``tables.bench_runs.runs_like``)."""

    step_ms: float
    batch: int
    accum: int
    strategy: str
    own_ms: float
    config_group: str = ""
    device_name: str | None = None
    # FSDP: its own work in ``step_ms`` (ms); ``own_ms`` the part the N = 1 row leaves out
    # (the step less the bare module's, where the bench timed a faster bare step), the rest
    # kept in the N = 1 row: every speedup then overstated by up to step / (step - rest)
    fsdp_own_ms: float = 0.0


@dataclass(frozen=True, kw_only=True, slots=True)
class Shape:
    """``t(b) = max(floor_ms, fixed_ms + b ms_per_sample)`` fitted to ``points`` ((batch,
    forward + backward ms) measured), and ``left_out``: (batch, relative error) of each
    measured batch predicted from the others."""

    floor_ms: float
    fixed_ms: float
    ms_per_sample: float
    points: tuple[tuple[float, float], ...]
    left_out: tuple[tuple[float, float], ...] = ()

    def ms(self, batch: float) -> float:
        return max(self.floor_ms, self.fixed_ms + batch * self.ms_per_sample)

    @property
    def knee(self) -> float | None:
        """The batch where the rising part meets the floor (None: no floor)."""
        if self.floor_ms <= self.fixed_ms or self.ms_per_sample <= 0:
            return None
        return (self.floor_ms - self.fixed_ms) / self.ms_per_sample

    def finding(self) -> Finding:
        """What was measured (the batches), the shape between and beyond (its floor up to
        the knee, where one; its rate from its intercept, where positive), and its error on
        each batch left out."""
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
    """What the model is and one device's step of it: its name as said, its size
    (``spec``), its compute (``compute``: the fixed per-step cost and per-sample work, the
    optimizer's and DDP's work, the wait), the fixed cost with its range and source
    (``fixed``; None: not split), the compute at the priors' low and high ends
    (``prior_range``), the step's 80% interval at N > 1 (``error``) and its family's
    break-even basis (``family``; None: the model alone)."""

    name: str = "the model"
    spec: ModelSpec
    compute: Compute
    fixed: FixedCost | None = None
    prior_range: tuple[Compute, ...] = ()
    error: StepError = field(default_factory=StepError)
    family: FamilyBasis | None = None


SCALINGS = ("search", "weak", "strong")


@dataclass(frozen=True, kw_only=True, slots=True)
class Run:
    """How a step is run: ``batch`` the per-device batch advised on (``accum`` micro-steps
    of it a step), the per-device batches the search may try (``min_batch`` up to
    ``max_batch``, the largest that fits; None: ``batch``) and the most micro-steps
    (``max_accum``); ``global_batch`` kept at every count (strong scaling; None: it may
    change); ``scaling``: "search" (with a convergence model the search over batch and
    accumulation decides, without one the per-device batch is kept), "weak" (the
    per-device batch kept) or "strong" (the global batch, ``global_batch`` else ``batch``
    x ``accum``, kept); the strategy (DDP or FSDP), the share of communication hidden
    (``overlap``; None: the default) and DDP's bucket (MiB)."""

    batch: int
    accum: int = 1
    min_batch: int = 1
    max_batch: int | None = None
    max_accum: int = 64
    global_batch: int | None = None
    scaling: str = "search"
    strategy: str = "ddp"
    overlap: float | None = None
    bucket_mb: float = DEFAULT_BUCKET_MB

    def __post_init__(self) -> None:
        if self.batch < 1 or self.max_accum < 1:
            raise ValueError("batch and max accumulation must be >= 1")
        if self.max_batch is not None and self.max_batch < self.batch:
            raise ValueError("the largest per-device batch is at least the batch")
        if self.global_batch is not None and self.global_batch < 1:
            raise ValueError("global batch must be >= 1")
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
        """The largest per-device batch a device holds (memory), ``batch`` when unknown."""
        return self.max_batch if self.max_batch is not None else self.batch

    @property
    def kept_global_batch(self) -> int | None:
        """The global batch every count keeps (strong scaling), None when it may change."""
        if self.global_batch is not None:
            return self.global_batch
        if self.scaling == "strong":
            return self.batch * self.accum
        return None


@dataclass(frozen=True, kw_only=True, slots=True)
class MemorySaid:
    """What the memory check's words rest on (``explain.build_words.memory_said``): whether
    its device is assumed (none named, recorded or implied), and the bench's N = 1 peak
    memory at batch ``per_device`` and the model state it held (GB; None: no peak)."""

    device_assumed: bool = False
    per_device: float | None = None
    peak_gb: float | None = None
    state_gb: float | None = None


@dataclass(frozen=True, kw_only=True, slots=True)
class Machine:
    """The network and the devices on it: the links (``network``), the most devices
    searched (the request's, capped by the topology or the host's cores), the device's
    catalogue record (named, recorded by the bench, else the link's), its watts, whether
    the link was assumed (none given, detected or measured) or is this machine's detected
    preset, and what each device holds per count and strategy (``memory``; None: one
    device holds the model, or its memory is unknown; its words' numbers: ``memory_said``)."""

    network: Network
    max_devices: int = 8
    device: DeviceRecord = NO_DEVICE
    power: Power = field(default_factory=lambda: Power(None, "unknown"))
    link_assumed: bool = False
    link_detected: str | None = None
    memory: MemoryCheck | None = None
    memory_said: MemorySaid = field(default_factory=MemorySaid)

    def __post_init__(self) -> None:
        if self.max_devices < 1:
            raise ValueError("max devices must be >= 1")

    @property
    def device_counts(self) -> list[int]:
        """1, 2, 4, ... and the maximum; across nodes only whole nodes."""
        return self.network.counts_up_to(self.max_devices)

    @property
    def network_name(self) -> str:
        """The network, its link between nodes named only where a count searched spans
        nodes."""
        return self.network.name_over(self.device_counts)


@dataclass(frozen=True, kw_only=True, slots=True)
class Runs:
    """What the bench's runs of the model advised on say: whether a bench was read, the
    bench model whose runs measure a term (``own_model``; None: a model given by numbers
    or by its size), its N > 1 runs (a count they disagree with rests on them), its N = 1
    run as it trained, what the runs rest on (``evidence``; None: numbers), the GPUs the
    bench's host had (None: unknown, or a CPU) and whether its N > 1 runs saw the same
    samples on every rank."""

    from_bench: bool = False
    own_model: str | None = None
    measured: tuple[Measured, ...] = ()
    one_device: OneDevice | None = None
    evidence: Support | None = None
    host_devices: int | None = None
    same_samples: bool = False


@dataclass(frozen=True, kw_only=True, slots=True)
class Bench:
    """What the bench measured of one model beside its step: the model whose runs these
    are, its configuration group (its batch included), the device kind (``cuda``, ``cpu``)
    and threads per process of its N = 1 run, its step against the batch (``shape``), the
    noise scale its gradient norms measured, the communication measured over predicted
    (``comm_scale``, read on a network from ``comm_levels``: the N > 1 runs of every model
    of the configuration, the family, its own; ``comm_support``: the runs it was read
    from), the largest per-device batch its memory allows (``max_batch``; None: unknown)
    and how it was found (``memory_note``), its measured steps (N,
    step_ms), its N = 1 step as it trained and the strategy's own work in it
    (``one_step_own_ms``: FSDP's, ``bench.table.fsdp_own``; 0 for DDP), and notes on the
    rows it read."""

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
    one_step_ms: float = math.nan
    one_step_own_ms: float = 0.0
    notes: tuple[str | Finding, ...] = ()


@dataclass(frozen=True, kw_only=True, slots=True)
class Said:
    """Where each value came from: ``sources`` and ``warnings`` (inputs that cannot be
    true, said where they were found), every term not measured (``assumptions``; by
    numbers, DDP's work and the wait from their priors apart: ``priors_said``), whether an
    input cannot be true (``implausible``: no count above 1), the bench model advised on
    where larger ones were passed over and why (``model_note``, said first) and which one
    was advised on (``chosen``, said after the decision)."""

    sources: tuple[str | Finding, ...] = ()
    warnings: tuple[str | Finding, ...] = ()
    assumptions: tuple[Assumption, ...] = ()
    priors_said: tuple[Assumption, ...] = ()
    implausible: bool = False
    model_note: str = ""
    chosen: str = ""


@dataclass(frozen=True, kw_only=True, slots=True)
class Search:
    """The search's settings: the efficiency a count must keep, the price per device-hour,
    the equilibrium's share of the best (``threshold``), the samples to train at batch
    ``Run.batch`` on one device where there is no convergence model (else ``convergence``
    gives them at every batch), what the request left to a default that the answer says
    first (``defaults``: "samples", "batch", "link"), the steps of the bench's noise scale
    (None: not measured), MLPerf's fastest system per count for the workload ((devices,
    minutes, system)) and the record's changes at each end of every assumed term's range
    (``ends``)."""

    target_efficiency: float = 0.7
    price_per_device_hour: float | None = None
    threshold: float = DEFAULT_EFFICIENCY_THRESHOLD
    samples: float = 1e7
    convergence: ConvergenceModel | None = None
    defaults: tuple[str, ...] = ()
    noise_steps: int | None = None
    mlperf_floor: tuple[tuple[int, float, str], ...] = ()
    ends: tuple[End, ...] = ()

    def __post_init__(self) -> None:
        if not 0 < self.target_efficiency <= 1:
            raise ValueError("target efficiency must be in (0, 1]")
        if self.price_per_device_hour is not None and not self.price_per_device_hour >= 0:
            raise ValueError("price must be >= 0")
        if not (self.samples > 0 and math.isfinite(self.samples)):
            raise ValueError("samples to train must be positive")


@dataclass(frozen=True, kw_only=True, slots=True)
class Benched:
    """The bench's calibration of one model (``calibrate.calibration.calibrate``), in the
    record's own parts: its step, the run it was benched at (batch, accumulation,
    strategy, bucket, the overlap measured), the device its runs recorded, and the rest of
    what the bench measured of it."""

    model: StepModel
    run: Run
    device: DeviceRecord
    bench: Bench


@dataclass(frozen=True, kw_only=True, slots=True)
class Calibration:
    """What the advice is computed from (the module's docstring): the parts, each read by
    name; ``bench`` the bench's measurements of the model advised on (None: numbers)."""

    model: StepModel
    run: Run
    machine: Machine
    runs: Runs = field(default_factory=Runs)
    said: Said = field(default_factory=Said)
    search: Search = field(default_factory=Search)
    bench: Bench | None = None

    def at(self, changes: dict[str, dict[str, object]]) -> Calibration:
        """This record with ``changes`` (part name -> the part's fields changed): the
        record at one end of an assumed term's range (``Search.ends``)."""
        parts = {name: replace(getattr(self, name), **fields) for name, fields in changes.items()}
        return replace(self, **parts)

"""What the advice is computed from: one record of small parts (``cal.run.batch``)."""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from gpuscale.advice.model.fixed_cost import FixedCost
from gpuscale.advice.model.hardware import NO_DEVICE, DeviceRecord, Power
from gpuscale.advice.model.network import MeasuredComm
from gpuscale.advice.model.priors import DEFAULT_BUCKET_MB, StepError
from gpuscale.advice.model.step import Compute, ModelSpec
from gpuscale.advice.records import Asked, Assumption
from gpuscale.advice.types import Finding, FindingKind, Measured
from gpuscale.analysis.critical_batch import ConvergenceModel, NoiseScale
from gpuscale.bench.support import Support
from gpuscale.hardware.memory import MemoryCheck
from gpuscale.interconnect.network import Link, Network
from gpuscale.tables import DEFAULT_EFFICIENCY_THRESHOLD


@dataclass(frozen=True, kw_only=True, slots=True)
class Shape:
    """``t(b) = max(floor_ms, fixed_ms + b ms_per_sample)`` fitted to (batch, forward +
    backward ms) points; ``left_out``: (batch, relative error) predicted from the rest;
    ``knee``: the batch where the line meets the floor (None: no floor)."""

    floor_ms: float
    fixed_ms: float
    ms_per_sample: float
    points: tuple[tuple[float, float], ...]
    left_out: tuple[tuple[float, float], ...] = ()

    def ms(self, batch: float) -> float:
        return max(self.floor_ms, self.fixed_ms + batch * self.ms_per_sample)

    @property
    def knee(self) -> float | None:
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
class FamilyBasis:
    """A family's step at any size, fitted over ``members`` (by size): the optimizer step and
    DDP's own work each a fixed part plus a part per parameter."""

    family: str
    members: tuple[str, ...]
    flops_per_param: float  # forward + backward FLOPs per sample per parameter (median)
    compute: Compute  # the family's fixed cost, rate, backward share, wait and contention
    opt_ms: tuple[float, float]  # the optimizer step: (ms, ms per million parameters)
    ddp_ms: tuple[float, float]  # DDP's own work: (ms, ms per million parameters)

    def at(self, params: float) -> Compute:
        mparams = params / 1e6
        return replace(
            self.compute,
            opt_ms_per_mparam=(self.opt_ms[0] + self.opt_ms[1] * mparams) / mparams,
            ddp_ms_per_mparam=(self.ddp_ms[0] + self.ddp_ms[1] * mparams) / mparams,
        )


@dataclass(frozen=True, kw_only=True, slots=True)
class StepModel:
    """The model and one device's step: the fixed cost (None: not split), the compute at
    the priors' ends, the step's 80% interval at N > 1, its family's basis."""

    name: str | Finding = "the model"  # a bench model's; a finding where it is said
    spec: ModelSpec
    compute: Compute
    fixed: FixedCost | None = None
    prior_range: tuple[Compute, ...] = ()
    error: StepError = field(default_factory=StepError)
    family: FamilyBasis | None = None


SCALINGS = ("search", "weak", "strong")
DEFAULT_LINK = "pcie-phb"  # the link where none is given, detected or measured
# One end of an assumed term's range: term, end, value, unit, the fields changed by part (``at``)
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
                f"{self.max_accum:,} accumulation steps); give a global batch of {most:,} or less"
            )
        if self.scaling not in SCALINGS:
            raise ValueError(f"scaling is one of {', '.join(SCALINGS)}, not {self.scaling!r}")

    @property
    def largest_batch(self) -> int:
        return self.max_batch if self.max_batch is not None else self.batch

    def split(self, devices: int) -> tuple[int, int] | None:
        """(per-device batch, micro-steps) of the kept global batch on ``devices``: the
        fewest micro-steps of whole batches no larger than fits, at most ``max_accum``; None
        where none splits it (or no global batch is kept)."""
        kept = self.kept_global_batch
        found = None if kept is None else whole_split(kept, devices, self.largest_batch)
        return found if found is not None and found[1] <= self.max_accum else None

    def accum_taking(self, global_batch: int | None) -> int:
        """The most micro-steps a step may take with ``global_batch`` kept: ``max_accum``, or
        as many as one device needs to take it: one device, which every speedup is
        against, takes any global batch in micro-steps of whole batches that fit."""
        split = None if global_batch is None else whole_split(global_batch, 1, self.largest_batch)
        return max(self.max_accum, split[1] if split is not None else 1)

    @property
    def kept_global_batch(self) -> int | None:
        if self.global_batch is not None:
            return self.global_batch
        if self.scaling == "strong":
            return self.batch * self.accum
        return None


def whole_split(global_batch: int, devices: int, largest: int) -> tuple[int, int] | None:
    """(per-device batch, micro-steps) of ``global_batch`` on ``devices``: the largest whole
    batch of at most ``largest`` that divides each device's share, so the fewest micro-steps;
    None where the devices do not divide it."""
    if global_batch % devices:
        return None
    share = global_batch // devices
    batch = next(b for b in range(min(largest, share), 0, -1) if share % b == 0)
    return batch, share // batch


@dataclass(frozen=True, kw_only=True, slots=True)
class Machine:
    """The network and the devices on it (``memory`` None: one device holds the model, or
    its memory is unknown); the device whose memory the check reads (``memory_device``: the
    bench's N = 1 run's, else ``device``, else ``REFERENCE_DEVICE``, assumed); the bench's
    N = 1 peak at per-device batch ``peak_batch`` and the model state it held (GB), that the
    memory check's activations rest on."""

    network: Network = field(default_factory=lambda: Network(intra=Link.from_preset(DEFAULT_LINK)))
    max_devices: int = 8
    device: DeviceRecord = NO_DEVICE
    power: Power = field(default_factory=lambda: Power(None, "unknown"))
    link_assumed: bool = False
    memory: MemoryCheck | None = None
    memory_device: DeviceRecord = NO_DEVICE
    memory_device_assumed: bool = False  # no device named, recorded or implied: the reference
    peak_batch: int | None = None
    memory_peak_gb: float | None = None
    state_gb: float | None = None
    # read off ``network`` where it is built (``calibrate.link.machine_of``): the link class
    # whose fitted terms price one device (``model.network.terms_class`` at N = 1; None: a
    # custom or measured link's), the class each count searched runs over
    # (``count_class``), the network's (``fitted_class``: multinode where it has nodes), and
    # the least fitted rank spread over the counts searched with whether the stacks' spreads
    # differ (``fitted_spread``; 0: none fitted)
    one_device_class: str | None = None
    count_classes: tuple[tuple[int, str | None], ...] = ()
    network_class: str | None = None
    spread: tuple[float, bool] = (0.0, False)

    @property
    def assumed_device(self) -> DeviceRecord | None:
        """The one device assumed where none is named, recorded or implied: the one the
        memory check reads (``memory_device``), whose board power prices the energy too."""
        assumed = self.memory_device_assumed and not self.device.name
        return self.memory_device if assumed and self.memory_device.part else None

    @property
    def device_counts(self) -> list[int]:
        return self.network.counts_up_to(self.max_devices)

    @property
    def pair_name(self) -> str:
        """The network as 2 devices see it (the break-even's): the link they run over where
        it is not the node's (``Link.on``: a topology's first 2 GPUs' ring), else its name
        over the counts searched."""
        intra = self.network.intra
        pair = intra.on(2)
        return self.network.name_over(self.device_counts) if pair is intra else pair.name


@dataclass(frozen=True, slots=True)
class BenchHost:
    """The host the runs calibrated on recorded (None: not recorded): its link (a preset,
    and the device it implies) stands where none is given, measured or detected here, or
    this machine detected another; its cores cap CPU processes."""

    link: Link | None
    board: str | None
    gpus: int | None
    cores: int | None
    kind: str | None
    threads: int | None
    device: str | None
    total: int | None = None  # its cores, the affinity aside (``cores``: those it allowed)


@dataclass(frozen=True, kw_only=True, slots=True)
class Runs:
    """The bench's runs of the model advised on: the model whose runs measure a term (None:
    by numbers, or a model given by its size), the GPUs its host had (None: unknown); its
    N = 1 run (``one_step_ms`` None: none), in ms (``one_own_ms``: the strategy's own work
    the N = 1 row leaves out; ``one_fsdp_own_ms``: FSDP's own work in ``one_step_ms``)."""

    own_model: str | None = None
    measured: tuple[Measured, ...] = ()
    one_step_ms: float | None = None
    one_batch: int = 1
    one_accum: int = 1
    one_strategy: str = "ddp"
    one_own_ms: float = 0.0
    one_fsdp_own_ms: float = 0.0
    one_device_name: str | None = None
    evidence: Support | None = None
    host_devices: int | None = None
    same_samples: bool = False
    allowed_flags: tuple[str, ...] = ()  # the flag kinds (FlagKind) --allow-flagged admitted


@dataclass(frozen=True, kw_only=True, slots=True)
class Bench:
    """What the bench measured of one model beside its step: the communication its N > 1
    runs measured (``comm``: of the configuration, the family, its own); the terms the step's
    assumptions say measured: DDP's own work (``own_ms``), the N = 1 steps' sd over their mean
    (``spread``, None: under two), the slowdowns held (``held``: (devices, factor))."""

    bench_model: str = ""
    config_group: str = ""
    device_kind: str | None = None
    threads: int | None = None
    shape: Shape | None = None
    noise: NoiseScale | None = None
    comm: MeasuredComm = field(default_factory=MeasuredComm)
    max_batch: int | None = None
    memory_note: Finding | None = None
    notes: tuple[str | Finding, ...] = ()
    overlap_measured: bool = False
    own_ms: float = 0.0
    spread: float | None = None
    held: tuple[tuple[int, float], ...] = ()


@dataclass(frozen=True, kw_only=True, slots=True)
class Said:
    """Where each value came from: every term not measured (by numbers, the N > 1 priors
    apart), why this bench model was chosen."""

    sources: tuple[str | Finding, ...] = ()
    warnings: tuple[str | Finding, ...] = ()
    assumptions: tuple[Assumption, ...] = ()
    priors_said: tuple[Assumption, ...] = ()
    implausible: bool = False
    model_note: str | Finding = ""
    chosen: str | Finding = ""

    def source(self, kind: FindingKind) -> Finding | None:
        """The source finding of ``kind`` (None: none said)."""
        return next((f for f in self.sources if isinstance(f, Finding) and f.kind is kind), None)


@dataclass(frozen=True, kw_only=True, slots=True)
class Search:
    """The search's settings: the equilibrium's share of the best (``threshold``), MLPerf's
    fastest system per count ((devices, minutes, system)), each end of every assumed term's
    range (``ends``)."""

    target_efficiency: float = 0.7
    price_per_device_hour: float | None = None
    threshold: float = DEFAULT_EFFICIENCY_THRESHOLD
    samples: float = 1e7
    convergence: ConvergenceModel | None = None
    defaults: tuple[str, ...] = ()
    noise_steps: int | None = None
    mlperf_floor: tuple[tuple[int, float, Finding], ...] = ()
    ends: tuple[End, ...] = ()


@dataclass(frozen=True, kw_only=True, slots=True)
class Calibration:
    """What the advice is computed from, by the bench or by numbers (``bench`` None); the
    bench's calibration of one model, as benched, on the default machine until it is
    placed on the machine asked."""

    model: StepModel
    run: Run
    machine: Machine
    runs: Runs = field(default_factory=Runs)
    said: Said = field(default_factory=Said)
    search: Search = field(default_factory=Search)
    bench: Bench | None = None
    asked: Asked = field(default_factory=Asked)

    def at(self, changes: dict[str, dict[str, object]]) -> Calibration:
        parts = {name: replace(getattr(self, name), **fields) for name, fields in changes.items()}
        return replace(self, **parts)

    @property
    def tried_batches(self) -> tuple[int, ...]:
        """The per-device batches the search tries where the global batch is not kept,
        largest first: with a convergence model (not weak scaling) the batch and its halves
        down to ``min_batch`` (at least 1), else the batch alone."""
        run = self.run
        if self.search.convergence is None or run.scaling == "weak":
            return (run.batch,)
        halves = (run.batch // 2**i for i in range(run.batch.bit_length()))
        return tuple(b for b in halves if b >= max(1, run.min_batch))

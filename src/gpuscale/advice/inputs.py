"""What the advice is computed from (:class:`AdviceInputs`: the step model, the network,
the batch and the convergence model, with the source of each), and the bench's N = 1 run
of the model advised on (:class:`OneDevice`), and what the calibration builds them from
(:class:`Basis`, a value each of its steps returns anew). Its own module so that every part of the
advice (``recommend``, ``intervals``, ``counts``, ``table_words``, ``break_even``) takes
it typed: none of them imports another to read it."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from gpuscale.advice.assumed import Assumption
from gpuscale.advice.measured_runs import Measured
from gpuscale.advice.memory import MemoryCheck
from gpuscale.advice.model.fixed_cost import FixedCost
from gpuscale.advice.model.hardware import NO_DEVICE, DeviceRecord
from gpuscale.advice.model.network import DEFAULT_BUCKET_MB, Network
from gpuscale.advice.model.power import Power
from gpuscale.advice.model.priors import StepError
from gpuscale.advice.model.step import Compute, FamilyBasis, ModelSpec
from gpuscale.advice.types import End, Finding
from gpuscale.analysis.critical_batch import ConvergenceModel, NoiseScale
from gpuscale.bench.support import Support
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


SCALINGS = ("search", "weak", "strong")


@dataclass(frozen=True, kw_only=True)
class AdviceInputs:
    """What the advice needs. ``batch`` is the largest per-device batch (memory);
    ``samples`` the samples to train at batch ``batch`` on one device when there is no
    convergence model (else ``convergence`` gives them at every batch)."""

    model: ModelSpec
    compute: Compute
    network: Network
    batch: int
    name: str = "the model"
    max_devices: int = 8
    overlap: float | None = None  # measured share hidden; None: the default
    bucket_mb: float = DEFAULT_BUCKET_MB
    strategy: str = "ddp"
    convergence: ConvergenceModel | None = None
    samples: float = 1e7
    global_batch: int | None = None  # keep this global batch at every N (strong scaling)
    # "search": with a convergence model the search over batch and accumulation decides,
    # without one the per-device batch is kept; "weak": the per-device batch is kept;
    # "strong": the global batch (``global_batch``, else ``batch``) is kept
    scaling: str = "search"
    fixed: FixedCost | None = None  # the fixed per-step cost, its range and source
    prior_range: tuple[Compute, ...] = ()  # the compute at the ends of the priors' ranges
    assumptions: tuple[Assumption, ...] = ()  # every term not measured, said
    max_accum: int = 64
    accum: int = 1  # the micro-steps per step benched at ``batch`` (its samples: b k)
    min_batch: int = 1  # smallest per-device batch tried
    max_batch: int | None = None  # largest per-device batch that fits (None: ``batch``)
    target_efficiency: float = 0.7
    price_per_device_hour: float | None = None
    power: Power = field(default_factory=lambda: Power(None, "unknown"))
    threshold: float = DEFAULT_EFFICIENCY_THRESHOLD  # equilibrium: E >= threshold x best
    host_devices: int | None = None  # the GPUs the bench's host had: what it can measure
    sources: tuple[str | Finding, ...] = ()  # where each input came from, for the explanation
    error: StepError = field(default_factory=StepError)  # the step's 80% interval at N > 1
    evidence: Support | None = None  # what the bench runs advised on rest on (None: numbers)
    warnings: tuple[
        str | Finding, ...
    ] = ()  # inputs that cannot be true, said where they were found
    implausible: bool = False  # one of them is an input that cannot be true (IMPLAUSIBLE)
    # the bench's N > 1 runs of the model: a count they disagree with rests on them
    measured: tuple[Measured, ...] = ()
    # (devices, minutes, system) of the fastest MLPerf system per count for the workload
    mlperf_floor: tuple[tuple[int, float, str], ...] = ()
    one_device: OneDevice | None = None  # the bench's N = 1 run of the model, as it trained
    family: FamilyBasis | None = None  # its family's break-even basis (None: the model alone)

    def __post_init__(self) -> None:
        if self.max_devices < 1 or self.batch < 1 or self.max_accum < 1:
            raise ValueError("max devices, batch and max accumulation must be >= 1")
        if self.max_batch is not None and self.max_batch < self.batch:
            raise ValueError("the largest per-device batch is at least the batch")
        if not 0 < self.target_efficiency <= 1:
            raise ValueError("target efficiency must be in (0, 1]")
        if self.price_per_device_hour is not None and not self.price_per_device_hour >= 0:
            raise ValueError("price must be >= 0")
        if not (self.samples > 0 and math.isfinite(self.samples)):
            raise ValueError("samples to train must be positive")
        if self.global_batch is not None and self.global_batch < 1:
            raise ValueError("global batch must be >= 1")
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

    @property
    def device_counts(self) -> list[int]:
        """1, 2, 4, ... and the maximum; across nodes only whole nodes."""
        return self.network.counts_up_to(self.max_devices)

    @property
    def network_name(self) -> str:
        """The network, its link between nodes named only where a count searched spans
        nodes."""
        return self.network.name_over(self.device_counts)


@dataclass(frozen=True, kw_only=True)
class Calibrated:
    """What ``calibrate.build`` hands the search, once: the inputs, the inputs that
    differ at each end of every assumed term's range (``ends``), and what qualifies the
    headline (whether the samples to train are the request's, the bench's noise steps,
    whether the link was assumed, whether a bench was read). ``model_note``: another model
    than the largest advised on, said first; ``chosen``: which benched model was advised
    on, said after the decision."""

    inputs: AdviceInputs
    ends: tuple[End, ...] = ()
    samples_used: bool = True  # the samples to train are the request's (not the RCPs')
    noise_steps: int | None = None  # the bench's noise scale's steps (None: not measured)
    link_assumed: bool = False
    from_bench: bool = False
    model_note: str = ""
    chosen: str = ""
    memory: MemoryCheck | None = None  # what each device holds per count and strategy


@dataclass(frozen=True, slots=True)
class Basis:
    """What the advice rests on: the network, the model and its rate per device, and
    where each came from (``sources``, ``warnings``, ``assumed``). A value: each step
    (``network_basis``, then ``from_numbers`` or ``bench_basis.from_bench``) returns a new
    one."""

    network: Network
    max_devices: int
    sources: tuple[str | Finding, ...]
    warnings: tuple[str | Finding, ...] = ()
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
    priors_said: tuple[Assumption, ...] = ()  # by numbers: DDP's work and the wait, assumed
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

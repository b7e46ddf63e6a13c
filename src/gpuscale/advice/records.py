"""The :class:`Decision` in its parts, the parts of an advice beside it and the bench runs
set against it (:class:`MeasuredCount`), as numbers (units in the names)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from gpuscale.advice.types import Finding, Reading

if TYPE_CHECKING:
    import pandas as pd


@dataclass(frozen=True, kw_only=True, slots=True)
class Chosen:
    """The count chosen and its row: batches in samples, the speedup over one device (x),
    its 80% interval and its two factors, efficiencies as fractions."""

    accelerators: int  # recommended (1 when no larger count qualifies)
    batch_per_device: float
    accum: int
    global_batch: float
    time_to_train_min: float
    speedup: float
    speedup_low: float  # the 80% interval
    speedup_high: float
    efficiency: float
    throughput_efficiency: float
    convergence_factor: float
    reaches_target: bool  # efficiency >= target at ``accelerators`` (always for 1)


@dataclass(frozen=True, slots=True)
class HeldBack:
    """A faster count that reached the target, its speedup's 80% interval including 1x."""

    accelerators: int
    speedup_low: float


@dataclass(frozen=True, kw_only=True, slots=True)
class Focus:
    """The smallest count above the chosen (else the largest predicted) and its row;
    ``rests_on``: ``predicted``, ``measured`` or ``measured_below``."""

    accelerators: int
    step_ms: float
    compute_ms: float
    speedup: float
    speedup_low: float
    speedup_high: float
    throughput_efficiency: float
    convergence_factor: float
    rests_on: str = "predicted"
    # ``1 / convergence_factor`` where convergence caps the speedup; the step less the
    # measured one's unexplained part (None: predicted)
    samples_ratio: float | None = None
    explained_ms: float | None = None


@dataclass(frozen=True, kw_only=True, slots=True)
class Limit:
    """What limits the speedup at the focus count and what would change it."""

    dominant_term: str
    # ms at the focus: fixed, wait, ddp, bandwidth, latency, unexplained (0: predicted)
    overheads_ms: dict[str, float]
    cap: str  # "overheads", "convergence", "none"; or why none above: "devices", "batch", "flagged"
    change: str  # what would change it: a key of focus.REMEDIES
    # the efficiency were the dominant overhead gone (None: N = 1 or compute)
    without_dominant_efficiency: float | None = None
    also_shrink: tuple[str, ...] = ()  # the others, largest first, to reach the target
    fewer_messages: bool = False  # larger buckets or units would issue fewer collectives


@dataclass(frozen=True, kw_only=True, slots=True)
class Counts:
    """The device counts searched (``Machine.device_counts``) against the rows: whether
    they are every count from 1, whether the most is a power of two, a node's devices
    (None: one node), the counts not whole nodes, those without a row; above the focus,
    where the search stopped early: those not searched, without a row, flagged; the
    fewest whole nodes' devices above the most (None: none needed)."""

    searched: tuple[int, ...] = ()
    most: int = 1
    every: bool = True
    pow2: bool = True
    per_node: int | None = None
    off_nodes: tuple[int, ...] = ()
    missing: tuple[int, ...] = ()
    unsearched_above: tuple[int, ...] = ()
    missing_above: tuple[int, ...] = ()
    flagged_above: tuple[int, ...] = ()
    whole_nodes: int | None = None


@dataclass(frozen=True, kw_only=True, slots=True)
class Decision:
    """The recommendation and the numbers behind each part of it."""

    chosen: Chosen
    target_efficiency: float
    held_back: HeldBack | None  # a count that reached the target, its interval including 1x
    fastest: int | None  # fastest trusted count that holds the model (None: none does)
    largest: int  # largest count predicted
    focus: Focus  # where the limit and the cap are read
    limit: Limit
    warnings: tuple[str | Finding, ...] = field(default=())  # rendered by ``explain``
    refused: bool = False  # an input cannot be true: no count above 1 (nothing is sure)
    settle: str | None = None  # the measurement that would settle a held-back count
    # the count at each end of every assumed term's range; the first term whose range
    # moves it withholds the count
    readings: tuple[Reading, ...] = ()
    withheld_by: str | None = None
    holds: bool = True  # whether a count predicted holds the model (``advice.memory``)
    counts: Counts = field(default_factory=Counts)  # the counts searched and their rows

    @property
    def count(self) -> int | None:
        """The count recommended; None where none holds the model, a range moves it, or
        an input cannot be true above one device."""
        if not self.holds or self.withheld_by or (self.refused and self.chosen.accelerators > 1):
            return None
        return self.chosen.accelerators

    def short_alone(self) -> bool:
        """Whether no one remedy is enough: the focus misses the target with its largest
        overhead gone."""
        gone = self.limit.without_dominant_efficiency
        return self.limit.cap == "overheads" and gone is not None and gone < self.target_efficiency


@dataclass(frozen=True, kw_only=True, slots=True)
class Equilibrium:
    """The numbers of the equilibrium picks over the trusted rows: the best efficiency and
    its count; the speed x efficiency pick's speedup, efficiency, product; the threshold
    pick's efficiency and the next count above it (None: none)."""

    best_n: int
    best_efficiency: float
    sxe_speedup: float
    sxe_efficiency: float
    sxe_product: float
    kept_efficiency: float | None = None
    next_n: int | None = None
    next_efficiency: float | None = None
    rows: int = 0


@dataclass(frozen=True, slots=True)
class Picks:
    """The counts other rules pick: the largest reaching the target, the fewest
    device-hours (None: no price), the equilibrium picks by rule and their numbers."""

    efficient: int | None
    cheapest: int | None
    equilibrium: dict[str, int | None]
    numbers: Equilibrium


@dataclass(frozen=True, kw_only=True, slots=True)
class OneDeviceRow:
    """The N = 1 row beside the bench's N = 1 run (``calibration.OneDevice``), ms: DDP's
    own work the first count above 1 adds; the samples per optimizer step of each; the
    bench's no-sync step and its gap to the row's; ``overstated``: ``step / (step -
    fsdp_own)`` (None unless ``0 < fsdp_own < step``); the step at the bench's batch."""

    step_ms: float = 0.0
    added_ddp_ms: float = 0.0
    row_samples: float = 0.0
    bench_samples: float | None = None
    nosync_ms: float | None = None
    gap_ms: float | None = None
    overstated: float | None = None
    at_bench_ms: float | None = None


@dataclass(frozen=True, slots=True)
class BreakEven:
    """From where 2 devices train faster than 1 on this link (None: none found; NaN where
    the speedup falls with size), and this model beside it."""

    compute_ms_per_grad_mb: float | None = None
    params: float | None = None
    target_efficiency_params: float | None = None
    # this model's whole step: its TFLOP/s, compute per gradient MB; the break-even's
    # FLOPs per gradient byte at that rate
    step_tflops: float | None = None
    own_ms_per_grad_mb: float | None = None
    flops_per_grad_byte: float | None = None
    flops_per_param: float | None = None  # FLOPs per parameter per sample
    # ms: this model's optimizer step and DDP's own work, and the family's at its size
    own_optimizer_ms: float | None = None
    own_ddp_ms: float | None = None
    family_optimizer_ms: float | None = None
    family_ddp_ms: float | None = None
    # on 2 devices: the throughput speedup, the speedup to a trained model
    pair_throughput_speedup: float | None = None
    pair_speedup: float | None = None


@dataclass(frozen=True, kw_only=True, slots=True)
class FixedTerm:
    """The fixed per-step costs (ms): the optimizer step on one device (0: not measured)
    and at the focus (FSDP: its ``1/n`` shard); the ``fixed`` term's excess there split
    into the optimizer's (``opt_n - opt s``, ``s`` the samples per device over one
    device's) and the forward and backward's."""

    optimizer_ms: float = 0.0
    optimizer_at_focus_ms: float = 0.0
    excess_ms: float = 0.0
    optimizer_excess_ms: float = 0.0
    forward_backward_excess_ms: float = 0.0


@dataclass(frozen=True, slots=True)
class Qualifiers:
    """What qualifies the headline: the defaults the times rest on, the steps of a noise
    scale measured over too few, why and which benched model was advised on."""

    defaults: tuple[str, ...] = ()
    noise_steps: int | None = None
    model_note: str = ""
    model_chosen: str = ""


@dataclass(frozen=True, kw_only=True, slots=True)
class RowSpan:
    """A row's interval as changes from its point (``low / point - 1``)."""

    accelerators: int
    step_low: float
    step_high: float
    speedup_low: float
    speedup_high: float


@dataclass(frozen=True, kw_only=True, slots=True)
class RowIntervals:
    """The rows' intervals above one device and why they differ from the model's error
    (``wider``: ``ranges``, ``floor``, ``linear``, ``growing``; none where ``rule``, the
    link class's calibrated interval, is the advice's)."""

    rule: Finding | None = None
    spans: tuple[RowSpan, ...] = ()
    wider: tuple[str, ...] = ()

    def span(self, n: int) -> RowSpan:
        return next(s for s in self.spans if s.accelerators == n)


@dataclass(frozen=True, slots=True)
class InputRate:
    """The samples/s the largest count predicted consumes, that count, each device's."""

    samples_per_s: float
    devices: int
    per_device: float


# Why the trusted runs are those: every run unflagged, flagged runs among them used with
# --allow-flagged, or only flagged runs measured the count (used, their flags said, to be
# measured again on a quiet machine).
TRUSTED_UNFLAGGED = "unflagged"
TRUSTED_ALLOWED = "allowed_flagged"
TRUSTED_FLAGGED_ONLY = "flagged_only"
# Why a count resting on a single run has no interval: one value has no spread
ONE_RUN = "one run: its value, no spread to read an interval from"


@dataclass(frozen=True, slots=True)
class Measured:
    """A bench run's throughput speedup at ``devices`` (against its one-device run)."""

    devices: int
    speedup: float
    flagged: bool
    batch_per_device: int
    allowed: bool = False  # flagged, yet used (--allow-flagged)
    accum: int = 1
    # (per-device batch, accumulation) of the N = 1 run the speedup is against (None:
    # the run's own, as a weak-scaling bench keeps them)
    base: tuple[int, int] | None = None
    # where it or its N = 1 run is weak evidence (bench.evidence): what to bench for a
    # strong one ("" where both are strong)
    weak_remedy: str = ""
    samples_per_s: float = float("nan")  # the run's, all devices (NaN: not known)
    flags: str = ""  # the bench's flags of the run ("" where none)


@dataclass(frozen=True, slots=True)
class MeasuredCount:
    """The runs at one count in a configuration the advice predicts, set against that
    prediction once (``search.decide.measured_counts``). Where the median lies outside
    the interval it is a disagreement: the row rests on it."""

    accelerators: int
    batch_per_device: int
    accum: int
    base: tuple[int, int]  # (per-device batch, accumulation) of the N = 1 run read against
    predicted_speedup: float
    predicted_low: float
    predicted_high: float
    weak_scaling: bool  # the prediction is the weak-scaling alternative's
    runs: tuple[Measured, ...]  # every run at the count in that configuration
    trusted: tuple[Measured, ...]  # unflagged, or flagged and allowed
    speedups: tuple[float, ...]  # of each of ``runs``, against its N = 1 run
    measured_speedup: float  # the median of the runs used
    inside: bool  # within the predicted 80% interval

    def of(self, runs: tuple[Measured, ...]) -> list[float]:
        return [v for m, v in zip(self.runs, self.speedups, strict=True) if m in runs]

    @property
    def used(self) -> tuple[Measured, ...]:
        """The trusted runs, else (all flagged) every run."""
        return self.trusted or self.runs

    @property
    def left_out(self) -> tuple[Measured, ...]:
        """Flagged runs not used (none where only flagged runs are there)."""
        if not self.trusted:
            return ()
        return tuple(m for m in self.runs if m.flagged and not m.allowed)

    # The used runs' smallest and largest speedups (None from one run: no interval), and
    # why there is none ("": there is one).
    @property
    def measured_low(self) -> float | None:
        return None if len(self.used) == 1 else min(self.of(self.used))

    @property
    def measured_high(self) -> float | None:
        return None if len(self.used) == 1 else max(self.of(self.used))

    @property
    def no_interval(self) -> str:
        return ONE_RUN if len(self.used) == 1 else ""

    @property
    def why(self) -> str:
        if any(m.allowed for m in self.trusted):
            return TRUSTED_ALLOWED
        return TRUSTED_UNFLAGGED if self.trusted else TRUSTED_FLAGGED_ONLY

    @property
    def on_flagged_only(self) -> bool:
        return not self.trusted

    @property
    def flags(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(m.flags for m in self.runs if m.flagged and m.flags))

    @property
    def weak_evidence(self) -> str:
        """What to bench where the runs used are weak evidence ("": firm)."""
        return next((m.weak_remedy for m in self.used if m.weak_remedy), "")


def trusted_runs(table: pd.DataFrame) -> pd.DataFrame:
    """The runs of a bench table that are ok and not flagged."""
    return table[(table["status"] == "ok") & ~table["flagged"].fillna(False).astype(bool)]

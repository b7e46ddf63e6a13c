"""The advice's records (units in the names): a term of the step (:class:`Assumption`), the
:class:`Decision` in its parts, the bench runs set against it (:class:`MeasuredCount`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from itertools import groupby
from typing import TYPE_CHECKING

from gpuscale.advice.model.priors import strategy_name
from gpuscale.advice.types import Finding, Measure, Reading, Source, TermId
from gpuscale.tables.advice import wide_factor

if TYPE_CHECKING:
    import pandas as pd


TERM_NAMES = {
    TermId.FIXED: "Fixed per-step cost",
    TermId.FLOPS: "FLOPs per sample",
    TermId.OVERLAP: "Overlap",
    TermId.DDP: "DDP's own work",
    TermId.WAIT: "Wait for the slowest device",
    TermId.INPUT: "Input pipeline",
    TermId.CONVERGENCE: "Samples to converge at a larger global batch",
    TermId.LINK: "Link",
    TermId.INTER_NODE: "Link between nodes",
    TermId.LINK_CLASS: "Link class",
}


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


@dataclass(frozen=True, kw_only=True, slots=True)
class Assumption:
    """One term: its value said and as a number (None for a choice), whence, how to measure it."""

    term: TermId
    value: str
    source: Source
    basis: str | Finding  # a finding: the fixed cost's (``explain`` says it)
    measure: Measure = field(default_factory=Measure)  # empty where measured
    strategy: str = "ddp"  # whose own work a ``TermId.DDP`` term is (ddp, zero2, fsdp, hybrid)
    quantity: Quantity | None = None

    @property
    def name(self) -> str:
        if self.term == TermId.DDP:
            return f"{strategy_name(self.strategy)}'s own work"
        return TERM_NAMES[self.term]


@dataclass(frozen=True, kw_only=True, slots=True)
class BenchTerms:
    """What a bench file measured beside the calibration: the strategy's own work (ms), the
    N = 1 steps' sd over their mean (None: under two), the slowdowns held."""

    overlap_measured: bool
    own_ms: float
    spread: float | None
    held: tuple[tuple[int, float], ...]


@dataclass(frozen=True, kw_only=True, slots=True)
class Chosen:
    """The count chosen and its row: the speedup over one device, its 80% interval and its
    two factors; efficiencies as fractions."""

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

    @property
    def wide_factor(self) -> float | None:
        return wide_factor(self.speedup_low, self.speedup_high)


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
    # ``1 / convergence_factor`` where convergence caps it; the step less the measured
    # one's unexplained part (None: predicted)
    samples_ratio: float | None = None
    explained_ms: float | None = None

    @property
    def wide_factor(self) -> float | None:
        return wide_factor(self.speedup_low, self.speedup_high)


@dataclass(frozen=True, kw_only=True, slots=True)
class Limit:
    """What limits the speedup at the focus count and what would change it."""

    dominant_term: str
    # ms at the focus: fixed, wait, ddp, bandwidth, latency, unexplained (0: predicted)
    overheads_ms: dict[str, float]
    cap: str  # "overheads", "convergence", "none"; or why none above: "devices", "batch", "flagged"
    change: str  # what would change it: a term, or a key of phrasebook.CHANGES
    # the efficiency were the dominant overhead gone (None: N = 1 or compute)
    without_dominant_efficiency: float | None = None
    also_shrink: tuple[str, ...] = ()  # the others, largest first, to reach the target
    fewer_messages: bool = False  # larger buckets or units would issue fewer collectives


def spans(counts: tuple[int, ...]) -> tuple[tuple[int, int], ...]:
    """(first, last) of each run of three or more consecutive ``counts``, else (c, c)."""
    found: list[tuple[int, int]] = []
    for _, run in groupby(enumerate(counts), lambda at: at[1] - at[0]):
        seen = [c for _, c in run]
        found += [(seen[0], seen[-1])] if len(seen) > 2 else [(c, c) for c in seen]
    return tuple(found)


@dataclass(frozen=True, kw_only=True, slots=True)
class Counts:
    """The device counts searched against the rows; ``*_above``: above the focus, where the
    search stopped early; ``per_node`` None: one node; ``whole_nodes``: the fewest whole
    nodes' devices above the most (None: none needed)."""

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
    holds: bool = True  # whether a count predicted holds the model (``hardware.memory_check``)
    counts: Counts = field(default_factory=Counts)  # the counts searched and their rows

    @property
    def count(self) -> int | None:
        """The count advised (None: none holds the model, a range moves it, or an input cannot
        be true)."""
        if not self.holds or self.withheld_by or (self.refused and self.chosen.accelerators > 1):
            return None
        return self.chosen.accelerators

    def short_alone(self) -> bool:
        """Whether the focus misses the target even with its largest overhead gone."""
        gone = self.limit.without_dominant_efficiency
        return self.limit.cap == "overheads" and gone is not None and gone < self.target_efficiency


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
    prediction; where the median lies outside the interval the row rests on it."""

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
        # the trusted runs, else (all flagged) every run
        return self.trusted or self.runs

    @property
    def left_out(self) -> tuple[Measured, ...]:
        # flagged runs not used (none where only flagged runs are there)
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
        return next((m.weak_remedy for m in self.used if m.weak_remedy), "")

    @property
    def wide_factor(self) -> float | None:
        return wide_factor(self.predicted_low, self.predicted_high)


def trusted_runs(table: pd.DataFrame) -> pd.DataFrame:
    return table[(table["status"] == "ok") & ~table["flagged"].fillna(False).astype(bool)]

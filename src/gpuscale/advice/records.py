"""The advice's records (units in the names): a term of the step (:class:`Assumption`), the
:class:`Decision` in its parts and what decides it (``derived``: the numbers beside it)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from gpuscale.advice.model.priors import strategy_name
from gpuscale.advice.types import STOPPED, Finding, Measure, MeasuredCount, Reading, Source, TermId
from gpuscale.tables.advice import wide_factor

if TYPE_CHECKING:
    from collections.abc import Sequence

    from gpuscale.hardware.memory import MemoryCheck
    from gpuscale.hardware.transformer import ShapeNumbers


TERM_NAMES = {
    TermId.FIXED: "Fixed per-step cost",
    TermId.FLOPS: "FLOPs per sample",
    TermId.OVERLAP: "Overlap",
    TermId.DDP: "{strategy}'s own work",  # the term's strategy named: DDP's, ZeRO-2's
    TermId.WAIT: "Wait for the slowest device",
    TermId.INPUT: "Input pipeline",
    TermId.CONVERGENCE: "Samples to converge at a larger global batch",
    TermId.LINK: "Link",
    TermId.INTER_NODE: "Link between nodes",
    TermId.LINK_CLASS: "Link class",
    TermId.POWER: "Power",
}


@dataclass(frozen=True, kw_only=True, slots=True)
class Asked:
    """What the request set itself, read once from it (``calibrate.build``), as the memory
    check and each term's source (given, measured or assumed) read it: a name None and a flag
    False where the request left it to the data or a default."""

    strategy: str | None = None  # None: as benched
    optimizer: str | None = None
    precision: str | None = None
    devices_per_node: int | None = None  # the nodes' size asked
    overlap_given: bool = False
    params_given: bool = False  # a model given by its size (--params), its family's bench
    convergence_given: bool = False  # a workload's reference runs or a noise scale named
    shape: ShapeNumbers | None = None  # a transformer's shape given, its numbers


@dataclass(frozen=True, slots=True)
class Quantity:
    """A term's value in ``unit``, its range, its value per device count (``at``), DDP's
    bucket copies (``copies_ms``) where included; where the value is a convergence model's
    noise scale B_noise, the samples it converges in at a small batch (``e_min``: E_min of
    E(B) = E_min (1 + B / B_noise))."""

    value: float
    unit: str
    low: float | None = None
    high: float | None = None
    at: tuple[tuple[int, float], ...] = ()
    copies_ms: float | None = None
    e_min: float | None = None


@dataclass(frozen=True, kw_only=True, slots=True)
class Assumption:
    """One term: its value said and as a number (None for a choice), whence, how to measure it."""

    term: TermId
    value: str | Finding  # said by ``explain``
    source: Source
    basis: str | Finding  # a finding: the fixed cost's (``explain`` says it)
    measure: Measure = field(default_factory=Measure)  # empty where measured
    strategy: str = "ddp"  # whose own work a ``TermId.DDP`` term is (ddp, zero2, fsdp, hybrid)
    quantity: Quantity | None = None

    @property
    def name(self) -> str:
        return TERM_NAMES[self.term].format(strategy=strategy_name(self.strategy))


@dataclass(frozen=True, kw_only=True, slots=True)
class Row:
    """A count's row: the speedup over one device, its 80% interval and its two factors
    (fractions). ``derived_from_batch`` and ``derived_from_speedup``: where the row is
    derived from the measurement at its count at another per-device batch (by that
    measurement's ratio to the model), its per-device batch and throughput speedup; else
    None."""

    accelerators: int
    speedup: float
    speedup_low: float
    speedup_high: float
    throughput_efficiency: float
    convergence_factor: float
    derived_from_batch: int | None = None
    derived_from_speedup: float | None = None

    @property
    def wide_factor(self) -> float | None:
        return wide_factor(self.speedup_low, self.speedup_high)

    @property
    def loses(self) -> bool:
        """Whether the whole 80% interval lies below 1x: slower than one device at both
        ends, which decides against the count however wide the interval is."""
        return self.speedup_high < 1

    @property
    def interval_reads(self) -> str:
        """What the answer says of the interval beside the speedup: ``loses`` where it is
        too wide to test the prediction (over ``TOO_WIDE_TO_TEST``) yet wholly below 1x
        (:attr:`loses`: the count loses whatever the width), ``wide`` where too wide and
        reaching 1x, else ``plain`` (its ends, as an 80% interval)."""
        if self.wide_factor is None:
            return "plain"
        return "loses" if self.loses else "wide"


@dataclass(frozen=True, kw_only=True, slots=True)
class Chosen(Row):
    """The count chosen (1 when no larger count qualifies) and its row."""

    batch_per_device: float
    accum: int
    global_batch: float
    time_to_train_min: float
    efficiency: float
    reaches_target: bool  # efficiency >= target at ``accelerators`` (always for 1)


@dataclass(frozen=True, kw_only=True, slots=True)
class Focus(Row):
    """The smallest count above the chosen (else the largest predicted) and its row;
    ``rests_on``: ``predicted``, ``measured``, ``derived`` or ``measured_below``."""

    step_ms: float
    compute_ms: float
    rests_on: str = "predicted"
    samples_ratio: float | None = None  # ``1 / convergence_factor`` where convergence caps it
    explained_ms: float | None = None  # the step less the measured one's unexplained part


@dataclass(frozen=True, kw_only=True, slots=True)
class Limit:
    """What limits the speedup at the focus count and what would change it."""

    dominant_term: str
    overheads_ms: dict[str, float]  # at the focus, by term (unexplained 0: predicted)
    cap: str  # "overheads", "convergence", "none"; or why none above: "devices", "batch", "flagged"
    change: str  # what would change it: a term, or a key of phrasebook.CHANGES
    without_dominant_efficiency: float | None = None  # None: N = 1 or compute
    also_shrink: tuple[str, ...] = ()  # the others, largest first, to reach the target
    fewer_messages: bool = False  # larger buckets or units would issue fewer collectives


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
    """The recommendation and the numbers behind each part of it. ``read``: the count the
    rule reads, ``chosen`` where memory and any refusal allow it; where no count predicted
    holds the model (``holds``), the one it would choose were memory no limit, and where an
    input cannot be true (``refused``), the smallest that holds it (``--explain`` says
    either as such; neither is ever advised)."""

    read: Chosen
    target_efficiency: float
    held_back: Row | None  # a faster count that reached the target, its interval including 1x
    fastest: int | None  # fastest count holding the model no refusal rules out (None: none)
    largest: int  # largest count predicted
    focus: Focus  # where the limit and the cap are read
    limit: Limit
    warnings: tuple[str | Finding, ...] = ()
    refused: bool = False  # an input cannot be true: no count above 1 (nothing is sure)
    settle: str | None = None  # the measurement that would settle a held-back count
    readings: tuple[Reading, ...] = ()  # the count at each end of every assumed range
    withheld_by: str | None = None  # the first term whose range moves the count
    holds: bool = True  # whether a count predicted holds the model (``hardware.memory``)
    counts: Counts = field(default_factory=Counts)  # the counts searched and their rows

    @property
    def chosen(self) -> Chosen | None:
        """The count chosen and its row (None: memory or a refusal rules out every count)."""
        if not self.holds or (self.refused and self.read.accelerators > 1):
            return None
        return self.read

    @property
    def count(self) -> int | None:
        """The count advised (None: none chosen, or a range moves it)."""
        if self.chosen is None or self.withheld_by:
            return None
        return self.chosen.accelerators

    def short_alone(self) -> bool:
        """Whether the focus misses the target even with its largest overhead gone."""
        gone = self.limit.without_dominant_efficiency
        return self.limit.cap == "overheads" and gone is not None and gone < self.target_efficiency


@dataclass(frozen=True, slots=True)
class Deciding:
    """What decides (``measured``, ``withheld``, ``interval``, ``refused``: a count held back
    though its interval gains, as inputs that cannot all be true hold every count back,
    ``memory``: the fewest devices holding the model, the cap ``convergence`` or why the
    search stopped, else ``term``); what would change it; the largest count at or below the
    focus measured on flagged runs only."""

    kind: str = "term"
    change: str = ""
    memory: bool = False
    measured: MeasuredCount | None = None
    flagged: int | None = None

    @classmethod
    def of(
        cls, d: Decision, memory: MemoryCheck | None, found: Sequence[MeasuredCount], strategy: str
    ) -> Deciding:
        focus = d.focus.accelerators
        fewest = memory.fits_from(strategy) if memory is not None else None
        by_memory = bool(fewest and fewest > 1 and d.read.accelerators == fewest) and (
            d.read.efficiency < d.target_efficiency
        )
        measured = measured_at(found, focus)
        kind = d.limit.cap if d.limit.cap in ("convergence", *STOPPED) else "term"
        if measured is not None:
            kind = "measured"
        elif d.withheld_by:
            kind = "withheld"
        elif d.held_back is not None:
            kind = "interval" if (d.held_back.speedup_low or 2) <= 1 else "refused"
        elif by_memory:
            kind = "memory"
        flagged = (m.accelerators for m in found if m.accelerators <= focus and m.on_flagged_only)
        change = "memory" if by_memory else d.limit.change
        return cls(kind, change, by_memory, measured, max(flagged, default=None))


def measured_at(found: Sequence[MeasuredCount], n: int) -> MeasuredCount | None:
    """The largest count at or below ``n`` measured outside its interval (None: none)."""
    below = [m for m in found if m.accelerators <= n]
    return max(below, key=lambda m: m.accelerators, default=None)


# a step interval wider than a factor of 1.5 cannot decide a count
WIDE_STEP_INTERVAL = math.log(1.5)

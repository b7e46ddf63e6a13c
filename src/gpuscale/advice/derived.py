"""The numbers beside the :class:`~gpuscale.advice.records.Decision`, read off the
predictions by ``search.derive``."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

from gpuscale.advice.types import STOPPED, Finding
from gpuscale.quantities import number

if TYPE_CHECKING:
    from collections.abc import Sequence

    from gpuscale.advice.records import Decision, MeasuredCount
    from gpuscale.hardware.memory_check import MemoryCheck


@dataclass(frozen=True, slots=True)
class Deciding:
    """What decides: ``measured`` (the focus rests on ``measured``), ``withheld``,
    ``interval``, ``memory`` (the fewest devices holding the model set the count), the cap
    ``convergence`` or why the search stopped, else ``term``; what would change it; the
    largest count at or below the focus measured on flagged runs only (None: none)."""

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
        by_memory = bool(fewest and fewest > 1 and d.chosen.accelerators == fewest) and (
            d.chosen.efficiency < d.target_efficiency
        )
        measured = measured_at(found, focus)
        kind = d.limit.cap if d.limit.cap in ("convergence", *STOPPED) else "term"
        if measured is not None:
            kind = "measured"
        elif d.withheld_by:
            kind = "withheld"
        elif d.held_back is not None and (d.held_back.speedup_low or 2) <= 1:
            kind = "interval"
        elif by_memory:
            kind = "memory"
        flagged = (m.accelerators for m in found if m.accelerators <= focus and m.on_flagged_only)
        change = "memory" if by_memory else d.limit.change
        return cls(kind, change, by_memory, measured, max(flagged, default=None))


def measured_at(found: Sequence[MeasuredCount], n: int) -> MeasuredCount | None:
    """The largest count at or below ``n`` measured outside its interval (None: none)."""
    below = [m for m in found if m.accelerators <= n]
    return max(below, key=lambda m: m.accelerators, default=None)


@dataclass(frozen=True, kw_only=True, slots=True)
class Equilibrium:
    """The numbers of the equilibrium picks over the trusted rows."""

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
    """The counts other rules pick (``cheapest`` None: no price)."""

    efficient: int | None
    cheapest: int | None
    equilibrium: dict[str, int | None]
    numbers: Equilibrium


@dataclass(frozen=True, kw_only=True, slots=True)
class OneDeviceRow:
    """The N = 1 row beside the bench's N = 1 run (ms): DDP's own work the first count
    above 1 adds; the samples per optimizer step of each; the bench's no-sync step and its
    gap to the row's; ``overstated``: ``step / (step - fsdp_own)``; the step at the bench's
    batch."""

    step_ms: float = 0.0
    added_ddp_ms: float = 0.0
    row_samples: float = 0.0
    bench_samples: float | None = None
    nosync_ms: float | None = None
    gap_ms: float | None = None
    overstated: float | None = None
    at_bench_ms: float | None = None

    @property
    def gap_size_ms(self) -> float:
        return abs(self.gap_ms or 0.0)

    @property
    def under(self) -> bool:
        return (self.gap_ms or 0.0) > 0


SMALLEST_SEARCHED = 1e3  # the break-even search's smallest model (``search.derive``)


def _from_size(params: float | None) -> str:
    if params is None:
        return "none"
    return "every" if params <= SMALLEST_SEARCHED else "size"


@dataclass(frozen=True, slots=True)
class BreakEven:
    """From what size 2 devices train faster than 1 on this link (None: none; NaN where the
    speedup falls with size), and this model beside it."""

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

    # from which size 2 devices beat 1, and reach the target (:func:`_from_size`)
    @property
    def beats_from(self) -> str:
        return _from_size(self.params)

    @property
    def reaches_from(self) -> str:
        return _from_size(self.target_efficiency_params)

    def own_disagrees(self, params: float) -> bool:
        """Whether this model's own step (of ``params``) beats 1 device on 2 on the other side
        of the break-even size."""
        size, own = self.params, self.pair_throughput_speedup
        if own is None or (size is not None and math.isnan(size)):
            return False
        return (size is not None and params >= size) != (own > 1)

    @property
    def table_differs(self) -> bool:
        """Whether the 2 devices' speedup to a trained model prints otherwise than their
        throughput speedup."""
        table, own = self.pair_speedup, self.pair_throughput_speedup
        return table is not None and number(table) != number(own)


@dataclass(frozen=True, kw_only=True, slots=True)
class FixedTerm:
    """The optimizer step on one device and at the focus (FSDP: its ``1/n`` shard), ms; the
    ``fixed`` term's excess there split into the optimizer's (``opt_n - opt s``, ``s`` the
    samples per device over one device's) and the forward and backward's."""

    optimizer_ms: float = 0.0
    optimizer_at_focus_ms: float = 0.0
    excess_ms: float = 0.0
    optimizer_excess_ms: float = 0.0
    forward_backward_excess_ms: float = 0.0

    @property
    def optimizer_mostly(self) -> bool:
        return self.optimizer_excess_ms > self.forward_backward_excess_ms


# a step interval wider than a factor of 1.5 cannot decide a count
WIDE_STEP_INTERVAL = math.log(1.5)


@dataclass(frozen=True, slots=True)
class Qualifiers:
    """What qualifies the headline: the defaults used, the
    step interval's log half-width where too wide, the bench model advised on and why."""

    defaults: tuple[str, ...] = ()
    wide_step_log: float | None = None
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
    """The rows' intervals above one device and why wider than the model's error
    (``ranges``, ``floor``, ``linear``, ``growing``; none where ``rule`` gives them)."""

    rule: Finding | None = None
    spans: tuple[RowSpan, ...] = ()
    wider: tuple[str, ...] = ()

    def span(self, n: int) -> RowSpan:
        return next(s for s in self.spans if s.accelerators == n)


@dataclass(frozen=True, slots=True)
class InputRate:
    """The samples/s the largest count predicted consumes."""

    samples_per_s: float
    devices: int

    @property
    def per_device(self) -> float:
        return self.samples_per_s / self.devices

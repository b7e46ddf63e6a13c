"""What the search derives, as the words read it: :class:`Searched`, the advice as numbers,
and the numbers beside its decision (``search.derive`` computes them off the predictions):
the counts other rules pick, the break-even, the fixed term at the focus, the N = 1 row,
the rows' intervals, the input rate; and what the bench flagged, as findings (the
--allow-flagged warning and the refusals say them alike)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING

from gpuscale.advice.records import Deciding, Decision
from gpuscale.advice.types import Broken, Finding, Flags, MeasuredCount
from gpuscale.advice.types import FindingKind as K
from gpuscale.plausibility import detail
from gpuscale.quantities import number

if TYPE_CHECKING:
    import pandas as pd

    from gpuscale.advice.calibration import Calibration
    from gpuscale.hardware.memory import MemoryCheck


@dataclass(frozen=True, kw_only=True, slots=True)
class Equilibrium:
    """The equilibrium picks' numbers over the plausible rows that hold the model."""

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
    """The count each rule picks among those that hold the model no refusal rules out
    (``cheapest``: the fewest accelerator-hours, the cheapest at any price, priced or not;
    every count and ``numbers`` None: none is left)."""

    fastest: int | None
    efficient: int | None
    cheapest: int | None
    equilibrium: dict[str, int | None]
    numbers: Equilibrium | None


@dataclass(frozen=True, kw_only=True, slots=True)
class OneDeviceRow:
    """The N = 1 row beside the bench's N = 1 run (ms): DDP's own work the first count above
    1 adds; each one's samples per optimizer step; ``nosync_ms``: the bench's N = 1 step less
    the strategy's own work the row leaves out (FSDP's where an FSDP run is advised as DDP;
    none where the row is FSDP's step whole), and its gap to the row's; ``overstated``:
    ``step / (step - fsdp_own)``; the step at the bench's batch."""

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
    speedup falls with size), and this model beside it: its whole step's TFLOP/s and
    compute per gradient MB, the break-even's FLOPs per gradient byte at that rate, FLOPs per
    parameter per sample; this model's optimizer step and DDP's own work (ms) and the
    family's at its size; on 2 devices, the throughput speedup and the speedup to a trained
    model."""

    compute_ms_per_grad_mb: float | None = None
    params: float | None = None
    target_efficiency_params: float | None = None
    step_tflops: float | None = None
    own_ms_per_grad_mb: float | None = None
    flops_per_grad_byte: float | None = None
    flops_per_param: float | None = None
    own_optimizer_ms: float | None = None
    own_ddp_ms: float | None = None
    family_optimizer_ms: float | None = None
    family_ddp_ms: float | None = None
    pair_throughput_speedup: float | None = None
    pair_speedup: float | None = None

    @property
    def beats_from(self) -> str:
        return _from_size(self.params)

    @property
    def reaches_from(self) -> str:
        return _from_size(self.target_efficiency_params)

    def own_disagrees(self, params: float) -> bool:
        """Whether this model (of ``params``) beats 1 device on 2 on the other side of the
        break-even size."""
        size, own = self.params, self.pair_throughput_speedup
        if own is None or (size is not None and math.isnan(size)):
            return False
        return (size is not None and params >= size) != (own > 1)

    @property
    def table_differs(self) -> bool:  # the 2 devices' two speedups print otherwise
        table, own = self.pair_speedup, self.pair_throughput_speedup
        return table is not None and number(table) != number(own)


@dataclass(frozen=True, kw_only=True, slots=True)
class FixedTerm:
    """The optimizer step on one device and at the focus (FSDP: its ``1/n`` shard), ms; the
    ``fixed`` term's excess there: the optimizer's (``opt_n - opt s``, ``s`` the samples per
    device over one device's) and the forward and backward's."""

    optimizer_ms: float = 0.0
    optimizer_at_focus_ms: float = 0.0
    excess_ms: float = 0.0
    optimizer_excess_ms: float = 0.0
    forward_backward_excess_ms: float = 0.0

    @property
    def optimizer_mostly(self) -> bool:
        return self.optimizer_excess_ms > self.forward_backward_excess_ms


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
    """The rows' intervals above one device and why wider than the model's error (``ranges``,
    ``floor``, ``linear``, ``growing``; none where ``rule`` gives them)."""

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


@dataclass(frozen=True)
class Searched:
    """The predictions, the :class:`Decision` read off them and what qualifies it, as data
    (``api.Advice`` adds the words)."""

    table: pd.DataFrame  # one row per device count, its flags as data
    decided: Decision
    picks: Picks  # the counts other rules pick
    break_even: BreakEven
    calibration: Calibration  # what it was computed from
    weak_table: pd.DataFrame | None = None  # strong scaling's weak-scaling alternative
    disagreements: tuple[MeasuredCount, ...] = ()
    measured_counts: tuple[MeasuredCount, ...] = ()
    # (count, predicted minutes, MLPerf's floor, its system): inputs that cannot be true
    below_mlperf: tuple[tuple[int, float, float, Finding], ...] = ()
    wide_step_log: float | None = None  # the step interval's log half-width where too wide
    input_rate: InputRate | None = None  # the input pipeline's load at the largest count
    memory: MemoryCheck | None = None
    intervals: RowIntervals = field(default_factory=RowIntervals)  # the rows' and why
    fixed_term: FixedTerm = field(default_factory=FixedTerm)  # at the focus count
    one_device: OneDeviceRow = field(default_factory=OneDeviceRow)  # beside the bench's N = 1

    @property
    def recommended(self) -> int | None:
        return self.decided.count

    @cached_property
    def deciding(self) -> Deciding:
        memory, strategy = self.memory, self.calibration.run.strategy
        return Deciding.of(self.decided, memory, self.disagreements, strategy)


def flags_among(flags: Flags, runs: int) -> int | None:
    """The flags of ``flags`` where they outnumber the ``runs`` (a run flagged twice): each
    flag's runs then add to more than the runs, so both are said; else None."""
    total = sum(n for _, n, _ in flags)
    return total if total > runs else None


def flags_seen(flags: Flags) -> tuple[Finding, ...]:
    """Each kind of flag with its runs and an example reason (its words after the kind)."""
    return tuple(Finding.of(K.FLAG_SEEN, flag=k, n=n, why=detail(why)) for k, n, why in flags)


def broken_left_out(broken: Broken) -> Finding | None:
    """The broken models (a loss not finite at the counts beside each) left out; None where
    none is."""
    if not broken:
        return None
    return Finding.of(K.BROKEN_LEFT_OUT, models=broken_models(broken))


def broken_models(broken: Broken) -> tuple[Finding, ...]:
    return tuple(Finding.of(K.BROKEN_MODEL, model=m, on=on) for m, on in broken)

"""``search``, the package's one pass: the predictions, the rows measured outside their
interval resting on the runs (:mod:`.measured`), and ``decide``, the one :class:`Decision`
read off them."""

from __future__ import annotations

import math
from dataclasses import dataclass, field, fields, replace
from functools import cached_property
from typing import TypeVar

import pandas as pd

from gpuscale.advice.calibration import Calibration
from gpuscale.advice.derived import (
    BreakEven,
    FixedTerm,
    InputRate,
    OneDeviceRow,
    Picks,
    RowIntervals,
)
from gpuscale.advice.model.network import MIB
from gpuscale.advice.records import (
    WIDE_STEP_INTERVAL,
    Chosen,
    Deciding,
    Decision,
    Focus,
    Limit,
    Row,
)
from gpuscale.advice.search import derive, predict
from gpuscale.advice.search.measured import applied, measured_counts
from gpuscale.advice.search.predict import Refused, advisable, trusted
from gpuscale.advice.types import (
    STOPPED,
    Finding,
    FindingKind,
    MeasuredCount,
    Reading,
    TermId,
    maybe,
)
from gpuscale.hardware.memory_check import MemoryCheck
from gpuscale.tables.advice import NOT_POSITIVE

R = TypeVar("R")
NEGLIGIBLE = 0.95  # a factor above this loses under 5%


class NoneHolds(ValueError):
    """No count searched holds the model under any strategy (``explain`` says why)."""

    def __init__(self, memory: MemoryCheck, sources: tuple[str | Finding, ...]) -> None:
        super().__init__("nothing_fits")
        self.memory = memory
        self.sources = sources


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


def search(cal: Calibration, rule: predict.IntervalRule | None = None) -> Searched:
    """The advice on the calibration the devices hold (``held``) and its variants (the
    weak-scaling alternative, each end of every assumed term's range), each predicted,
    reconciled, decided. ``rule``: the speedup's interval per link class."""
    cal, fits_from, memory = held(cal)
    run, goal = cal.run, cal.search
    multi = cal.machine.max_devices >= 2 and run.global_batch is None
    weak = multi and run.kept_global_batch is not None and goal.convergence is None
    ends = [cal.at(changes) for *_, changes in goal.ends]
    # the weak-scaling alternative keeps the per-device batch
    variants = (cal, *([cal.at({"run": {"scaling": "weak"}})] if weak else []), *ends)
    predicted = [predict.predicted(variant, rule or predict.RULE) for variant in variants]
    tables, interval = [table for table, _ in predicted], predicted[0][1]
    measured = measured_counts(tables[0], cal.runs.measured, tables[1] if weak else None)
    found = tuple(c for c in measured if not c.inside)
    counts = {m.devices for m in cal.runs.measured}  # measured counts: as said
    frame, *others = [applied(table, found, counts) for table in tables]
    below = derive.below_mlperf(frame, goal.mlperf_floor)
    decision = decide(cal, frame, cal.said.implausible or bool(below), fits_from)
    readings = []  # the count chosen at each end of every assumed term's range
    at_ends = zip(goal.ends, ends, others[int(weak) :], strict=True)
    for (term, end, value, unit, _), at, table in at_ends:
        chosen = decide(at, table, at.said.implausible, fits_from).read
        link = at.machine.network.intra if term == "link" else None  # the preset at that end
        readings.append(
            Reading(
                term,
                end,
                float(value),
                unit,
                chosen.accelerators,
                chosen.speedup,
                preset=maybe(lambda x: x.name, link),
                latency_us=maybe(lambda x: x.latency_us, link),
            )
        )
    moved = (r.term for r in readings if r.accelerators != decision.read.accelerators)
    decision = replace(decision, readings=tuple(readings), withheld_by=next(moved, None))
    last = frame.iloc[-1]
    width = cal.model.error.width_log  # the step's interval, said where too wide
    wide = width if decision.read.accelerators > 1 and width > WIDE_STEP_INTERVAL else None
    return Searched(
        table=frame,
        decided=decision,
        picks=derive.picked(frame, fits_from, goal, decision.refused),
        break_even=derive.break_even(cal, frame) if multi else BreakEven(),
        calibration=cal,
        weak_table=others[0] if weak else None,
        disagreements=found,
        measured_counts=measured,
        below_mlperf=below,
        input_rate=InputRate(float(last.samples_per_s), int(last.accelerators)),
        wide_step_log=wide,
        memory=memory,
        intervals=derive.row_intervals(cal, frame, interval),
        fixed_term=derive.fixed_term(cal, frame, decision.focus.accelerators),
        one_device=derive.one_device_row(cal, frame),
    )


def held(cal: Calibration) -> tuple[Calibration, int, MemoryCheck | None]:
    """(the calibration, the fewest devices that hold the model, the memory check where it
    limits the counts) under the strategy asked, else ``MemoryCheck.fallback``'s."""
    memory = cal.machine.memory
    if memory is None or not memory.limits:
        return cal, 1, None
    asked = memory.fits_from(memory.strategy)
    if asked is not None:
        return cal, asked, memory
    if memory.fallback is None:
        raise NoneHolds(memory, cal.said.sources)
    strategy, fewest = memory.fallback
    return cal.at({"run": {"strategy": strategy}}), fewest, memory


def _record(cls: type[R], row: pd.Series, **given: object) -> R:
    """A ``cls`` of ``row``'s columns named as its fields, cast to their types."""
    casts = {"int": int, "float": float, "str": str}
    taken = {f.name: casts[f.type](row[f.name]) for f in fields(cls) if f.name not in given}
    return cls(**taken, **given)


def decide(cal: Calibration, frame: pd.DataFrame, refused: bool, fits_from: int) -> Decision:
    """The Decision of ``frame``'s plausible rows: ``chosen`` (``_chosen``); ``focus``, the
    next count up, where the limit is read. ``fits_from`` stands for one device."""
    target = cal.search.target_efficiency
    plain, fitting = trusted(frame, fits_from)
    if plain.empty:  # one device's speedup is 1: only its time can fail
        raise Refused(Finding.of(FindingKind.NOTHING_PLAUSIBLE, why=NOT_POSITIVE))
    # no count predicted holds the model: read as without memory, none advised (``holds``)
    holds = bool(fitting["accelerators"].iloc[0] >= fits_from)
    chosen, held = _chosen(fitting, target, refused)
    larger = plain[plain["accelerators"] > chosen["accelerators"]]
    focus = larger.iloc[0] if len(larger) else plain.iloc[-1]
    parts = dict.fromkeys(derive.OVERHEADS, 0.0)  # none at one device
    term = "compute"  # at >= 95% throughput efficiency (or N = 1)
    if focus["accelerators"] > 1:
        parts = derive.overheads(focus)
        if focus["throughput_efficiency"] < NEGLIGIBLE:
            term = max(parts, key=parts.get)
    largest = int(plain["accelerators"].iloc[-1])
    counts = derive.counts(cal, frame, int(focus["accelerators"]), not len(larger))
    if len(larger):  # the factor that loses more (log scale); ``none``: both lose under 5%
        losses = {
            "overheads": math.log(min(1.0, focus["throughput_efficiency"])),
            "convergence": math.log(min(1.0, focus["convergence_factor"])),
        }
        cap = min(losses, key=losses.get)
        cap = cap if losses[cap] < math.log(NEGLIGIBLE) else "none"
    else:
        # why none above: a count searched above has no row (the global batch kept does not
        # split over it), those above were flagged, or the devices end there
        cap = "flagged" if counts.flagged_above else "devices"
        cap = "batch" if counts.missing_above else cap
    change = cap if cap in ("convergence", *STOPPED) else term
    if cap == "none" and held is not None:
        change = "uncertain"
    explained = None
    ratio = 1 / float(focus["convergence_factor"]) if cap == "convergence" else None
    if focus["rests_on"] != "predicted":
        explained = float(focus["step_ms"]) - parts[TermId.UNEXPLAINED]
    # larger buckets (DDP's: the gradients fill more than one) or units (sharded) would
    # issue fewer collectives
    fewer = cal.model.spec.units > 1
    if cal.run.strategy == "ddp":
        fewer = cal.model.spec.grad_bytes > cal.run.bucket_mb * MIB
    gone, also = derive.shrink(focus, parts, term, target)
    reaches = chosen["efficiency"] >= target or chosen["accelerators"] <= fits_from
    allowed = advisable(frame, fits_from, refused)  # the counts the fastest is one of
    fastest = None
    if len(allowed):
        fastest = int(allowed.loc[allowed["time_to_train_min"].idxmin(), "accelerators"])
    return Decision(
        read=_record(Chosen, chosen, reaches_target=bool(reaches)),
        target_efficiency=target,
        held_back=held,
        fastest=fastest,
        largest=largest,
        focus=_record(Focus, focus, samples_ratio=ratio, explained_ms=explained),
        limit=Limit(
            dominant_term=term,
            overheads_ms=parts,
            cap=cap,
            change=change,
            without_dominant_efficiency=gone,
            also_shrink=also,
            fewer_messages=fewer,
        ),
        warnings=cal.said.warnings,
        refused=refused,
        holds=holds,
        counts=counts,
    )


def _chosen(rows: pd.DataFrame, target: float, refused: bool) -> tuple[pd.Series, Row | None]:
    """The fastest count reaching ``target`` efficiency with its speedup's 80% interval above
    the smallest count's (never, where ``refused``: an input cannot be true); and the faster
    count held back as not sure (None: none)."""
    first = rows.index[0]  # the smallest count's row
    reaching = rows[(rows["efficiency"] >= target) | (rows.index == first)]
    # a count resting on one run has no interval (NaN): its value is all there is to read
    low = reaching["speedup_low"].fillna(reaching["speedup"])
    base = float(rows.loc[first, "speedup"])  # 1 where the smallest count is one device
    sure = reaching[(reaching.index == first) | ((low > base) & (not refused))]
    chosen = sure.loc[sure["time_to_train_min"].idxmin()]
    best = reaching.loc[reaching["time_to_train_min"].idxmin()]
    if best["accelerators"] == chosen["accelerators"]:  # else not sure: it is not in ``sure``
        return chosen, None
    return chosen, _record(Row, best)

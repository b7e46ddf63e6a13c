"""``search``, the package's one pass: the predictions; the bench's counts beside them
(``measured_counts``: each inside or outside its 80% interval), the rows measured outside
theirs resting on the runs (``applied``: the terms scaled, the runs' range as the
interval); and ``decide``, the one :class:`Decision` read off them."""

from __future__ import annotations

import math
from collections.abc import Collection, Sequence
from dataclasses import fields, replace
from types import NoneType
from typing import TypeVar, get_args, get_type_hints

import pandas as pd

from gpuscale.advice.calibration import Calibration
from gpuscale.advice.derived import BreakEven, InputRate, Searched
from gpuscale.advice.model.network import MIB
from gpuscale.advice.records import (
    WIDE_STEP_INTERVAL,
    Chosen,
    Decision,
    Focus,
    Limit,
    Row,
    measured_at,
)
from gpuscale.advice.search import derive, predict
from gpuscale.advice.search.predict import Refused, holding
from gpuscale.advice.types import (
    STOPPED,
    Finding,
    FindingKind,
    Measured,
    MeasuredCount,
    Reading,
    TermId,
    maybe,
)
from gpuscale.hardware.memory import MemoryCheck
from gpuscale.tables.advice import NOT_POSITIVE, as_throughput, same_configuration

R = TypeVar("R")
NEGLIGIBLE = 0.95  # a factor above this loses under 5%
# the prediction columns that scale with the step's throughput, with its time
WITH_THROUGHPUT = ["samples_per_s", "speedup", "efficiency", "throughput_efficiency"]
WITH_TIME = ["step_ms", "time_to_train_min", "accelerator_hours", "cost", "energy_kwh"]
# the model's terms of a step (ms), whose sum is the step predicted, and their parts: fixed
# excess is part of compute, latency of the whole communication (hidden or not)
SUMMED = ["compute_ms", "ddp_ms", "wait_ms", "exposed_comm_ms"]
TERMS = [*SUMMED, "comm_ms", "latency_ms", "fixed_excess_ms"]
INTERVALS = ["speedup_low", "speedup_high", "step_ms_low", "step_ms_high"]
# a row derived from a measurement at its count in another configuration: that one's
# per-device batch and measured throughput speedup (NaN elsewhere; not in the table shown)
DERIVED_FROM = ["derived_from_batch", "derived_from_speedup"]


class NoneHolds(ValueError):
    """No count searched holds the model under any strategy (``explain`` says why)."""

    def __init__(self, memory: MemoryCheck, sources: tuple[str | Finding, ...]) -> None:
        super().__init__("nothing_fits")
        self.memory = memory
        self.sources = sources


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
    refused = cal.said.implausible or bool(below)
    picks = derive.picked(frame, fits_from, goal, refused)
    decision = decide(cal, frame, refused, fits_from, picks.fastest)
    readings = []  # the count chosen at each end of every assumed term's range
    at_ends = zip(goal.ends, ends, others[int(weak) :], strict=True)
    for (term, end, value, unit, _), at, table in at_ends:
        chosen = decide(at, table, at.said.implausible, fits_from).read
        link = at.machine.network.intra if term in ("link", "fabric") else None  # its preset
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
                beyond_interval=beyond(chosen, decision.read),
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
        picks=picks,
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


def beyond(end: Row, read: Row) -> bool:
    """Whether ``end``, the count chosen at one end of an assumed term's range, is the count
    ``read`` advised at a speedup outside its 80% interval (beyond ``derive.TOLERANCE`` of
    it): the range moves the time, not the count."""
    low, high = (
        read.speedup_low * (1 - derive.TOLERANCE),
        read.speedup_high * (1 + derive.TOLERANCE),
    )
    return end.accelerators == read.accelerators and not low <= end.speedup <= high


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
    """A ``cls`` of ``row``'s columns named as its fields, cast to their types (an optional
    field's NaN: None)."""
    hints = get_type_hints(cls)  # the annotations as types (this module's are postponed)
    taken: dict[str, object] = {}
    for f in fields(cls):
        if f.name not in given:
            kinds = [k for k in get_args(hints[f.name]) or (hints[f.name],) if k is not NoneType]
            value = row[f.name]
            optional = len(kinds) < len(get_args(hints[f.name]))
            taken[f.name] = None if optional and pd.isna(value) else kinds[0](value)
    return cls(**taken, **given)


def decide(
    cal: Calibration,
    frame: pd.DataFrame,
    refused: bool,
    fits_from: int,
    fastest: int | None = None,
) -> Decision:
    """The Decision of ``frame``'s plausible rows: ``chosen`` (``_chosen``); ``focus``, the
    next count up, where the limit is read. ``fits_from`` stands for one device; ``fastest``
    is the picks' (``derive.picked``)."""
    target = cal.search.target_efficiency
    plain, fitting = holding(frame, fits_from)
    if plain.empty:  # one device's speedup is 1: only its time can fail
        raise Refused(Finding.of(FindingKind.NOTHING_PLAUSIBLE, why=NOT_POSITIVE))
    # no count predicted holds the model: read as without memory, none advised (``holds``)
    holds = bool(len(fitting))
    chosen, held = _chosen(fitting if holds else plain, target, refused)
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


def measured_counts(
    predictions: pd.DataFrame,
    measured: Sequence[Measured],
    alternative: pd.DataFrame | None = None,
) -> tuple[MeasuredCount, ...]:
    """The :class:`MeasuredCount` of each count the bench measured in a configuration
    predicted (else in the weak-scaling ``alternative``)."""
    frames = [None if f is None else as_throughput(f) for f in (predictions, alternative)]
    groups: dict[tuple, list[Measured]] = {}
    for m in measured:
        key = (m.devices, m.batch_per_device, m.accum, m.base or (m.batch_per_device, m.accum))
        groups.setdefault(key, []).append(m)
    found = []
    for (devices, batch, accum, base), runs in groups.items():
        row = same_configuration(frames, devices, batch, accum, base)
        if row is None:
            continue
        kept = tuple(m for m in runs if not m.flagged or m.allowed)
        used = kept or tuple(runs)
        speedup = float(pd.Series([m.speedup for m in used], dtype=float).median())
        bases = tuple(sorted({m.basis for m in used}))  # one, but for files mixing benches
        low, high = float(row["speedup_low"]), float(row["speedup_high"])
        found.append(
            MeasuredCount(
                accelerators=devices,
                batch_per_device=batch,
                accum=accum,
                base=tuple(base),
                predicted_speedup=float(row["speedup"]),
                predicted_low=low,
                predicted_high=high,
                weak_scaling=same_configuration(frames[:1], devices, batch, accum, base) is None,
                runs=tuple(runs),
                trusted=kept,
                speedups=tuple(m.speedup for m in runs),
                measured_speedup=speedup,
                inside=low <= speedup <= high,
                basis=bases,
            )
        )
    return tuple(sorted(found, key=lambda c: c.accelerators))


def applied(
    frame: pd.DataFrame, found: Sequence[MeasuredCount], measured: Collection[int]
) -> pd.DataFrame:
    """``frame`` with each row a disagreement governs (at its count, its own configuration's
    first; above it, up to the next count ``measured``) resting on the measurement: its
    own (``measured``), one at its count in another configuration (``derived``: the row's
    prediction times that one's ratio to its own) or one below (``measured_below``)."""
    out = frame.copy()
    out[DERIVED_FROM] = math.nan
    for i, row in frame.iterrows():
        n = int(row["accelerators"])
        d = measured_at(found, n)
        if d is None or any(d.accelerators < k <= n for k in measured):
            continue  # none at or below, or a count measured in between agreed
        key = (d.accelerators, int(row["batch_per_device"]), int(row["accum"]))
        d = next((x for x in found if (x.accelerators, x.batch_per_device, x.accum) == key), d)
        factor = d.measured_speedup / d.predicted_speedup
        modelled_ms = float(row["step_ms"])
        if factor > 1:  # measured shorter: the model's split of it, each term in proportion
            out.loc[i, TERMS] = (row[TERMS] / factor).to_numpy(float)
            out.loc[i, "unexplained_ms"] = 0.0
        else:  # measured longer: the model's terms plus what they leave unexplained
            out.loc[i, "unexplained_ms"] = modelled_ms / factor - modelled_ms
        own = (d.batch_per_device, d.accum) == key[1:]
        kind = "measured" if own else "derived"
        out.loc[i, "rests_on"] = kind if d.accelerators == n else "measured_below"
        if d.accelerators == n and not own:
            out.loc[i, DERIVED_FROM] = [d.batch_per_device, d.measured_speedup]
        out.loc[i, WITH_THROUGHPUT] = (row[WITH_THROUGHPUT] * factor).to_numpy(float)
        out.loc[i, WITH_TIME] = (row[WITH_TIME] / factor).to_numpy(float)
        speedup, step = out.loc[i, "speedup"], out.loc[i, "step_ms"]
        seen, low, high = d.measured_speedup, d.measured_low, d.measured_high
        if low is None or high is None:  # one run: no interval
            out.loc[i, INTERVALS] = math.nan
            continue
        # the step's interval the speedup's, inverted: the runs' range, not the model's
        ends = [speedup * low / seen, speedup * high / seen, step * seen / high, step * seen / low]
        out.loc[i, INTERVALS] = ends
    return out

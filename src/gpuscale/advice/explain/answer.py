"""The short answer ``gpuscale advise`` says before its table: where memory limits the counts,
the count decided, what decides at the focus, the counts searched, what would change it
(``--explain``: ``explanation``); the memory check's words are :mod:`.caveats`'."""

from __future__ import annotations

import re
from textwrap import wrap
from typing import Protocol

import pandas as pd

from gpuscale.advice import derived, records
from gpuscale.advice.calibration import Calibration
from gpuscale.advice.explain.caveats import memory_said, withholding
from gpuscale.advice.explain.phrasebook import (
    TERMS,
    WITHHELD,
    first_case,
    measured,
    reading,
    sentence,
    spelled_as,
    term_words,
    withheld_words,
)
from gpuscale.advice.records import Assumption, Decision
from gpuscale.advice.types import (
    STOPPED,
    Finding,
    FindingKind,
    MeasuredCount,
    Reading,
    Source,
    TermId,
)
from gpuscale.hardware.memory import MemoryCheck
from gpuscale.quantities import counted, format_ms, joined


def row_at(frame: pd.DataFrame, n: int) -> pd.Series:
    return frame[frame["accelerators"] == n].iloc[0]


class AdviceView(Protocol):
    """The fields of ``derived.Searched`` the words read, and ``document.Worded``'s."""

    picks: derived.Picks
    break_even: derived.BreakEven
    calibration: Calibration
    disagreements: tuple[MeasuredCount, ...]
    measured_counts: tuple[MeasuredCount, ...]
    memory: MemoryCheck | None
    intervals: derived.RowIntervals
    fixed_term: derived.FixedTerm
    one_device: derived.OneDeviceRow
    deciding: records.Deciding
    predictions: pd.DataFrame
    alternative: pd.DataFrame | None
    assumptions: tuple[Assumption, ...]
    decision: Decision
    caveats: tuple[str, ...]
    explanation: list[str]
    keywords: bool


def issued(cal: Calibration, n: int | None = None) -> str:
    """The strategy whose collectives ``n`` devices issue (None: the counts searched): hybrid
    sharding within one node is FSDP (its all-reduce across nodes has none to join)."""
    strategy, network = cal.run.strategy, cal.machine.network
    counts = cal.machine.device_counts if n is None else [n]
    if strategy == "hybrid" and not any(network.spans_nodes(c) for c in counts):
        return "fsdp"
    return strategy


def moved_by(d: Decision) -> list[str]:
    """Each assumed term whose range moves the count, in the readings' order, withheld_by first."""
    moved = (r.term for r in d.readings if r.accelerators != d.read.accelerators)
    return list(dict.fromkeys(moved))


def withheld_how(d: Decision) -> str:
    """What settles a withheld count: each moving term's measure, the shortest where
    several (``--explain``'s caveats say each whole); ``decision.settle`` in -f json."""
    moved = moved_by(d)
    form = "settle" if len(moved) == 1 else "short"
    said = [withheld_words(term, form) for term in moved]
    if len(said) > 1 and all(s.startswith("give ") for s in said):  # give --a and --b
        return "give " + joined([s.removeprefix("give ") for s in said], "and")
    return joined(said, "and")


def readings_apart(advice: AdviceView) -> list[Reading]:
    """The readings at the ends of the ranges that move the count which differ from the
    value assumed: pcie-phb's 10 GB/s where pcie-phb (the preset assumed) is assumed is no
    alternative, pcie-sys's 10 GB/s at its longer latency is."""
    d, link, found = advice.decision, advice.calibration.machine.network.intra.name, []
    for term in moved_by(d):
        said = withholding(advice.assumptions, term)
        at = None if said is None or said.quantity is None else said.quantity.value
        for r in d.readings:
            other = r.preset != link if r.preset is not None else r.value != at
            if r.term == term and other:
                found.append(r)
    return found


def withheld(advice: AdviceView) -> list[str]:
    """Each term whose range moves the count: the count at each end of it."""
    d, link = advice.decision, advice.calibration.machine.network.intra
    apart, found = readings_apart(advice), []
    for term in moved_by(d):
        at = "; ".join(reading(r, speedup=True) for r in apart if r.term == term)
        value = getattr(withholding(advice.assumptions, term), "value", None)
        latency = link.latency_us if term == "link" else None  # beside its bandwidth, as read
        values = {"at": at, "value": value, "latency": latency}
        settled = withheld_words(term, "settle")
        found.append(
            sentence("count_withheld", row=WITHHELD[term], settle=settled, c=d.read, **values)
        )
    return found


def named(d: Decision, detailed: bool = False) -> str:
    """``4 devices, the next count above the 2 devices advised`` or ``the 8 devices
    advised``; a count not advised is named as predicted as assumed, or read as if memory
    allowed. ``detailed``: which is the fastest, said before the count it names."""
    n, focus, fastest = d.read.accelerators, d.focus.accelerators, ""
    # None: no count predicted holds the model; refused: the rules read one device alone
    if detailed and d.fastest is not None and not d.refused:
        fastest = {n: "chosen", focus: "focus" if focus == n else "focus_next"}
        fastest = fastest.get(d.fastest, "other")
    word = "advised" if d.count is not None else ("assumed" if d.holds else "unheld")
    return sentence("named", d=d, fastest=fastest, same=focus == n, word=word)


def decision_line(advice: AdviceView, long: bool = False) -> str:
    """The decision, its time, cost and energy (``long``: --explain's, the efficiency's parts
    beside it, and where no count holds the model the row as if memory allowed)."""
    d, frame = advice.decision, advice.predictions
    read = d.read  # the count chosen, or where none is, the one read without memory's limit
    if not d.holds and not long:  # the fewest devices that hold the model, and the strategy
        held, run = advice.memory, advice.calibration.run
        fewest = held and held.holding(run.strategy)
        # where the global batch kept does not split over it, the least it divides above
        unsplit = None
        if held and fewest and run.kept_global_batch and fewest in d.counts.missing:
            unsplit = held.split_batch(run.strategy, run.kept_global_batch)
        switched = True if held and run.strategy != held.strategy else None  # a fallback's
        return sentence("none_holds", run=run, fewest=fewest, unsplit=unsplit, switched=switched)
    row = row_at(frame, read.accelerators)
    known = row[["cost", "energy_kwh"]].dropna()  # no price: not said; no power: said unknown
    said = {"cost": known.get("cost"), "kwh": known.get("energy_kwh")}
    said["unpowered"] = "unknown" if said["kwh"] is None else None  # no power at that row
    said["samples"] = float(row["samples_to_train"])  # at its global batch
    trained = sentence("trained", time=row["time_to_train_min"], **said)
    other = "; ".join(
        reading(r)
        for r in readings_apart(advice)
        if r.accelerators != read.accelerators and r.term == d.withheld_by
    )  # the other terms that move it: "Decides:" names them
    said |= {"trained": trained, "other": other, "eff": long or None}
    n = read.accelerators  # one_focus: one device, the focus another; withheld at 1: no 1x
    cases = {"none": not d.holds, "withheld_one": d.withheld_by and n == 1}
    cases |= {"withheld": d.withheld_by, "refused": d.count is None}
    kind = first_case({**cases, "many": n > 1, "one": d.focus.accelerators == n, "one_focus": 1})
    return sentence("decision", kind=kind, d=d, c=read, **said)


def deciding_line(advice: AdviceView) -> str:
    """What decides at the focus ("": no count predicted holds the model, so the focus is a
    count that cannot run, the answer's decision line saying what rules them out; or a
    measurement at the focus decides, said by the answer's first lines)."""
    d, kind = advice.decision, advice.deciding.kind
    if not d.holds or (kind == "measured" and advice.deciding.measured in advice.disagreements):
        return ""  # the measurement at the focus opens the answer already
    strategy = issued(advice.calibration, d.focus.accelerators)  # the collectives there
    # ``m``: the measurement the focus rests on where the model's terms do not explain it
    said = {"d": d, "m": advice.deciding.measured, "strategy": advice.calibration.run.strategy}
    said["slower"] = kind == "memory" and d.read.loses  # the fewest that hold it
    if kind == "withheld":  # the terms that move the count decide, not the table's cap
        ends = {r.accelerators for r in readings_apart(advice)}
        said["counts"] = joined(sorted(ends | {d.read.accelerators}), "or")
        moved = moved_by(d)  # several: each named, the settle (below) says how to give each
        said["ungiven"] = WITHHELD[d.withheld_by]["ungiven"]
        said["names"] = joined([f"the {WITHHELD[term]['name']}" for term in moved], "and")
        kind = "withheld_many" if len(moved) > 1 else kind
    elif kind == "interval":  # the count withheld by its interval, not by a term
        said["held"] = d.held_back if d.focus.speedup_low > 1 and d.held_back else d.focus
    elif kind == "devices":  # a count asked for, cut at the topology's GPUs: why, briefly
        sources = advice.calibration.said
        cap = sources.source(FindingKind.ONE_GPU) or sources.source(FindingKind.TOPOLOGY_CAP)
        said["cut"] = None if cap is None else cap["default"]  # True: none asked
        if cap is not None:
            said |= {"asked": cap["asked"], "gpus": dict(cap.values).get("gpus", 1)}
    elif kind == "refused":  # held back though its interval gains: the inputs decide
        said["held"] = d.held_back
    elif kind == "term" and d.limit.dominant_term not in TERMS:
        kind = "small"
    elif kind == "term":
        term, also = d.limit.dominant_term, d.limit.also_shrink
        exposed = row_at(advice.predictions, d.focus.accelerators)["exposed_comm_ms"]
        alone = counted(len(also), "other term")
        if len(also) == 1:
            alone = term_words(also[0], "says", strategy)
        said |= {"term": term_words(term, "says", strategy), "ms": d.limit.overheads_ms[term]}
        said["exposed"] = exposed if term in (TermId.BANDWIDTH, TermId.LATENCY) else None
        said["alone"] = alone if also else None  # the others that must shrink too
    return sentence("decides", kind=kind, **said)


def link_read(cal: Calibration) -> Finding | None:
    """The link read from a topology (``LINK_DETECTED``; None: no topology read)."""
    return cal.said.source(FindingKind.LINK_DETECTED)


def better_gpus(advice: AdviceView) -> str:
    """The GPUs whose ring beats the first GPUs' at the focus, else at the count advised
    (``BETTER_GPUS``: said, not priced; "": none)."""
    said, d = link_read(advice.calibration), advice.decision
    found = said.findings("better") if said is not None else ()
    better = {f["devices"]: f for f in found}
    n = next((n for n in (d.focus.accelerators, d.read.accelerators) if n in better), None)
    return "" if n is None else sentence("better_gpus_change", **dict(better[n].values))


def change_line(advice: AdviceView) -> str:
    """What would change the count ("": none predicted holds the model; the decision line
    says what would predict one that does)."""
    d = advice.decision
    if not d.holds:
        return ""
    if d.withheld_by:  # ``settle``: the moving terms' measures (``withheld_how``)
        return sentence("change", case="settle", how=d.settle)
    if d.settle:
        return sentence("settle_first", settle=d.settle)
    if advice.deciding.flagged is not None:
        return sentence("change", case="flagged", n=advice.deciding.flagged)
    assumed = [
        a.measure
        for a in advice.calibration.said.assumptions
        if a.term == d.limit.dominant_term
        and a.source in (Source.ASSUMED, Source.PRIOR)
        and a.measure
    ]
    strategy = issued(advice.calibration, d.focus.accelerators)
    if assumed and d.limit.cap == "overheads":
        term = term_words(d.limit.dominant_term, "says", strategy)
        return sentence("change", case="measure", term=term, how=measured(assumed[0], short=True))
    how = term_words(advice.deciding.change, "short", strategy)
    return sentence("change", case="remedy", how=how)


def remedy(advice: AdviceView) -> str:
    """What would help most; where the largest overhead gone would still miss the target,
    the others too."""
    d, cal, change = advice.decision, advice.calibration, advice.deciding.change
    values = {"fewer_messages": d.limit.fewer_messages, "accum": d.read.accum}
    values["optimizer"] = advice.fixed_term.optimizer_mostly  # a fused one
    said = term_words(change, "full", issued(cal, d.focus.accelerators), **values)
    why, fix = above_largest(advice)
    if change in STOPPED and why:  # below the most allowed: what would predict a larger count
        said = sentence("larger_counts", fix=fix, largest=d.focus.accelerators)
    if d.short_alone():  # the others that must shrink too, or none would do
        o = d.limit.overheads_ms
        also = [f"{term_words(k)} ({format_ms(o[k])})" for k in d.limit.also_shrink]
        said += sentence("not_enough", named=named(d), also=joined(also), n=len(also))
    return said


def counts_line(advice: AdviceView, short: bool = False) -> str:
    """The counts searched and why each without a row has none (``short``: those only)."""
    run, counts = advice.calibration.run, advice.decision.counts
    missing = counts.missing
    if short and missing:
        kept = run.kept_global_batch
        return sentence("dropped_short", missing=missing, kept=kept, n=len(missing))
    if short or (not missing and counts.every):
        return ""
    off = (counts.per_node and counts.off_nodes) or None
    said = {"run": run, "n": len(missing), "missing": missing or None, "off": off}
    return sentence("dropped_counts", c=counts, **said)


def above_largest(advice: AdviceView) -> tuple[str, str]:
    """Why no count above the focus was predicted, and what would let one be."""
    counts, kept = advice.decision.counts, advice.calibration.run.kept_global_batch
    unsplit = bool(counts.missing_above) and kept is not None
    per_node = (counts.off_nodes and counts.per_node) or None
    common = {"c": counts, "per_node": per_node, "kept": kept}

    def said(case: str, found: tuple[int, ...]) -> str:
        return sentence("not_above", case=case, counts=found, one=len(found) == 1, **common)

    cases = {
        "unsearched": counts.unsearched_above,
        "unsplit" if unsplit else "unfit": counts.missing_above,
        "flagged": counts.flagged_above,
    }
    why = [said(case, tuple(found)) for case, found in cases.items() if found]
    fix = [said("nodes", (counts.whole_nodes,))] if counts.whole_nodes is not None else []
    if unsplit:
        fix += [said("divisible", tuple(counts.missing_above)), said("weak", ())]
    return "; ".join(why), joined(fix, "or")


def lines(advice: AdviceView, explained: bool = False) -> list[str]:
    d, strategy = advice.decision, advice.calibration.run.strategy
    with spelled_as(advice.keywords):  # as its reader names a request's fields
        said = [
            memory_said(advice.memory, strategy, d.read.accelerators),
            *(sentence("disagreement", d=m) for m in advice.disagreements),
            decision_line(advice, long=explained and d.holds),  # --explain's: its efficiency
            *d.warnings,
            deciding_line(advice),
            counts_line(advice, short=True),
            # and where a faster ring of as many GPUs is, its ``CUDA_VISIBLE_DEVICES``
            (change := change_line(advice))
            and " ".join(filter(None, [change, better_gpus(advice)])),
        ]
    return [line for line in said if line]


# The short answer's lines wrap at this many columns whatever the terminal's.
LINE_COLUMNS = 100


def shown(advice: AdviceView, columns: int = LINE_COLUMNS, explained: bool = False) -> list[str]:
    """``lines`` wrapped at ``columns`` (at most ``LINE_COLUMNS``), continued indented, a
    backticked command broken only between its words: a quoted word's spaces and the
    command's hyphens are held (``_HOLD``) while the line is wrapped."""

    def held(command: re.Match[str]) -> str:
        quoted = re.sub(r"'[^']*'", lambda word: word[0].translate(_HOLD), command[0])
        return quoted.replace("-", "\x01")

    width = min(LINE_COLUMNS, columns)
    return [
        w.translate(_FREE)
        for line in lines(advice, explained)
        for w in wrap(
            re.sub(r"`[^`]*`", held, line), width, subsequent_indent="  ", break_long_words=False
        )
    ]


_HOLD = str.maketrans({" ": "\x00", "-": "\x01"})
_FREE = str.maketrans({"\x00": " ", "\x01": "-"})

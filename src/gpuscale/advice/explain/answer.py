"""An advice's records as words, each rendered once: the count decided, what decides at
the focus, the counts searched, what would change it; the short answer ``gpuscale advise``
says before its table is those, wrapped for a terminal (``--explain``: ``explanation``)."""

from __future__ import annotations

import re
from textwrap import wrap
from typing import Protocol

import pandas as pd

from gpuscale.advice.calibration import Calibration
from gpuscale.advice.explain.caveats import memory_said, readings_apart
from gpuscale.advice.explain.phrasebook import (
    TERMS,
    WITHHELD,
    reading,
    sentence,
    strategy_name,
    term_name,
    term_says,
)
from gpuscale.advice.explain.phrasebook import remedy as remedy_of
from gpuscale.advice.explain.runs import disagreement
from gpuscale.advice.memory import MemoryCheck
from gpuscale.advice.records import (
    Assumption,
    BreakEven,
    Deciding,
    Decision,
    FixedTerm,
    OneDeviceRow,
    Picks,
    RowIntervals,
    spans,
)
from gpuscale.advice.types import STOPPED, MeasuredCount, Source, TermId
from gpuscale.quantities import counted, format_ms, joined


def row_at(frame: pd.DataFrame, n: int) -> pd.Series:
    return frame[frame["accelerators"] == n].iloc[0]


class AdviceView(Protocol):
    """The fields of ``search.decide.Searched`` the words read, and ``document.Worded``'s."""

    picks: Picks
    break_even: BreakEven
    calibration: Calibration
    disagreements: tuple[MeasuredCount, ...]
    measured_counts: tuple[MeasuredCount, ...]
    memory: MemoryCheck | None
    intervals: RowIntervals
    fixed_term: FixedTerm
    one_device: OneDeviceRow
    deciding: Deciding
    predictions: pd.DataFrame
    alternative: pd.DataFrame | None
    assumptions: tuple[Assumption, ...]
    decision: Decision
    caveats: tuple[str, ...]
    explanation: list[str]


def decision_kind(d: Decision) -> str:
    """How the decision is said (``one_focus``: one device, the focus another)."""
    if not d.holds:
        return "none"
    if d.withheld_by:
        return "withheld"
    if d.count is None:
        return "refused"
    if d.chosen.accelerators > 1:
        return "many"
    return "one" if d.focus.accelerators == d.chosen.accelerators else "one_focus"


def named(d: Decision, detailed: bool = False) -> str:
    """``4 devices, the next count above the 2 advised`` or ``the 8 devices advised``
    (``detailed``: with the fastest count where it is another)."""
    n, focus, fastest = d.chosen.accelerators, d.focus.accelerators, ""
    if detailed and d.fastest is not None:  # None: no count predicted holds the model
        fastest = {n: "chosen", focus: "focus"}.get(d.fastest, "other")
    return sentence("named", d=d, fastest=fastest, same=focus == n)


def decision_line(advice: AdviceView) -> str:
    """The count, its batch, speedup and time to a trained model; or why it is withheld."""
    d, frame, chosen = advice.decision, advice.predictions, advice.decision.chosen
    if not d.holds:  # the fewest devices that hold the model, and the strategy
        held, run = advice.memory, advice.calibration.run
        strategy, kept = run.strategy, run.kept_global_batch
        fewest = held and held.holding(strategy)
        # searched, but the global batch kept does not split over it: the smallest global
        # batch it divides, at least the one kept
        unsplit = None
        if held and fewest and kept and fewest in d.counts.missing:
            unsplit = held.split_batch(strategy, kept)
        said = {"name": strategy_name(strategy), "strategy": strategy, "kept": kept}
        return sentence("none_holds", fewest=fewest, unsplit=unsplit, **said)
    row = row_at(frame, chosen.accelerators)
    known = row[["cost", "energy_kwh"]].dropna()  # no price, or no power: not said
    trained = sentence(
        "trained",
        time=row["time_to_train_min"],
        samples=float(row_at(frame, 1)["samples_to_train"]),
        cost=known.get("cost"),
        kwh=known.get("energy_kwh"),
    )
    other = "; ".join(
        reading(r)
        for r in readings_apart(d, advice.assumptions)
        if r.accelerators != chosen.accelerators
    )
    return sentence("decision", kind=decision_kind(d), d=d, c=chosen, trained=trained, other=other)


def deciding_line(advice: AdviceView) -> str:
    """The one term that decides, at the count it is read at (the focus)."""
    d, kind = advice.decision, advice.deciding.kind
    strategy = advice.calibration.run.strategy
    # ``m``: the measurement the focus rests on where the model's terms do not explain it
    said = {"d": d, "m": advice.deciding.measured, "strategy": strategy_name(strategy)}
    if kind == "withheld":  # the term that moves the count decides, not the table's cap
        ends = {r.accelerators for r in readings_apart(d, advice.assumptions)}
        said["counts"] = joined(sorted(ends | {d.chosen.accelerators}), "or")
        said["ungiven"] = WITHHELD[d.withheld_by]["ungiven"]
    elif kind == "interval":  # the count withheld by its interval, not by a term
        said["held"] = d.held_back if d.focus.speedup_low > 1 and d.held_back else d.focus
    elif kind == "term" and d.limit.dominant_term not in TERMS:
        kind = "small"
    elif kind == "term":
        term, also = d.limit.dominant_term, d.limit.also_shrink
        exposed = row_at(advice.predictions, d.focus.accelerators)["exposed_comm_ms"]
        alone = term_says(also[0], strategy) if len(also) == 1 else counted(len(also), "other term")
        said |= {
            "term": term_says(term, strategy),
            "ms": d.limit.overheads_ms[term],
            "excess": term == TermId.FIXED,
            "exposed": exposed if term in (TermId.BANDWIDTH, TermId.LATENCY) else None,
            "alone": alone if also else None,  # each named under --explain
        }
    return sentence("decides", kind=kind, **said)


def change_line(advice: AdviceView) -> str:
    """The one measurement or input that would change the answer, else what would help most."""
    d = advice.decision
    if d.withheld_by:
        return sentence("change", case="settle", how=WITHHELD[d.withheld_by]["settle"])
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
    strategy = advice.calibration.run.strategy
    if assumed and d.limit.cap == "overheads":
        term = term_says(d.limit.dominant_term, strategy)
        return sentence("change", case="measure", term=term, how=assumed[0].short())
    how = remedy_of(advice.deciding.change, "short", strategy)
    return sentence("change", case="remedy", how=how)


def remedy(advice: AdviceView) -> str:
    """What would help most for the decision's change: for latency only the cures that
    apply; where the largest overhead gone would still miss the target, the others too."""
    d, cal, change = advice.decision, advice.calibration, advice.deciding.change
    values = {"fewer_messages": d.limit.fewer_messages, "accum": d.chosen.accum}
    values["optimizer"] = advice.fixed_term.optimizer_mostly  # a fused one
    said = remedy_of(change, "full", cal.run.strategy, **values)
    why, fix = above_largest(advice)
    if change in STOPPED and why:  # below the most allowed: what would predict a larger count
        said = sentence("larger_counts", fix=fix, largest=d.focus.accelerators)
    if d.short_alone():  # the others that must shrink too, or none would do
        o = d.limit.overheads_ms
        also = [f"{term_name(k)} ({format_ms(o[k])})" for k in d.limit.also_shrink]
        said += sentence("not_enough", named=named(d), also=joined(also), n=len(also))
    return said


def _names(ranges: tuple[tuple[int, int], ...]) -> str:
    """``1, 2, 4, 5-7``: each span (``records.spans``) its count, or its ends."""
    return ", ".join(str(a) if a == b else f"{a}-{b}" for a, b in ranges)


def counts_line(advice: AdviceView, short: bool = False) -> str:
    """The counts searched, by what rule, and why each without a row has none ("": all
    have); ``short``: the answer's, those without a row only."""
    run, counts = advice.calibration.run, advice.decision.counts
    missing = counts.missing
    if short and missing:
        kept = run.kept_global_batch
        return sentence("dropped_short", missing=missing, kept=kept, n=len(missing))
    if short or (not missing and counts.every):
        return ""
    off = _names(spans(counts.off_nodes)) if counts.per_node and counts.off_nodes else None
    said = {"run": run, "n": len(missing), "missing": missing or None, "off": off}
    return sentence("dropped_counts", c=counts, **said)


def above_largest(advice: AdviceView) -> tuple[str, str]:
    """Why no count above the focus (the largest predicted where the search stopped) was,
    and what would let one be; ("", "") where it is the most allowed."""
    counts, kept = advice.decision.counts, advice.calibration.run.kept_global_batch
    unsplit = bool(counts.missing_above) and kept is not None
    per_node = (counts.off_nodes and counts.per_node) or None
    common = {"c": counts, "names": _names(spans(counts.unsearched_above)), "per_node": per_node}

    def said(case: str, found: tuple[int, ...]) -> str:
        return sentence(
            "not_above", case=case, counts=found, one=len(found) == 1, kept=kept, **common
        )

    cases = {
        "unsearched": counts.unsearched_above,
        "unsplit" if unsplit else "unfit": counts.missing_above,
        "flagged": counts.flagged_above,
    }
    why = [said(case, tuple(found)) for case, found in cases.items() if found]
    fix = [said("nodes", (counts.whole_nodes,))] if counts.whole_nodes is not None else []
    if unsplit:
        fix += [said("divisible", tuple(counts.missing_above)), "--scaling weak"]
    return "; ".join(why), joined(fix, "or")


def lines(advice: AdviceView) -> list[str]:
    """The short answer, said before the table, in the order a reader needs it."""
    strategy, n = advice.calibration.run.strategy, advice.decision.chosen.accelerators
    said = [
        memory_said(advice.memory, strategy, n),
        *map(disagreement, advice.disagreements),
        decision_line(advice),
        *advice.decision.warnings,
        deciding_line(advice),
        counts_line(advice, short=True),
        change_line(advice),
    ]
    return [line for line in said if line]


# The short answer's lines wrap at this many columns whatever the terminal's.
LINE_COLUMNS = 100


def shown(advice: AdviceView, columns: int = LINE_COLUMNS) -> list[str]:
    """``lines`` wrapped at ``columns`` (at most ``LINE_COLUMNS``), continued indented, a
    backticked command broken only between its words: a quoted word's spaces and the
    command's hyphens are held (``_HOLD``) while the line is wrapped."""

    def held(command: re.Match[str]) -> str:
        quoted = re.sub(r"'[^']*'", lambda word: word[0].translate(_HOLD), command[0])
        return quoted.replace("-", "\x01")

    width = min(LINE_COLUMNS, columns)
    return [
        w.translate(_FREE)
        for line in lines(advice)
        for w in wrap(
            re.sub(r"`[^`]*`", held, line), width, subsequent_indent="  ", break_long_words=False
        )
    ]


_HOLD = str.maketrans({" ": "\x00", "-": "\x01"})
_FREE = str.maketrans({"\x00": " ", "\x01": "-"})

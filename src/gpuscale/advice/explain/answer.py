"""The advice's short answer, as ``gpuscale advise`` says it by default before its table:
the decision's count, its speedup, 80% interval and time to train, or why it is withheld;
what decides; what would change it; an input that cannot be true or a measurement outside
its interval first (``explain.shown``: the lines as a terminal shows them)."""

from __future__ import annotations

import pandas as pd

from gpuscale.advice.explain import memory
from gpuscale.advice.explain.counts import dropped_short
from gpuscale.advice.explain.focus import deciding_kind, memory_decides
from gpuscale.advice.explain.phrasebook import (
    TERMS,
    WITHHELD,
    remedy,
    sentence,
    strategy_words,
    term_says,
    withheld_value,
)
from gpuscale.advice.explain.view import AdviceView
from gpuscale.advice.types import TRUSTED_ALLOWED, Disagreement, Source, TermId
from gpuscale.quantities import (
    counted,
    filled,
    format_batch,
    format_count,
    format_minutes,
    joined,
    number,
    span,
)


def row_at(frame: pd.DataFrame, n: int) -> pd.Series:
    """The predictions' row at ``n`` accelerators."""
    return frame[frame["accelerators"] == n].iloc[0]


# A speedup without an interval: its row rests on a single run
# (``Disagreement.measured.no_interval``)
NO_INTERVAL = "one run: no interval"


def speedup_interval(low: float, high: float) -> str:
    """``0.652-1.07x, 80% interval``, or ``NO_INTERVAL`` where there is none (NaN)."""
    if pd.isna(low) or pd.isna(high):
        return NO_INTERVAL
    return f"{span(number(low), number(high))}x, 80% interval"


def _speedup(row: pd.Series) -> str:
    return (
        f"{number(row['speedup'])}x ({speedup_interval(row['speedup_low'], row['speedup_high'])})"
    )


def _trained(row: pd.Series, samples: float) -> str:
    """``29 min to train 10M samples, 12.3 in the currency of --price, 1.55 kWh``."""
    time = format_minutes(row["time_to_train_min"])  # the table's unit
    # --price is in any currency: its unit said, no symbol the user did not give
    more = [sentence("cost_trained", cost=row["cost"])] if pd.notna(row["cost"]) else []
    if pd.notna(row["energy_kwh"]):
        more.append(f"{number(row['energy_kwh'])} kWh")
    return ", ".join([f"{time} to train {format_count(samples)} samples", *more])


def none_holds(advice: AdviceView) -> str:
    """No count advised, none predicted holding the model: the fewest that do, and the
    strategy (``advice.memory``)."""
    held, strategy = advice.memory, advice.calibration.run.strategy
    fewest = held and (held.fits_from(strategy) or held.fewest_of(strategy))
    devices = counted(fewest, "device") if fewest else "none"
    name = strategy_words(strategy)["name"]
    return sentence("none_holds", devices=devices, name=name, strategy=strategy)


def decision_line(advice: AdviceView) -> str:
    """The count, its batch, speedup and time to a trained model; or why it is withheld."""
    d, frame = advice.decision, advice.predictions
    chosen = d.chosen
    samples = float(row_at(frame, 1)["samples_to_train"])
    row = row_at(frame, chosen.accelerators)
    if not d.holds:
        return none_holds(advice)
    if d.withheld_by:
        ends = [
            r
            for r in d.readings
            if r.term == d.withheld_by and r.accelerators != chosen.accelerators
        ]
        other = "; ".join(
            f"at {withheld_value(r)}, {counted(r.accelerators, 'device')}" for r in ends
        )
        return (
            f"Count withheld: {counted(chosen.accelerators, 'device')} as predicted below, "
            f"{_speedup(row)}, {_trained(row, samples)}; but {other}."
        )
    if d.count is None:  # refused: an input cannot be true, and one device cannot hold it
        return (
            f"No count advised: an input is flagged IMPLAUSIBLE (below) and 1 device cannot "
            f"hold the model; the fewest that would, {counted(chosen.accelerators, 'device')}, as "
            f"predicted below: {_speedup(row)}, {_trained(row, samples)}."
        )
    accum = f" x {chosen.accum} accumulation steps" if chosen.accum > 1 else ""
    said = (
        f"Use {counted(chosen.accelerators, 'device')}, batch "
        f"{format_batch(chosen.batch_per_device)} per "
        f"device{accum} (global {format_batch(chosen.global_batch)})"
    )
    if chosen.accelerators > 1:
        return f"{said}: {_speedup(row)}, {_trained(row, samples)}."
    if d.focus.accelerators == chosen.accelerators:
        return f"{said}: {_trained(row, samples)}."
    return (
        f"{said}: {_trained(row, samples)}; {counted(d.focus.accelerators, 'device')} "
        f"{_speedup(row_at(frame, d.focus.accelerators))}."
    )


def deciding_line(advice: AdviceView) -> str:
    """The one term that decides, at the count it is read at (the focus)."""
    d, kind = advice.decision, deciding_kind(advice)
    at = f"at {counted(d.focus.accelerators, 'device')}"
    if kind == "measured":  # the focus rests on a measurement the model's terms do not explain
        below = [m for m in advice.disagreements if m.accelerators <= d.focus.accelerators]
        m = max(below, key=lambda m: m.accelerators)
        return (
            f"Decides: the speedup measured at {counted(m.accelerators, 'device')}, "
            f"{number(m.measured.speedup)}x where the model's terms give "
            f"{number(m.predicted.speedup)}x: they miss what the machine did there."
        )
    if kind == "withheld":  # the term that moves the count decides, not the table's cap
        ends = {r.accelerators for r in d.readings if r.term == d.withheld_by}
        counts = joined(sorted(ends | {d.chosen.accelerators}), "or")
        return f"Decides: {WITHHELD[d.withheld_by]['ungiven']}: across its range, {counts} devices."
    if kind == "interval":  # the count withheld by its interval, not by a term
        n, low = (d.focus.accelerators, d.focus.speedup_low)
        if low > 1:
            n, low = d.held_back.accelerators, d.held_back.speedup_low
        return (
            f"Decides: the 80% interval at {counted(n, 'device')} reaches down to "
            f"{number(low)}x, no gain: a larger count waits for a measurement."
        )
    if kind == "memory":
        name = strategy_words(advice.calibration.run.strategy)["name"]
        return (
            f"Decides: the fewest devices that hold the model, {d.chosen.accelerators} with "
            f"{name}: fewer cannot hold it; {at}, efficiency is {d.chosen.efficiency:.0%}."
        )
    if kind == "devices":
        return (
            f"Decides: the count allowed; {at}, the most searched, efficiency is still "
            f"{d.chosen.efficiency:.0%}."
        )
    if kind == "batch":  # strong scaling: the global batch kept, the chosen count's
        return (
            f"Decides: the global batch {format_batch(d.chosen.global_batch)}, kept at every count "
            f"(strong scaling), does not split over more devices; {at}, the largest count "
            f"predicted, efficiency is {d.chosen.efficiency:.0%}."
        )
    if kind == "flagged":
        return (
            f"Decides: the predictions above {counted(d.focus.accelerators, 'device')} fail a "
            f"plausibility check (left out); {at} efficiency is {d.chosen.efficiency:.0%}."
        )
    if kind == "convergence":
        return (
            f"Decides: the samples a larger global batch needs (convergence factor "
            f"{d.focus.convergence_factor:.0%} {at})."
        )
    term, strategy = d.limit.dominant_term, advice.calibration.run.strategy
    if term not in TERMS:
        return f"Decides: the target efficiency {d.target_efficiency:.0%}; overheads are small."
    ms, comm = d.limit.overheads_ms[term], (TermId.BANDWIDTH, TermId.LATENCY)
    exposed = row_at(advice.predictions, d.focus.accelerators)["exposed_comm_ms"]
    of = f"the {number(exposed)} ms exposed communication in " if term in comm else ""
    excess = " (excess over an even split)" if term == TermId.FIXED else ""
    step = f"{of}the {number(d.focus.step_ms)} ms step {at}"
    n, also = len(d.limit.also_shrink), [term_says(t, strategy) for t in d.limit.also_shrink]
    alone = also[0] if n == 1 else counted(n, "other term")  # each named under --explain
    alone = filled("; not enough alone: {} too", also and alone)
    return f"Decides: {term_says(term, strategy)}, {number(ms)} ms{excess} of {step}{alone}."


def change_line(advice: AdviceView) -> str:
    """The one measurement or input that would change the answer: what settles a count
    withheld or held back, else the deciding term's own measurement where it was assumed,
    else what would help most."""
    d = advice.decision
    if d.withheld_by:
        return f"To settle it: {WITHHELD[d.withheld_by]['settle']}."
    if d.settle:
        return f"Measure first: {d.settle}."
    flagged = [
        m
        for m in getattr(advice, "disagreements", ())
        if m.accelerators <= d.focus.accelerators and m.on_flagged_only
    ]
    if flagged:  # the answer rests on flagged runs: their remedy first
        n = counted(max(m.accelerators for m in flagged), "device")
        return f"To change it: measure {n} again on a quiet machine (its runs are flagged)."
    assumed = [
        a
        for a in advice.calibration.said.assumptions
        if a.term == d.limit.dominant_term
        and a.source in (Source.ASSUMED, Source.PRIOR)
        and a.measure
    ]
    strategy = advice.calibration.run.strategy
    if assumed and d.limit.cap == "overheads":
        term = term_says(d.limit.dominant_term, strategy)
        return f"To change it: measure {term}: {assumed[0].measure.short()}."
    change = "memory" if memory_decides(advice) else d.limit.change
    return f"To change it: {remedy(change, 'short', strategy)}."


def lines(advice: AdviceView) -> list[str]:
    """The short answer, said before the table: the decision, an input that cannot be
    true or a warning on the data (each whole: rare, and it changes what to do), the term
    that decides, and what would change it."""
    d = advice.decision
    # where memory limits the counts: which strategy holds the model, from which count
    held = memory.said(
        advice.memory, advice.calibration.run.strategy, advice.decided.chosen.accelerators
    )
    # a count the bench measured outside its predicted interval: the answer rests on the
    # measurement there (``advice.reconcile``)
    measured = [said(found) for found in getattr(advice, "disagreements", ())]
    # counts searched without a row (the global batch kept does not split over them)
    dropped = dropped_short(advice.calibration, advice.predictions)
    return [
        *filter(None, [held]),
        *measured,
        decision_line(advice),
        *d.warnings,
        deciding_line(advice),
        *filter(None, [dropped]),
        change_line(advice),
    ]


def said(d: Disagreement) -> str:
    """The disagreement in words, first among the caveats and the answer's lines."""
    seen, runs, predicted = d.measured, d.evidence, d.predicted
    measured = f"{number(seen.speedup)}x"
    if len(runs.trusted_runs) > 1:
        measured += f" (median; {number(seen.speedup_low)}-{number(seen.speedup_high)}x)"
    which = (
        f"{counted(len(runs.trusted_runs), 'run')}, all flagged ({'; '.join(runs.flags)}), the "
        "only measurement there: measure again on a quiet machine"
        if d.on_flagged_only
        else counted(len(runs.trusted_runs), "trusted run")
        + (", flagged ones used with --allow-flagged" if runs.why == TRUSTED_ALLOWED else "")
        + (
            f"; {counted(len(runs.left_out), 'flagged run')} left out "
            f"({joined([number(v) for v in runs.left_out])}: {'; '.join(runs.flags)})"
            if runs.left_out
            else ""
        )
    )
    weak = filled("; weak scaling, per-device batch {} kept", d.weak_scaling and d.batch_per_device)
    return (
        f"Measured on {counted(d.accelerators, 'device')}: throughput speedup {measured} from "
        f"{which}, outside the predicted {number(predicted.speedup)}x "
        f"({number(predicted.speedup_low)}-{number(predicted.speedup_high)}x, 80% "
        f"interval{weak}): the advice at {counted(d.accelerators, 'device')} rests on the "
        "measurement."
    )

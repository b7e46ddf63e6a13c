"""The advice as a command shows it: the answer first, short (``gpuscale advise``'s
default: four lines from the Decision's fields over the deciding columns: the count, its
speedup, 80% interval and time to train, or why it is withheld; what decides; what would
change it; where the rest is), the JSON of ``-f json`` (:func:`advice_document`, the
schema of docs/advice.md: everything, losslessly) and the predictions' terminal view."""

from __future__ import annotations

import re
from textwrap import wrap

import pandas as pd

from gpuscale.advice.calibration import Calibration
from gpuscale.advice.explain import memory
from gpuscale.advice.explain.focus import deciding_kind, dropped_short
from gpuscale.advice.explain.phrasebook import remedies
from gpuscale.advice.explain.table_words import fixed_parts, optimizer_ms
from gpuscale.advice.explain.view import AdviceView
from gpuscale.advice.explain.withheld import SETTLE, UNGIVEN, value_text
from gpuscale.advice.types import (
    TRUSTED_ALLOWED,
    Disagreement,
    Source,
    TermId,
    maybe,
)
from gpuscale.quantities import counted, filled, format_count, format_minutes, joined, number
from gpuscale.tables.json_depth import JSON
from gpuscale.tables.views import TableView

# The short answer's lines wrap at this many columns whatever the terminal's.
LINE_COLUMNS = 100
TERM_COLUMN = {  # the prediction column that holds each overhead the decision names
    TermId.FIXED: "fixed_excess_ms",
    TermId.WAIT: "wait_ms",
    TermId.DDP: "ddp_ms",
    TermId.BANDWIDTH: "exposed_comm_ms",
    TermId.LATENCY: "exposed_comm_ms",
    TermId.UNEXPLAINED: "unexplained_ms",
}
TERM_WORDS = {
    TermId.FIXED: "the fixed per-step cost",
    TermId.WAIT: "the wait for the slowest device",
    TermId.DDP: "DDP's own work (its bucket copies)",
    TermId.BANDWIDTH: "the gradients' all-reduce (bandwidth) not hidden by backward",
    TermId.LATENCY: "the all-reduce's latency not hidden by backward",
    TermId.UNEXPLAINED: "the part of the measured step the model's terms do not explain",
}
# What would help most where every term the decision rests on was measured (the answer's
# wording of the one remedy table: ``explain/phrasebook.py``).
REMEDY = remedies("short")
# The terminal's columns, the deciding overhead's after the step.
LEADING = ("accelerators", "batch_per_device", "step_ms")
TRAILING = ("speedup", "speedup_low", "speedup_high", "efficiency", "time_to_train_min")
# What a terminal narrower than the table drops first.
DROP_ORDER = ("speedup_high", "speedup_low", *TERM_COLUMN.values(), "batch_per_device")
# Three digits where the interval's ends differ, the efficiency as a share.
FORMATS = {"speedup": ".3g", "speedup_low": ".3g", "speedup_high": ".3g", "efficiency": ".0%"}


def columns(advice: AdviceView) -> tuple[str, ...]:
    """The table's deciding columns: the count and batch (its accumulation where a row has
    one), the step and its deciding overhead, the speedup with its interval, the efficiency
    and the time to train (cost and energy: the decision's line; every column: -f csv)."""
    term = TERM_COLUMN.get(advice.decision.limit.dominant_term)
    shown = {"accum": (advice.predictions["accum"] > 1).any(), None: False}  # where used
    wanted = (*LEADING[:2], "accum", LEADING[2], term, *TRAILING)
    return tuple(column for column in wanted if shown.get(column, True))


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
    return f"{number(low)}-{number(high)}x, 80% interval"


def _speedup(row: pd.Series) -> str:
    return (
        f"{number(row['speedup'])}x ({speedup_interval(row['speedup_low'], row['speedup_high'])})"
    )


def _trained(row: pd.Series, samples: float) -> str:
    """``29 min to train 10M samples, $12.3, 1.55 kWh``."""
    time = format_minutes(row["time_to_train_min"])  # the table's unit
    units = (("cost", "${}"), ("energy_kwh", "{} kWh"))
    more = [said.format(number(row[c])) for c, said in units if pd.notna(row[c])]
    return ", ".join([f"{time} to train {format_count(samples)} samples", *more])


def decision_line(advice: AdviceView) -> str:
    """The count, its batch, speedup and time to a trained model; or why it is withheld."""
    d, frame = advice.decision, advice.predictions
    chosen = d.chosen
    samples = float(row_at(frame, 1)["samples_to_train"])
    if d.withheld_by:
        row = row_at(frame, d.chosen.accelerators)
        ends = [
            r
            for r in d.readings
            if r.term == d.withheld_by and r.accelerators != d.chosen.accelerators
        ]
        other = "; ".join(f"at {value_text(r)}, {counted(r.accelerators, 'device')}" for r in ends)
        return (
            f"Count withheld: {counted(d.chosen.accelerators, 'device')} as predicted below, "
            f"{_speedup(row)}, {_trained(row, samples)}; but {other}."
        )
    row = row_at(frame, d.chosen.accelerators)
    if d.count is None:  # refused: an input cannot be true, and one device cannot hold it
        return (
            f"No count advised: an input is flagged IMPLAUSIBLE (below) and 1 device cannot "
            f"hold the model; the fewest that would, {counted(chosen.accelerators, 'device')}, as "
            f"predicted below: {_speedup(row)}, {_trained(row, samples)}."
        )
    accum = f" x {chosen.accum} accumulation steps" if chosen.accum > 1 else ""
    said = (
        f"Use {counted(chosen.accelerators, 'device')}, batch "
        f"{format_count(chosen.batch_per_device)} per "
        f"device{accum} (global {format_count(chosen.global_batch)})"
    )
    if d.chosen.accelerators > 1:
        return f"{said}: {_speedup(row)}, {_trained(row, samples)}."
    if d.focus.accelerators == d.chosen.accelerators:
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
        return f"Decides: {UNGIVEN[d.withheld_by]}: across its range, {counts} devices."
    if kind == "interval":  # the count withheld by its interval, not by a term
        n, low = (d.focus.accelerators, d.focus.speedup_low)
        if low > 1:
            n, low = d.held_back.accelerators, d.held_back.speedup_low
        return (
            f"Decides: the 80% interval at {counted(n, 'device')} reaches down to "
            f"{number(low)}x, no gain: a larger count waits for a measurement."
        )
    if kind == "devices":
        return (
            f"Decides: the count allowed; {at}, the most searched, efficiency is still "
            f"{d.chosen.efficiency:.0%}."
        )
    if kind == "batch":  # strong scaling: the global batch kept, the chosen count's
        return (
            f"Decides: the global batch {format_count(d.chosen.global_batch)}, kept at every count "
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
    term = d.limit.dominant_term
    if term not in TERM_WORDS:
        return f"Decides: the target efficiency {d.target_efficiency:.0%}; overheads are small."
    ms, comm = d.limit.overheads_ms[term], (TermId.BANDWIDTH, TermId.LATENCY)
    exposed = sum(d.limit.overheads_ms[t] for t in comm)  # the table's one column holds both
    of = f"the {number(exposed)} ms exposed communication in " if term in comm else ""
    excess = " (excess over an even split)" if term == TermId.FIXED else ""
    step = f"{of}the {number(d.focus.step_ms)} ms step {at}"
    n, also = len(d.limit.also_shrink), [TERM_WORDS[t] for t in d.limit.also_shrink]
    alone = also[0] if n == 1 else counted(n, "other term")  # each named under --explain
    alone = filled("; not enough alone: {} too", also and alone)
    return f"Decides: {TERM_WORDS[term]}, {number(ms)} ms{excess} of {step}{alone}."


def change_line(advice: AdviceView) -> str:
    """The one measurement or input that would change the answer: what settles a count
    withheld or held back, else the deciding term's own measurement where it was assumed,
    else what would help most."""
    d = advice.decision
    if d.withheld_by:
        return f"To settle it: {SETTLE[d.withheld_by]}."
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
    if assumed and d.limit.cap == "overheads":
        term = TERM_WORDS[d.limit.dominant_term]
        return f"To change it: measure {term}: {assumed[0].measure.short()}."
    return f"To change it: {REMEDY.get(d.limit.change, REMEDY['compute'])}."


def lines(advice: AdviceView) -> list[str]:
    """The short answer, said before the table: the decision, an input that cannot be
    true or a warning on the data (each whole: rare, and it changes what to do), the term
    that decides, and what would change it."""
    d = advice.decision
    # a count the bench measured outside its predicted interval, first: the answer rests
    # on the measurement there (``advice.reconcile``)
    first = [said(found) for found in getattr(advice, "disagreements", ())]
    # where memory limits the counts: which strategy holds the model, from which count
    first = [
        *filter(
            None,
            [
                memory.said(
                    advice.memory,
                    advice.calibration.run.strategy,
                    advice.decided.chosen.accelerators,
                )
            ],
        ),
        *first,
    ]
    # counts searched without a row (the global batch kept does not split over them)
    dropped = dropped_short(advice.calibration, advice.predictions)
    return [
        *first,
        decision_line(advice),
        *d.warnings,
        deciding_line(advice),
        *filter(None, [dropped]),
        change_line(advice),
    ]


def more(advice: AdviceView) -> str:
    """Where the rest is, said under the table."""
    caveats = filled("{}, ", advice.caveats and counted(len(advice.caveats), "caveat"))
    return f"More: --explain ({caveats}every assumption with its source); -f json (every number)."


def shown(advice: AdviceView, columns: int = LINE_COLUMNS) -> list[str]:
    """``lines`` as a terminal shows them: wrapped at ``columns`` (the output's width, at
    most ``LINE_COLUMNS``), continued indented, a command broken only between its words
    (a path with a space or a hyphen pastes whole; one longer than the line runs past it)."""
    width = min(LINE_COLUMNS, columns)
    return [
        w.translate(_FREE)
        for line in lines(advice)
        for w in wrap(_kept_whole(line), width, subsequent_indent="  ", break_long_words=False)
    ]


# a quoted word's spaces and hyphens, held while a line is wrapped, then given back
_HOLD = str.maketrans({" ": "\x00", "-": "\x01"})
_FREE = str.maketrans({"\x00": " ", "\x01": "-"})


def _kept_whole(line: str) -> str:
    """``line`` with the spaces of each quoted word and every hyphen inside a backticked
    command held (``_HOLD``), so that wrapping breaks a command only between its words
    (never inside a path such as ``/tmp/ci-clone/results.jsonl`` or an option)."""

    def held(command: re.Match[str]) -> str:
        quoted = re.sub(r"'[^']*'", lambda word: word[0].translate(_HOLD), command[0])
        return quoted.replace("-", "\x01")

    return re.sub(r"`[^`]*`", held, line)


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


# The prediction columns a terminal shows (JSON and CSV carry them all).
ADVICE_SHOWN = (
    *("accelerators", "batch_per_device", "accum", "global_batch", "step_ms", "compute_ms"),
    *("exposed_comm_ms", "samples_per_s", "time_to_train_min", "speedup", "speedup_low"),
    *("speedup_high", "efficiency", "throughput_efficiency", "convergence_factor"),
    *("accelerator_hours", "cost", "energy_kwh"),
)


def _fixed_cost(cal: Calibration) -> dict[str, JSON] | None:
    """The fixed cost of each forward and backward and the optimizer step's (None: none)."""
    fixed = cal.model.fixed
    if fixed is None:
        return None
    return {
        "ms": fixed.ms,
        "low_ms": fixed.low_ms,
        "high_ms": fixed.high_ms,
        "source": fixed.source,
        "basis": fixed.basis,
        "measure": str(fixed.measure),
        "optimizer_ms": optimizer_ms(cal),
        # the prior's least where the step left the assumed cost below it, else None
        "below_prior_ms": fixed.below_prior_ms,
    }


def _scaling(result: AdviceView) -> dict[str, JSON]:
    """How the counts were compared, the fixed costs behind it (of each forward and
    backward; the optimizer step's), and the ``fixed`` term at the focus count in parts."""
    cal = result.calibration
    kept = cal.run.kept_global_batch
    weak = cal.search.convergence is None or cal.run.scaling == "weak"
    return {
        "kind": "strong" if kept is not None else ("weak" if weak else "search"),
        "global_batch_kept": kept,
        "fixed_cost": _fixed_cost(cal),
        "fixed_term_ms": fixed_parts(cal, result.predictions, result.decision.focus.accelerators),
    }


def advice_document(result: AdviceView) -> dict[str, JSON]:
    """``advise -f json``: the recommendation, the decision's fields, how the counts were
    compared, every assumption, the explanation and the predictions (records)."""
    d = result.decision
    return {
        "recommendation": {
            "model": result.calibration.model.name,  # the model advised on
            "strategy": result.calibration.run.strategy,  # ddp or fsdp
            "accelerators": d.count,  # None: withheld, an assumed term's range moves it
            "withheld_by": d.withheld_by,  # that term: what to give or measure first
            "fastest": d.fastest,
            "efficient": result.picks.efficient,
            "cheapest": result.picks.cheapest,
            "equilibrium": result.picks.equilibrium,
            "break_even_compute_ms_per_grad_mb": result.break_even.compute_ms_per_grad_mb,
            "break_even_params": result.break_even.params,
            "target_efficiency_params": result.break_even.target_efficiency_params,
            # what the two sizes rest on: the family fitted over its members benched in the
            # configuration (the same whichever is advised), None: this model alone
            "break_even_family": _family(result),
            "dominant_term": d.limit.dominant_term,
            # what the step's terms (the dominant one too) rest on: "weak" bench runs (too
            # few steps: no change is recommended from them), "firm" ones, None for numbers
            "terms_evidence": _terms_evidence(result),
            "speedup_capped_by": d.limit.cap,
            "warnings": list(d.warnings),
            "measure_first": d.settle,
            "caveats": list(result.caveats),
        },
        # counts the bench measured outside the predicted interval: their rows (predictions
        # or weak_scaling) rest on the measurement (``advice.types.Disagreement``)
        "disagreements": [found.to_dict() for found in result.disagreements],
        # every count the bench measured in a configuration predicted, its runs against the
        # prediction (``measured_runs.MeasuredCount``): the figure every view says of them
        "measured": [c.to_dict() for c in getattr(result, "measured_counts", ())],
        # where memory limits the counts of the strategy asked: each device's GB per count
        # and strategy (``advice.memory``); absent where one device holds the model
        **({"memory": result.memory.to_dict()} if result.memory is not None else {}),
        "decision": d.to_dict(),
        "scaling": _scaling(result),
        "assumptions": [a.to_dict() for a in result.assumptions],
        "answer": lines(result),  # the default view's lines, before its table
        "explanation": result.explanation,
        "predictions": result.predictions.to_dict("records"),
        "weak_scaling": maybe(pd.DataFrame.to_dict, result.alternative, "records"),
    }


def _terms_evidence(result: AdviceView) -> str | None:
    found = result.calibration.runs.evidence
    if found is None:
        return None
    if found.untrusted:
        return "flagged"
    return "weak" if found.weak else "firm"


def advice_view(
    result: AdviceView, *, terminal: bool, document: bool = False, explain: bool = False
) -> TableView:
    """The predictions as a terminal shows them: by default the short answer
    (``advice.answer``: the deciding columns, four lines), with ``explain`` every shown
    column (``ADVICE_SHOWN``) and the whole explanation; or (``terminal`` False: CSV)
    every column with what qualifies the numbers as notes; ``document``: with the whole
    answer for ``-f json`` (:func:`advice_document`)."""
    if document:
        return TableView(result.predictions, (), document=advice_document(result))
    cal = result.calibration
    params = format_count(cal.model.spec.params)
    name = cal.model.name
    named = name if params in name else f"{name} ({params} parameters)"
    strategy = memory.NAMES.get(cal.run.strategy, cal.run.strategy.upper())
    title = f"predicted training of {named} with {strategy} on {cal.machine.network_name}"
    if not terminal:
        every = list(result.predictions.columns)
        return TableView(result.predictions, every, title, notes=tuple(result.caveats))
    if not explain:
        return TableView(
            result.predictions,
            columns(result),
            title,
            drop_order=DROP_ORDER,
            formats=FORMATS,
            said=(more(result),),
        )
    said = tuple(f"- {line}" for line in result.explanation)  # the equilibrium's last
    return TableView(result.predictions, ADVICE_SHOWN, title, said=said)


def _family(result: AdviceView) -> dict[str, JSON] | None:
    """The family basis of the break-even sizes (``advice.family``), None without one."""
    basis = result.calibration.model.family
    if basis is None:
        return None
    return {
        "family": basis.family,
        "members": list(basis.members),
        "flops_per_param": basis.flops_per_param,
        "optimizer_ms": {"fixed": basis.opt_ms[0], "per_mparam": basis.opt_ms[1]},
        "ddp_ms": {"fixed": basis.ddp_ms[0], "per_mparam": basis.ddp_ms[1]},
    }

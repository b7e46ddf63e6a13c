"""``--explain``'s sentences over the Decision and its predictions: what to do and how
sure, which term decides, what caps the speedup, what would change it, every source."""

from __future__ import annotations

from functools import partial

import pandas as pd

from gpuscale.advice.explain import findings, focus, table_words
from gpuscale.advice.explain.answer import row_at, speedup_interval
from gpuscale.advice.explain.break_even import break_even_lines
from gpuscale.advice.explain.counts import below_the_most, dropped_counts, only_one
from gpuscale.advice.explain.focus import changes, detailed, marked, named, remedy
from gpuscale.advice.explain.phrasebook import (
    sentence,
    strategy_words,
    term_name,
    term_subject,
)
from gpuscale.advice.explain.step_interval import step_interval
from gpuscale.advice.explain.view import AdviceView
from gpuscale.advice.records import Decision
from gpuscale.advice.types import STOPPED, TermId
from gpuscale.bench.support import errors_weak
from gpuscale.quantities import (
    counted,
    filled,
    format_batch,
    format_minutes,
    format_ms,
    noun_for,
    number,
)
from gpuscale.tables.bench import on_a_larger_host


def _config(row: pd.Series) -> str:
    batch = table_words.config(row["batch_per_device"], row["accum"])
    return (
        f"{counted(int(row['accelerators']), 'device')}, per-device batch {batch} "
        f"(global batch {format_batch(row['global_batch'])})"
    )


def _recommendation(advice: AdviceView) -> list[str]:
    d: Decision = advice.decision
    chosen, frame = d.chosen, advice.predictions
    row = row_at(frame, chosen.accelerators)
    lines = list(d.warnings)
    time = format_minutes(chosen.time_to_train_min)  # the table's unit, as the answer's
    use = "Use" if d.count is not None else "Count withheld; as assumed,"
    if d.count is None and not d.withheld_by:  # refused: 1 device cannot hold the model
        use = "No count advised (an input is flagged IMPLAUSIBLE); the fewest that hold it,"
    if not d.holds:
        use = sentence("none_holds_use")
    if chosen.accelerators > 1:
        lines.append(
            f"{use} {_config(row)}: {time} to a trained model, "
            f"speedup {number(chosen.speedup)} "
            f"({speedup_interval(chosen.speedup_low, chosen.speedup_high)}), "
            f"efficiency {chosen.efficiency:.0%} = throughput efficiency "
            f"{chosen.throughput_efficiency:.0%} x convergence factor "
            f"{chosen.convergence_factor:.0%}."
        )
    else:
        lines.append(f"{use} {_config(row)}: {time} to a trained model.")
        if d.held_back is not None:
            n = d.held_back.accelerators
            held = row_at(frame, n)
            why = (
                "includes no gain"
                if held["speedup_low"] <= 1
                else "rests on inputs that cannot all be true (IMPLAUSIBLE above)"
            )
            lines.append(
                f"{n} devices would reach {held['efficiency']:.0%} efficiency, but "
                f"their speedup ({speedup_interval(held['speedup_low'], held['speedup_high'])}) "
                f"{why}: not recommended until a measurement at that count shows it."
            )
        elif d.largest > 1:
            n = d.focus.accelerators
            lines.append(
                f"No larger count keeps efficiency >= {d.target_efficiency:.0%} "
                f"(the next, {n} devices: {row_at(frame, n)['efficiency']:.0%})."
            )
        else:
            lines.append(only_one(advice.calibration, d.limit.cap))
    if d.fastest is not None and d.fastest != chosen.accelerators:
        fastest = row_at(frame, d.fastest)
        fastest_time = format_minutes(fastest["time_to_train_min"])
        lines.append(
            f"Fastest: {_config(fastest)}, {fastest_time} at "
            f"efficiency {fastest['efficiency']:.0%} (speedup {number(fastest['speedup'])} "
            f"({speedup_interval(fastest['speedup_low'], fastest['speedup_high'])}))."
        )
    cheapest = advice.picks.cheapest
    if cheapest is not None and cheapest not in (chosen.accelerators, 1):
        lines.append(f"Fewest device-hours: {counted(cheapest, 'device')}.")
    one = table_words.one_device(advice)
    return [*lines, *filter(None, [one])]


def _wait_words(advice: AdviceView, n: int) -> str:
    """The wait term's name at ``n``: where the bench ran ``n`` devices, the no-sync
    step's growth over N = 1 (not the bench's ``sync_wait_ms``)."""
    measured = dict(advice.calibration.model.compute.held_slowdown())
    if n not in measured:
        return "waiting for the slowest device "
    return (
        f"slower compute on {counted(n, 'device')} (the no-sync step measured "
        f"x{measured[n]:.2f} of N = 1's: contention and the slowest device, not the bench's "
        "wait inside the synchronised step, sync_wait_ms) "
    )


def _step(advice: AdviceView) -> list[str]:
    d = advice.decision
    at = d.focus
    if at.accelerators < 2:
        return []
    o = d.limit.overheads_ms
    ms = partial(format_ms, like=at.step_ms)  # every part in the step's unit
    term, rests, remainder = focus.focus_words(d, ms)
    fsdp = advice.calibration.run.strategy == "fsdp"
    decides = "decides" if focus.deciding_kind(advice) == "term" else "is the largest"
    verdict = f"{term} {decides}{marked(advice)}"
    if d.short_alone():
        verdict = (
            f"{term} is the largest{marked(advice)}, and not enough alone: without it they "
            f"would run at {d.limit.without_dominant_efficiency:.0%} efficiency (target "
            f"{d.target_efficiency:.0%})"
        )
    lines = [
        f"On {detailed(d)}, a step takes {ms(at.step_ms)}{rests}: compute "
        f"{ms(at.compute_ms)} "
        f"{focus.not_spread(advice.calibration, advice.predictions, at.accelerators, at.step_ms)}, "
        + filled("DDP's own copies {}, ", not fsdp and ms(o["ddp"]))
        + _wait_words(advice, at.accelerators)
        + f"{ms(o['wait'])}, communication not hidden by "
        f"backward {ms(row_at(advice.predictions, at.accelerators)['exposed_comm_ms'])} "
        f"({term_name(TermId.BANDWIDTH)} {ms(o['bandwidth'])}, "
        f"{term_name(TermId.LATENCY)} {ms(o['latency'])}){remainder}; speedup "
        f"{number(at.speedup)} ({speedup_interval(at.speedup_low, at.speedup_high)}). {verdict}.",
    ]
    numbers = (
        f"throughput efficiency {at.throughput_efficiency:.0%}, convergence factor "
        f"{at.convergence_factor:.0%}"
    )
    if d.limit.cap == "convergence":
        lines.append(
            f"At {named(d)}, convergence, not the step's overheads, caps the speedup: the "
            f"larger global batch needs {number(1 / at.convergence_factor)}x the "
            f"samples ({numbers})."
        )
    elif d.limit.cap == "overheads":
        lines.append(
            f"At {named(d)}, the step's overheads cap the speedup ({numbers}); "
            f"the largest is {term_subject(d.limit.dominant_term)}{marked(advice)}."
        )
    elif focus.memory_decides(advice):
        name = strategy_words(advice.calibration.run.strategy)["name"]
        lines.append(
            f"{counted(at.accelerators, 'device')}, the fewest that hold the model with {name}, "
            f"set the count ({numbers}): fewer cannot hold it."
        )
    elif d.limit.cap in STOPPED:
        lines.append(
            below_the_most(advice.calibration, advice.predictions, at.accelerators, numbers)
            or f"{at.accelerators} devices is the most allowed and still pays ({numbers}): "
            "the count allowed caps the speedup."
        )
    else:
        lines.append(f"At {named(d)}, neither factor loses more than 5% ({numbers}).")
    if d.count is not None:  # a count withheld: its line says what to give or measure
        lines.append(f"What would change it: {changes(advice, remedy(advice))}.")
    return lines


def _sources(advice: AdviceView) -> list[str]:
    cal = advice.calibration
    assert cal is not None
    dropped = dropped_counts(cal, advice.predictions)  # a count asked for without a row
    lines = [*map(findings.said, cal.said.sources), *filter(None, [dropped])]
    said = {a.term for a in advice.assumptions}
    convergence = cal.search.convergence
    if convergence is not None:
        e_min, b_noise, source = convergence.e_min, convergence.b_noise, convergence.source
        lines.append(sentence("convergence", e_min=e_min, b_noise=b_noise, source=source))
    elif TermId.CONVERGENCE not in said:
        lines.append(sentence("no_convergence", samples=cal.search.samples))
    # the fixed cost has its own sentence (``_scaling``)
    lines += [a.sentence() for a in advice.assumptions if a.term != TermId.FIXED]
    rows = advice.predictions
    counts = zip(rows["accelerators"].astype(int), rows["batch_per_device"], strict=True)
    lines.append(f"Power: {cal.machine.power.said(counts)}.")
    source = findings.said(cal.model.error.source) + errors_weak(cal.runs.evidence, cal.model.error)
    lines.append(f"{step_interval(advice, source)}.")
    flagged = advice.predictions[advice.predictions["flags"] != ""]
    for row in flagged.itertuples():
        lines.append(f"Left out {counted(row.accelerators, 'device')}: {row.flags}.")
    return lines


def _scaling(advice: AdviceView) -> list[str]:
    """How the counts were compared (global or per-device batch kept), the fixed cost,
    the other scaling where it was not the one decided on, and what would settle it."""
    cal, d = advice.calibration, advice.decision
    lines = []
    if cal.model.fixed is not None:
        lines.append(table_words.fixed_cost_line(cal))
    kept, modelled = cal.run.kept_global_batch, cal.search.convergence is not None
    if kept is not None:
        asked = cal.run.global_batch is not None or modelled
        fixed = table_words.fixed_costs(cal, advice.predictions)
        lines.append(sentence("strong_scaling", kept=kept, asked=asked, fixed=fixed))
    elif not modelled or cal.run.scaling == "weak":
        first = advice.predictions.iloc[0]  # the batch and micro-steps every count keeps
        batch = table_words.config(first["batch_per_device"], first["accum"])
        lines.append(sentence("weak_scaling", kept=batch, modelled=modelled))
    else:
        lines.append(_searched(advice))
    lines += _weak_alternative(advice)
    if d.settle:
        lines.append(f"Measure first: {d.settle}.")
    return lines


def _searched(advice: AdviceView) -> str:
    """With a convergence model and no batch kept: what each count's search chose, what
    the larger batch's samples cost at the focus count, and how to keep one batch."""
    frame, focus = advice.predictions, advice.decision.focus.accelerators
    chosen = ", ".join(
        f"{format_batch(r.batch_per_device)}"
        + (f" x {r.accum}" if r.accum > 1 else "")
        + f" (global batch {format_batch(r.global_batch)}) on {r.accelerators} "
        + noun_for(r.accelerators, "device")
        for r in frame.itertuples()
    )
    at_focus = focus in set(frame["accelerators"]) and focus > 1
    return sentence(
        "batch_searched",
        chosen=chosen,
        grows=frame["global_batch"].nunique() > 1,
        factor=row_at(frame, focus)["convergence_factor"] if at_focus else None,
        named=named(advice.decision),
        one=frame.iloc[0]["global_batch"],
        batch=advice.calibration.run.batch,
    )


def _weak_alternative(advice: AdviceView) -> list[str]:
    """Under strong scaling, what keeping the per-device batch would give at the focus
    count, and why the advice does not count on it."""
    alt, d, cal = advice.alternative, advice.decision, advice.calibration
    if alt is None or d.focus.accelerators not in set(alt["accelerators"]) - {1}:
        return []
    row = row_at(alt, d.focus.accelerators)
    said = [a.measure for a in cal.said.assumptions if a.term == TermId.CONVERGENCE]
    host = on_a_larger_host(2, cal.runs.host_devices)
    measure = str(said[0]) if said and said[0] else sentence("measure_noise", host=host)
    weak = sentence(
        "weak_instead",
        batch=table_words.config(row["batch_per_device"], row["accum"]),
        big=row["global_batch"],
        named=named(d),
        speedup=row["speedup"],
        interval=speedup_interval(row["speedup_low"], row["speedup_high"]),
        one=row_at(alt, 1)["global_batch"],
        measure=measure,
    )
    return [weak]


def explain(advice: AdviceView) -> list[str]:
    """``--explain``'s sentences, in the order they are said."""
    return (
        _recommendation(advice)
        + _scaling(advice)
        + break_even_lines(advice)
        + _step(advice)
        + _sources(advice)
        + [table_words.equilibrium_sentence(advice)]
    )

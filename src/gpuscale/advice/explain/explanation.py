"""``--explain``'s sentences over the Decision and its predictions: what to do and how
sure, which term decides, what caps the speedup, what would change it, every source."""

from __future__ import annotations

import pandas as pd

from gpuscale.advice.assumed import Assumption
from gpuscale.advice.explain import findings, focus, table_words
from gpuscale.advice.explain.break_even import break_even_lines
from gpuscale.advice.explain.counts import dropped_counts, only_one
from gpuscale.advice.explain.focus import named
from gpuscale.advice.explain.phrasebook import sentence, speedup_interval
from gpuscale.advice.explain.step_interval import step_interval
from gpuscale.advice.explain.view import AdviceView, row_at
from gpuscale.advice.records import Decision
from gpuscale.advice.types import TermId
from gpuscale.bench.support import errors_weak
from gpuscale.quantities import (
    counted,
    format_batch,
    noun_for,
)
from gpuscale.tables.bench import on_a_larger_host


def _config(row: pd.Series) -> str:
    batch = table_words.config(row["batch_per_device"], row["accum"])
    return (
        f"{counted(int(row['accelerators']), 'device')}, per-device batch {batch} "
        f"(global batch {format_batch(row['global_batch'])})"
    )


def _use(d: Decision) -> str:
    """How the recommendation opens (``recommendation``'s ``use``): a count to use, one
    withheld, none advised (an input flagged), none predicted holding the model."""
    if not d.holds:
        return "none"
    if d.count is not None:
        return "use"
    if d.withheld_by:
        return "withheld"
    return "refused"


def _recommendation(advice: AdviceView) -> list[str]:
    d: Decision = advice.decision
    chosen, frame = d.chosen, advice.predictions
    lines = [
        *d.warnings,
        sentence(
            "recommendation",
            use=_use(d),
            config=_config(row_at(frame, chosen.accelerators)),
            time=chosen.time_to_train_min,  # the table's unit, as the answer's
            speedup=chosen.speedup if chosen.accelerators > 1 else None,
            interval=speedup_interval(chosen.speedup_low, chosen.speedup_high),
            efficiency=chosen.efficiency,
            throughput=chosen.throughput_efficiency,
            factor=chosen.convergence_factor,
        ),
    ]
    if chosen.accelerators == 1 and d.held_back is not None:
        held = row_at(frame, d.held_back.accelerators)
        lines.append(
            sentence(
                "held_back",
                n=d.held_back.accelerators,
                efficiency=held["efficiency"],
                interval=speedup_interval(held["speedup_low"], held["speedup_high"]),
                gain=not held["speedup_low"] <= 1,
            )
        )
    elif chosen.accelerators == 1 and d.largest > 1:
        n = d.focus.accelerators
        efficiency = row_at(frame, n)["efficiency"]
        lines.append(sentence("no_larger", target=d.target_efficiency, n=n, efficiency=efficiency))
    elif chosen.accelerators == 1:
        lines.append(only_one(advice.calibration, d.limit.cap))
    if d.fastest is not None and d.fastest != chosen.accelerators:
        fastest = row_at(frame, d.fastest)
        lines.append(
            sentence(
                "fastest",
                config=_config(fastest),
                time=fastest["time_to_train_min"],
                efficiency=fastest["efficiency"],
                speedup=fastest["speedup"],
                interval=speedup_interval(fastest["speedup_low"], fastest["speedup_high"]),
            )
        )
    cheapest = advice.picks.cheapest
    if cheapest is not None and cheapest not in (chosen.accelerators, 1):
        lines.append(f"Fewest device-hours: {counted(cheapest, 'device')}.")
    return [*lines, *filter(None, [table_words.one_device(advice)])]


def _said_among_sources(a: Assumption, strategy: str) -> bool:
    """Whether the sources say ``a``: not the fixed cost (``_scaling`` says it), nor DDP's
    own work under a sharded ``strategy``, whose step holds no such term (0 ms)."""
    if a.term == TermId.FIXED:
        return False
    return a.term != TermId.DDP or a.strategy != "ddp" or strategy == "ddp"


def _sources(advice: AdviceView) -> list[str]:
    cal = advice.calibration
    strategy = cal.run.strategy
    dropped = dropped_counts(cal, advice.predictions)  # a count asked for without a row
    lines = [*map(findings.said, cal.said.sources), *filter(None, [dropped])]
    said = {a.term for a in advice.assumptions}
    convergence = cal.search.convergence
    if convergence is not None:
        e_min, b_noise, source = convergence.e_min, convergence.b_noise, convergence.source
        lines.append(sentence("convergence", e_min=e_min, b_noise=b_noise, source=source))
    elif TermId.CONVERGENCE not in said:
        lines.append(sentence("no_convergence", samples=cal.search.samples))
    lines += [a.sentence() for a in advice.assumptions if _said_among_sources(a, strategy)]
    rows = advice.predictions
    counts = zip(rows["accelerators"].astype(int), rows["batch_per_device"], strict=True)
    lines.append(f"Power: {cal.machine.power.said(counts)}.")
    source = findings.said(cal.model.error.source, strategy=strategy)
    source += errors_weak(cal.runs.evidence, cal.model.error)
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
    measure = str(next(iter(said), "")) or sentence("measure_noise", host=host)
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
        + focus.step_lines(advice)
        + _sources(advice)
        + [table_words.equilibrium_sentence(advice)]
    )

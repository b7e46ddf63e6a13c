"""The decision's focus in words: the count the step is detailed at (the next above the one
advised, else that one), the step there, what decides, and what would change it."""

from __future__ import annotations

from functools import partial

from gpuscale.advice.explain.counts import below_the_most, larger_counts
from gpuscale.advice.explain.phrasebook import (
    PHRASES,
    TERMS,
    sentence,
    speedup_interval,
    strategy_words,
    term_name,
    term_subject,
)
from gpuscale.advice.explain.phrasebook import remedy as remedy_of
from gpuscale.advice.explain.view import AdviceView, row_at
from gpuscale.advice.records import Decision
from gpuscale.advice.types import STOPPED, TermId
from gpuscale.bench.support import weak
from gpuscale.quantities import agreeing, counted, filled, format_ms, joined, noun_for


def named(d: Decision) -> str:
    """``4 devices, the next count above the 2 advised`` or ``the 8 devices advised``."""
    word = "advised" if d.count is not None else "predicted as assumed"  # a count withheld
    n = d.chosen.accelerators
    if d.focus.accelerators == n:
        return f"the {counted(n, 'device')} {word}"
    advised = agreeing(n, "1 device", str(n))
    return f"{d.focus.accelerators} devices, the next count above the {advised} {word}"


def _detailed(d: Decision) -> str:
    """``named`` with the fastest count where it is another."""
    said, same = named(d), d.focus.accelerators == d.chosen.accelerators
    if d.fastest is None:  # no count predicted holds the model: none is the fastest
        return said
    if d.fastest == d.focus.accelerators:
        return f"{said} and the fastest"
    if d.fastest == d.chosen.accelerators:
        return f"{said}, itself the fastest" if same else f"{said} and fastest"
    return f"{said} (the fastest is {d.fastest})"


def memory_decides(advice: AdviceView) -> bool:
    """Whether the fewest devices that hold the model set the count: it is the fewest the
    strategy advised holds it on, above one, and short of the target efficiency."""
    d, held = advice.decision, getattr(advice, "memory", None)
    fewest = held and held.fits_from(advice.calibration.run.strategy)
    return bool(fewest and fewest > 1 and d.chosen.accelerators == fewest) and (
        d.chosen.efficiency < d.target_efficiency
    )


def deciding_kind(advice: AdviceView) -> str:
    """What decides, one kind for the answer and --explain: ``measured``, ``withheld``,
    ``interval``, ``memory``, the cap ``convergence`` or why the search stopped, else ``term``."""
    d = advice.decision
    if any(m.accelerators <= d.focus.accelerators for m in getattr(advice, "disagreements", ())):
        return "measured"
    if d.withheld_by:
        return "withheld"
    if d.held_back is not None and (d.held_back.speedup_low or 2) <= 1:
        return "interval"
    if memory_decides(advice):
        return "memory"
    return d.limit.cap if d.limit.cap in ("convergence", *STOPPED) else "term"


def deciding_change(advice: AdviceView) -> str:
    """What would change the decision: the memory where it sets the count, else the
    decision's own change (a term, or why the search stopped)."""
    return "memory" if memory_decides(advice) else advice.decision.limit.change


def remedy(advice: AdviceView) -> str:
    """What would help most for the decision's change: for latency only the cures that
    apply; where the largest overhead gone would still miss the target, the others too."""
    d, cal = advice.decision, advice.calibration
    strategy, n = cal.run.strategy, d.focus.accelerators
    change = deciding_change(advice)
    parts = advice.fixed_term
    cures, words = TERMS[TermId.LATENCY]["cures"], strategy_words(strategy)
    cured = [
        *[cures["buckets"].format(**words)] * d.limit.fewer_messages,
        cures["batch"],
        cures["accumulate" if d.chosen.accum == 1 else "more"].format(
            per_k=words["per_k"], accum=d.chosen.accum
        ),
    ]
    said = remedy_of(
        change,
        "full",
        strategy,
        cures=joined(cured, "or"),
        whole=PHRASES["fixed_whole_fsdp" if strategy == "fsdp" else "fixed_whole"],
        # the optimizer step, mostly: a fused one
        fused=TERMS[TermId.FIXED]["fused"]
        * (parts.optimizer_excess_ms > parts.forward_backward_excess_ms),
    )
    if change in STOPPED:  # below the most allowed: what would predict a larger count
        said = larger_counts(cal, d.counts, n) or said
    if d.short_alone() and not d.limit.also_shrink:
        said += f"; not enough: with every overhead gone {named(d)} would still miss it"
    elif d.short_alone():
        also = [
            f"{term_name(k)} ({format_ms(d.limit.overheads_ms[k])})" for k in d.limit.also_shrink
        ]
        said += f"; alone not enough: the {joined(also)} {noun_for(len(also), 'term')} "
        said += "must shrink too"
    return said


def _changes(advice: AdviceView) -> str:
    """:func:`remedy`, or where the runs advised on are weak, that they cannot say."""
    found = advice.calibration.runs.evidence
    if not weak(found) and not (found is not None and found.all_flagged):
        return remedy(advice)
    return (
        f"not said from these runs: the terms above are read from {found.rests_on()}, "
        "a measurement to repeat, not a cause to act on (see Measure first)"
    )


def _not_spread(advice: AdviceView, n: int, like: float) -> str:
    """What of the compute at ``n`` devices (the focus) is above its share of one
    device's, in the parts the fixed cost line names."""
    parts, strategy = advice.fixed_term, advice.calibration.run.strategy
    ms = partial(format_ms, like=like)
    spread = "not spread over the devices' smaller batches"
    if parts.optimizer_ms <= 0:
        return f"(of it {ms(parts.excess_ms)} fixed per-step cost {spread})"
    said = []
    if parts.optimizer_excess_ms > 0:
        each = f"{ms(parts.optimizer_ms)} on every device"
        if strategy == "fsdp":
            each = (
                f"{ms(parts.optimizer_at_focus_ms)} on each device, its shard's 1/{n} of one "
                f"device's {ms(parts.optimizer_ms)}"
            )
        said.append(
            f"{ms(parts.optimizer_excess_ms)} of the optimizer step ({each}, once per step)"
        )
    if parts.forward_backward_excess_ms > 0:
        fb = ms(parts.forward_backward_excess_ms)
        said.append(f"{fb} of the forward and backward's fixed cost")
    excess = ms(parts.excess_ms)
    return f"(of it {excess} fixed per-step costs {spread}{filled(': {}', joined(said))})"


def step_lines(advice: AdviceView) -> list[str]:
    """--explain's lines on the step at the focus count: its parts and what decides, what
    caps the speedup, and what would change it (none on one device)."""
    d, cal = advice.decision, advice.calibration
    at, o = d.focus, d.limit.overheads_ms
    if at.accelerators < 2:
        return []
    subject = term_subject(d.limit.dominant_term)
    # a measured step: what the model's terms leave of it
    left = None if at.rests_on == "predicted" else o.get(TermId.UNEXPLAINED, 0.0)
    slowdown = dict(cal.model.compute.held_slowdown()).get(at.accelerators)
    marked = " (from weak runs: a measurement to repeat)" * weak(cal.runs.evidence)
    lines = [
        sentence(
            "step_at",
            detailed=_detailed(d),
            step=at.step_ms,
            rests_on=at.rests_on,
            compute=at.compute_ms,
            not_spread=_not_spread(advice, at.accelerators, at.step_ms),
            ddp=o["ddp"] if cal.run.strategy == "ddp" else None,  # a sharded one's is 0
            held=slowdown is not None,
            n=at.accelerators,
            slowdown=slowdown,
            wait=o["wait"],
            exposed=row_at(advice.predictions, at.accelerators)["exposed_comm_ms"],
            bandwidth_name=term_name(TermId.BANDWIDTH),
            bandwidth=o["bandwidth"],
            latency_name=term_name(TermId.LATENCY),
            latency=o["latency"],
            left=left,
            explained=at.explained_ms,
            speedup=at.speedup,
            interval=speedup_interval(at.speedup_low, at.speedup_high),
            term=subject[0].upper() + subject[1:],
            alone=d.short_alone(),
            decides=deciding_kind(advice),
            marked=marked,
            without=d.limit.without_dominant_efficiency,
            target=d.target_efficiency,
        )
    ]
    numbers = sentence(
        "step_numbers", throughput=at.throughput_efficiency, factor=at.convergence_factor
    )
    cap = "memory" if memory_decides(advice) else d.limit.cap
    below = below_the_most(cal, d.counts, at.accelerators, numbers)
    if cap in STOPPED and below:
        lines.append(below)
    else:
        lines.append(
            sentence(
                "step_cap",
                cap="stopped" if cap in STOPPED else cap,
                named=named(d),
                needs=at.samples_ratio if cap == "convergence" else None,
                numbers=numbers,
                subject=subject,
                marked=marked,
                n=at.accelerators,
                strategy=strategy_words(cal.run.strategy)["name"],
            )
        )
    if d.count is not None:  # a count withheld: its line says what to give or measure
        lines.append(f"What would change it: {_changes(advice)}.")
    return lines

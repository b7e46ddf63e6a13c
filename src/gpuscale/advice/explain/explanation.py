"""``--explain``'s sentences: what to do, how the counts were compared, the break-even,
the step at the focus and what caps it, every source with the step interval, the equilibrium;
the words of a calibration's sources (:func:`worded`)."""

from __future__ import annotations

import math
from dataclasses import replace

from gpuscale.advice.calibration import Calibration, Power
from gpuscale.advice.derived import SMALLEST_SEARCHED
from gpuscale.advice.explain import phrasebook
from gpuscale.advice.explain.answer import (
    AdviceView,
    above_largest,
    counts_line,
    decision_line,
    named,
    remedy,
    row_at,
)
from gpuscale.advice.explain.caveats import power_said
from gpuscale.advice.explain.phrasebook import (
    first_case,
    measured,
    said,
    sentence,
    term_words,
)
from gpuscale.advice.records import measured_at
from gpuscale.advice.types import STOPPED, Measure, Source, TermId, maybe
from gpuscale.analysis.critical_batch import NoiseScale
from gpuscale.bench.support import errors_weak, predicted, to_test, weak
from gpuscale.quantities import format_ms, joined
from gpuscale.tables.bench import on_a_larger_host

KNEE_COUNTS = 3  # Kneedle needs this many counts to find a bend


def _recommendation(advice: AdviceView) -> list[str]:
    """The decision, then the model chosen (where no note passed one over: the caveats say
    the note), why not more devices, the fastest and cheapest counts, the N = 1 row."""
    d, frame, model = advice.decision, advice.predictions, advice.calibration.said
    chosen = d.read
    lines = [*d.warnings, decision_line(advice, long=True)]
    if model.chosen and not model.model_note:
        lines.append(said(model.chosen))
    if chosen.accelerators == 1:  # why not more: a gain unsure, short of the target, or none
        kept, cap = advice.calibration.run.kept_global_batch, d.limit.cap
        row = row_at(frame, (d.held_back or d.focus).accelerators)
        only = cap if cap == "flagged" or (cap == "batch" and kept is not None) else "one"
        case = first_case({"held_back": d.held_back, "no_larger": d.largest > 1, only: 1})
        gain = not row["speedup_low"] <= 1
        lines.append(sentence("at_one", case=case, row=row, d=d, gain=gain, kept=kept))
    if d.fastest is not None and d.fastest != chosen.accelerators:
        lines.append(sentence("fastest", row=row_at(frame, d.fastest)))
    cheapest = advice.picks.cheapest
    if cheapest is not None and cheapest not in (chosen.accelerators, 1):
        lines.append(sentence("cheapest", n=cheapest))
    return [*lines, *filter(None, [one_device(advice)])]


def _scaling(advice: AdviceView) -> list[str]:
    cal, d = advice.calibration, advice.decision
    opt, fixed, lines = advice.fixed_term.optimizer_ms, cal.model.fixed, []
    if fixed is not None:  # each forward and backward's; the optimizer step's beside it
        measure = fixed.measure if fixed.source != Source.MEASURED and fixed.measure else None
        said = {"split": opt > 0, "measure": maybe(measured, measure), "strategy": cal.run.strategy}
        said["scaled"] = scaled_from(cal)
        lines.append(sentence("fixed_costs_line", f=fixed, opt=opt, **said))
    kept, modelled = cal.run.kept_global_batch, cal.search.convergence is not None
    kind = scaling(cal)
    if kind == "strong":
        asked = cal.run.global_batch is not None or modelled
        # the forward and backward's fixed cost falls with the micro-steps; the optimizer's not
        accums = tuple(int(k) for k in advice.predictions["accum"])
        opt_on = cal.run.strategy if opt > 0 else "none"
        said = {"kept": kept, "asked": asked, "opt": opt_on, "varies": len(set(accums)) > 1}
        lines.append(sentence("strong_scaling", accums=accums, **said))
    elif kind == "weak":
        first = advice.predictions.iloc[0]  # the batch and micro-steps every count keeps
        batch = config(first["batch_per_device"], first["accum"])
        lines.append(sentence("weak_scaling", kept=batch, modelled=modelled))
    else:  # a convergence model, no batch kept: what each count's search chose
        frame, focus = advice.predictions, d.focus.accelerators
        chosen = ", ".join(sentence("batch_chosen", r=r) for r in frame.itertuples())
        at_focus = focus in set(frame["accelerators"]) and focus > 1
        factor = row_at(frame, focus)["convergence_factor"] if at_focus else None
        said = {"grows": frame["global_batch"].nunique() > 1, "one": frame.iloc[0]["global_batch"]}
        said |= {"named": named(d), "batch": cal.run.batch}
        lines.append(sentence("batch_searched", chosen=chosen, factor=factor, **said))
    alt = advice.alternative
    if alt is not None and d.focus.accelerators in set(alt["accelerators"]) - {1}:
        # what keeping the per-device batch would give, and why the advice does not count on it
        row = row_at(alt, d.focus.accelerators)
        measures = [a.measure for a in cal.said.assumptions if a.term == TermId.CONVERGENCE]
        host = on_a_larger_host(2, cal.runs.host_devices)
        measure = measured(next(iter(measures), Measure())) or sentence("measure_noise", host=host)
        batch = config(row["batch_per_device"], row["accum"])
        one = row_at(alt, 1)["global_batch"]
        said = {"batch": batch, "named": named(d), "one": one, "measure": measure}
        lines.append(sentence("weak_instead", row=row, **said))
    if d.settle and not d.withheld_by:  # a withheld count's measures: in the caveats
        lines.append(sentence("settle_first", settle=d.settle))
    return lines


def scaling(cal: Calibration) -> str:
    """``strong`` (the global batch kept), ``weak`` (each device's batch kept) or ``search``
    (the convergence model's batch at each count)."""
    if cal.run.kept_global_batch is not None:
        return "strong"
    weak = cal.search.convergence is None or cal.run.scaling == "weak"
    return "weak" if weak else "search"


def _sources(advice: AdviceView) -> list[str]:
    cal = advice.calibration
    strategy, rows = cal.run.strategy, advice.predictions
    dropped = counts_line(advice)  # a count asked for without a row
    lines = [*map(phrasebook.said, cal.said.sources), *filter(None, [dropped])]
    convergence = cal.search.convergence
    if convergence is not None:
        lines.append(sentence("convergence", c=convergence))
    elif TermId.CONVERGENCE not in {a.term for a in advice.assumptions}:
        lines.append(sentence("no_convergence", samples=cal.search.samples))
    for a in advice.assumptions:  # not the fixed cost (said with the scaling)
        if a.term != TermId.FIXED:
            lines.append(sentence("assumption", a=a, measure=maybe(measured, a.measure or None)))
    counts = zip(rows["accelerators"].astype(int), rows["batch_per_device"], strict=True)
    if TermId.POWER not in {a.term for a in advice.assumptions}:  # else said as assumed
        lines.append(sentence("power_line", said=power_said(cal.machine.power, counts)))
    source = phrasebook.said(cal.model.error.source, strategy=strategy)
    lines.append(_step_interval(advice, source + errors_weak(cal.runs.evidence, cal.model.error)))
    flagged = rows[rows["flags"] != ""].itertuples()
    return [*lines, *(sentence("row_left_out", row=row) for row in flagged)]


def _measured(advice: AdviceView, n: int, derived: bool) -> str:
    """How the row at ``n`` rests on a measurement (``derived``: one at another per-device
    batch, by its ratio to the model)."""
    m = measured_at(advice.disagreements, n)
    case = "none" if m is None else ("one" if m.measured_low is None else "range")
    below = m is not None and m.accelerators < n
    batch = m.batch_per_device if derived and m is not None else None
    said = {"at": advice.intervals.span(n), "m": m, "case": case, "below": below}
    return sentence("rests_measured", n=n, batch=batch, **said)


def _step_interval(advice: AdviceView, source: str) -> str:
    """``source`` (the model's error), each predicted row's interval and why it differs, or
    the runs' range where a row rests on a measurement."""
    frame, rule = advice.predictions, advice.intervals.rule
    rows = frame[frame["accelerators"] > 1]
    predicted = rows[rows["rests_on"] == "predicted"]["accelerators"]
    resting = rows[rows["rests_on"] != "predicted"][["accelerators", "rests_on"]]
    carried = [sentence("row_carries", at=advice.intervals.span(int(n))) for n in predicted]
    # why the rows' intervals differ from the model's error (``RowIntervals.wider``)
    wider = advice.intervals.wider if rule is None else ("rule",)
    said = {"resting": len(resting) > 0, "carried": tuple(carried) or None}
    said["wider"] = joined([sentence("wider_why", why=why) for why in wider]) or None
    measured = [_measured(advice, int(n), on == "derived") for n, on in resting.to_numpy()]
    said["measured"] = tuple(measured) or None
    return sentence("step_interval", source=source, rule=rule and phrasebook.said(rule), **said)


def step_lines(advice: AdviceView) -> list[str]:
    """The step at the focus: its parts, what caps the speedup, what would change it."""
    d, cal = advice.decision, advice.calibration
    at, o = d.focus, d.limit.overheads_ms
    if at.accelerators < 2:
        return []
    subject = term_words(d.limit.dominant_term, "subject")
    # a measured step: what the model's terms leave of it
    left = None if at.rests_on == "predicted" else o.get(TermId.UNEXPLAINED, 0.0)
    slowdown = dict(cal.model.compute.held_slowdown()).get(at.accelerators)
    marked = weak(cal.runs.evidence)
    # what of the compute at the focus is above its share of one device's, in parts
    p, like = advice.fixed_term, at.step_ms
    split, parts = p.optimizer_ms > 0, []
    if split and p.optimizer_excess_ms > 0:
        fsdp, n = cal.run.strategy == "fsdp", at.accelerators
        parts.append(sentence("optimizer_not_spread", p=p, like=like, n=n, fsdp=fsdp))
    if split and p.forward_backward_excess_ms > 0:
        parts.append(sentence("fb_not_spread", p=p, like=like))
    not_spread = sentence("not_spread", p=p, like=like, split=split, parts=joined(parts) or None)
    said = {"d": d, "subject": subject, "weak": marked}
    at_step = {"alone": d.short_alone(), "decides": advice.deciding.kind, "left": left}
    at_step["ddp"] = o["ddp"] if cal.run.strategy == "ddp" else None  # a sharded one's is 0
    at_step["exposed"] = row_at(advice.predictions, at.accelerators)["exposed_comm_ms"]
    detailed = named(d, detailed=True)
    at_step |= {"detailed": detailed, "slowdown": slowdown, "not_spread": not_spread}
    lines = [sentence("step_at", **at_step, **said)]
    cap = "memory" if advice.deciding.memory else d.limit.cap
    why, _ = above_largest(advice)
    if cap in STOPPED:  # ``below``: the largest count predicted is below the most allowed
        cap = "below" if why else "stopped"
    strategy = cal.run.strategy
    lines.append(sentence("step_cap", cap=cap, named=named(d), strategy=strategy, why=why, **said))
    if d.count is not None:  # a count withheld: its line says what to give or measure
        found = cal.runs.evidence  # weak or all flagged runs: not a cause to act on
        unsure = bool(weak(found) or (found is not None and found.all_flagged))
        rests_on = found.rests_on() if unsure else None
        fix = None if unsure else remedy(advice)
        lines.append(sentence("what_changes", weak=unsure, rests_on=rests_on, remedy=fix))
    return lines


def break_even_lines(advice: AdviceView) -> list[str]:
    cal, found = advice.calibration, advice.break_even
    if cal.machine.max_devices < 2 or cal.run.global_batch is not None:  # none sought (recommend)
        return []
    lines, evidence, run = [], cal.runs.evidence, cal.run
    per_mb = found.compute_ms_per_grad_mb
    if per_mb is not None:
        like = max(per_mb, found.own_ms_per_grad_mb)  # both in one unit
        said = {"cal": cal, "predicted": predicted(evidence), "found": found, "like": like}
        lines.append(sentence("break_even_rate", **said))
    size, target = found.params, found.target_efficiency_params
    if any(v is not None and math.isnan(v) for v in (size, target)):
        return lines  # the speedup falls with size somewhere: no size from which it holds
    said = {"batch": run.batch, "kept": run.kept_global_batch, "weak": weak(evidence)}
    said |= {"target": cal.search.target_efficiency, "params": cal.model.spec.params}
    said |= {"benched": scaled_from(cal) or evidence is not None, "strategy": run.strategy}
    # the family's break-even sizes, and where the model's own step says otherwise
    basis, smallest = cal.model.family, SMALLEST_SEARCHED
    said["disagrees"] = basis is not None and found.own_disagrees(cal.model.spec.params)
    family = sentence("break_even_family", basis=basis, found=found, smallest=smallest, **said)
    return [*lines, f"{family}{to_test(evidence)}."]


def scaled_from(cal: Calibration) -> str | None:
    """The benched model a --params model's measured terms are scaled from (None: the
    model's own, or nothing benched)."""
    return cal.bench.bench_model if cal.bench is not None and cal.runs.own_model is None else None


def measured_noise(noise: NoiseScale) -> str:
    return sentence("b_simple_measured", n=noise, bounded=math.isfinite(noise.high))


def worded(cal: Calibration) -> Calibration:
    """``cal`` with the words of its power's source, of a convergence model from the bench's
    noise scale and of its memory check."""
    power = cal.machine.power
    if not power.source:
        cal = cal.at({"machine": {"power": replace(power, source=power_source(power))}})
    model, noise = cal.search.convergence, None if cal.bench is None else cal.bench.noise
    if model is not None and cal.search.noise_steps is not None and noise is not None:
        source = measured_noise(noise)
        assumed = tuple(
            replace(a, basis=source) if a.term is TermId.CONVERGENCE else a
            for a in cal.said.assumptions
        )
        model = replace(model, source=source)
        cal = cal.at({"search": {"convergence": model}, "said": {"assumptions": assumed}})
    memory = cal.machine.memory
    if memory is None:
        return cal
    device = memory.device
    if cal.machine.memory_device_assumed:  # none named (the reference), or several sizes
        typed, form = cal.machine.device.name or None, cal.machine.memory_device.part
        said = {"typed": typed, "form": getattr(form, "form_factor", None)}
        device = replace(
            device, assumed=sentence("device_assumed", strategy=memory.strategy, **said)
        )
    shape = memory.activations_counted
    case = first_case({"rest": cal.machine.memory_peak_gb is not None, "shape": shape, "none": 1})
    source = sentence("memory_source", case=case, m=cal.machine, a=shape)
    worded = replace(memory, device=device, activations_source=source)
    return replace(cal, machine=replace(cal.machine, memory=worded))


def power_source(power: Power) -> str:
    batches, watts = None, None
    if power.measured and power.at_batch:  # each batch's watts, per device
        batches = tuple(float(b) for b, _ in power.at_batch)
        watts = tuple(float(round(w)) for _, w in power.at_batch)
    said = {"kind": power.kind.value, "assumed": power.assumed or None, "batches": batches}
    said["watts"] = watts
    return sentence("power_source", p=power, **said)


def explain(advice: AdviceView) -> list[str]:
    eq, at, memory = advice.picks.equilibrium, advice.picks.numbers, advice.memory
    # too few counts for a bend: of the table's, of those that hold the model, or refused
    held = memory and memory.fits_from(advice.calibration.run.strategy) != 1
    few = "few_refused" if advice.decision.refused else "few_held" if held else "few"
    knee = few if eq["knee"] is None and at and at.rows < KNEE_COUNTS else eq["knee"]
    none = "none_holds" if not advice.decision.holds else "refused"  # where no rule picks
    case = none if at is None else "*"
    equilibrium = sentence("equilibrium", a=advice, case=case, knee=knee, needs=KNEE_COUNTS)
    return (
        _recommendation(advice)
        + _scaling(advice)
        + break_even_lines(advice)
        + step_lines(advice)
        + _sources(advice)
        + [equilibrium]
    )


def one_device(advice: AdviceView) -> str:
    """The N = 1 row's step beside the bench's, what every speedup is against."""
    frame, m, r = advice.predictions, advice.calibration.runs, advice.one_device
    one, benched = frame.iloc[0], m.one_step_ms is not None
    row = (int(one["batch_per_device"]), int(one["accum"]))
    same = benched and row == (m.one_batch, m.one_accum)
    fsdp, own = benched and m.one_strategy == "fsdp", benched and m.one_own_ms > 0
    as_ddp = fsdp and advice.calibration.run.strategy == "ddp"  # FSDP's own work left out
    cases = {"fsdp_as_ddp": as_ddp, "fsdp_bare": fsdp and own, "fsdp": fsdp, "ddp": own}
    cases["none"] = r.added_ddp_ms > 0
    case = first_case({**cases, "": 1})
    if not case:
        return ""
    # no bench run at N = 1: only what the counts above 1 add is said
    at = None if not benched or same else config(m.one_batch, m.one_accum)
    detail = ""
    like = r.step_ms  # the phases timed apart, beside the no-sync step timed whole
    if case == "ddp" and same:
        if format_ms(r.nosync_ms or 0.0, like=like) != format_ms(like, like=like):
            detail = sentence("one_device_phases", r=r)
    elif case == "ddp":  # the bench's batch predicted: the same samples
        detail = sentence("one_device_like", r=r, row=config(*row), bench=at)
    said = {"at": at, "detail": detail, "added": r.added_ddp_ms or None}
    return sentence("one_device", case=case, m=m, r=r, **said)


def config(batch: float, accum: int) -> str:
    """``32`` or ``32 x 4 accumulation steps``: a per-device batch and its micro-steps."""
    return sentence("batch_config", batch=batch, accum=int(accum))

"""--explain on the step at the decision's focus (the next count above the one advised,
else that one), what caps the speedup and what would change it; the counts searched and
why one has no row; the break-even (``search.derive``) and its family's."""

from __future__ import annotations

import math

from gpuscale.advice.calibration import Calibration, FamilyBasis
from gpuscale.advice.derived import SMALLEST_SEARCHED, BreakEven
from gpuscale.advice.explain.answer import AdviceView, row_at
from gpuscale.advice.explain.phrasebook import remedy as remedy_of
from gpuscale.advice.explain.phrasebook import sentence, strategy_name, term_name, term_subject
from gpuscale.advice.records import Counts, Decision, spans
from gpuscale.advice.types import STOPPED, TermId
from gpuscale.bench.support import predicted, to_test, weak
from gpuscale.quantities import format_ms, joined


def named(d: Decision, detailed: bool = False) -> str:
    """``4 devices, the next count above the 2 advised`` or ``the 8 devices advised``
    (``detailed``: with the fastest count where it is another)."""
    n, focus, fastest = d.chosen.accelerators, d.focus.accelerators, ""
    if detailed and d.fastest is not None:  # None: no count predicted holds the model
        fastest = {n: "chosen", focus: "focus"}.get(d.fastest, "other")
    return sentence("named", d=d, fastest=fastest, same=focus == n)


def remedy(advice: AdviceView) -> str:
    """What would help most for the decision's change: for latency only the cures that
    apply; where the largest overhead gone would still miss the target, the others too."""
    d, cal, change = advice.decision, advice.calibration, advice.deciding.change
    said = remedy_of(
        change,
        "full",
        cal.run.strategy,
        fewer_messages=d.limit.fewer_messages,
        accum=d.chosen.accum,
        optimizer=advice.fixed_term.optimizer_mostly,  # a fused one
    )
    why, fix = above_largest(cal, d.counts)
    if change in STOPPED and why:  # below the most allowed: what would predict a larger count
        said = sentence("larger_counts", fix=fix, largest=d.focus.accelerators)
    if d.short_alone():  # the others that must shrink too, or none would do
        o = d.limit.overheads_ms
        also = [f"{term_name(k)} ({format_ms(o[k])})" for k in d.limit.also_shrink]
        said += sentence("not_enough", named=named(d), also=joined(also), n=len(also))
    return said


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
    lines = [
        sentence(
            "step_at",
            d=d,
            detailed=named(d, detailed=True),
            not_spread=not_spread,
            ddp=o["ddp"] if cal.run.strategy == "ddp" else None,  # a sharded one's is 0
            slowdown=slowdown,
            exposed=row_at(advice.predictions, at.accelerators)["exposed_comm_ms"],
            left=left,
            subject=subject,
            alone=d.short_alone(),
            decides=advice.deciding.kind,
            weak=marked,
        )
    ]
    cap = "memory" if advice.deciding.memory else d.limit.cap
    why, _ = above_largest(cal, d.counts)
    if cap in STOPPED:  # ``below``: the largest count predicted is below the most allowed
        cap = "below" if why else "stopped"
    lines.append(
        sentence(
            "step_cap",
            cap=cap,
            named=named(d),
            subject=subject,
            weak=marked,
            d=d,
            strategy=strategy_name(cal.run.strategy),
            why=why,
        )
    )
    if d.count is not None:  # a count withheld: its line says what to give or measure
        found = cal.runs.evidence  # weak or all flagged runs: not a cause to act on
        unsure = bool(weak(found) or (found is not None and found.all_flagged))
        rests_on = found.rests_on() if unsure else None
        said = None if unsure else remedy(advice)
        lines.append(sentence("what_changes", weak=unsure, rests_on=rests_on, remedy=said))
    return lines


def _names(ranges: tuple[tuple[int, int], ...]) -> str:
    """``1, 2, 4, 5-7``: each span (``records.spans``) its count, or its ends."""
    return ", ".join(str(a) if a == b else f"{a}-{b}" for a, b in ranges)


def dropped_counts(cal: Calibration, counts: Counts) -> str:
    """The counts searched, by what rule, and why each without a row has none ("": all have)."""
    missing = counts.missing
    if not missing and counts.every:
        return ""
    off = _names(spans(counts.off_nodes)) if counts.per_node and counts.off_nodes else None
    said = {"run": cal.run, "n": len(missing), "missing": missing or None, "off": off}
    return sentence("dropped_counts", c=counts, **said)


def above_largest(cal: Calibration, counts: Counts) -> tuple[str, str]:
    """Why no count above the focus (the largest predicted where the search stopped) was,
    and what would let one be; ("", "") where it is the most allowed."""
    kept = cal.run.kept_global_batch
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


def break_even_lines(advice: AdviceView) -> list[str]:
    """The break-even's sentences; none where none is sought."""
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
    said = family_sentence(
        cal.model.family,
        found,
        batch=run.batch,
        kept=run.kept_global_batch,
        weak=weak(evidence),
        target=cal.search.target_efficiency,
        params=cal.model.spec.params,
        benched=cal.runs.evidence is not None,
        strategy=run.strategy,
    )
    return [*lines, f"{said}{to_test(evidence)}."]


def family_sentence(
    basis: FamilyBasis | None,
    found: BreakEven,
    *,
    batch: int,
    target: float,
    params: float,
    kept: int | None = None,
    weak: bool = False,
    benched: bool = True,
    strategy: str = "ddp",
) -> str:
    """The break-even sizes of the model's family (its basis said) at per-device ``batch``
    (or the global batch ``kept``), the ``target`` efficiency's too, and where this model's
    own step says otherwise of its size, both with why (``weak``: the runs are weak)."""
    return sentence(
        "break_even_family",
        basis=basis,
        found=found,
        strategy=strategy_name(strategy),
        batch=batch,
        kept=kept,
        weak=weak,
        target=target,
        smallest=SMALLEST_SEARCHED,
        params=params,
        benched=benched,
        disagrees=basis is not None and found.own_disagrees(params),
    )

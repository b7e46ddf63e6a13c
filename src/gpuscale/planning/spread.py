"""Sentences where a plan's own rows would puzzle a reader, each computed from the rows
and the fits: a count whose calibrated interval excluded the family's own results there
(the interval is widened to hold them, each as the plan's definition of the workload
moves it; say which, and what the planned time is), a cited result outside a count's
interval or a count planned slower than fewer devices ran, or faster than more ran (say
why: an older round, another definition of the workload, the family's level), and a
global batch that falls as the count grows (say where it comes from)."""

from __future__ import annotations

import math
from itertools import pairwise

from gpuscale.planning.predict import (
    ANCHOR_PRIOR,
    at_definition,
    at_round,
    definition_factor,
    log2_batch,
    typical_log2_batch,
)
from gpuscale.planning.records import FamilyFit, PlanRow, WorkloadFit, counts_run
from gpuscale.planning.throughput import more_than_shown
from gpuscale.quantities import (
    agreeing,
    counted,
    decimals_apart,
    filled,
    format_minutes,
    joined,
    named,
    noun_for,
    number,
)


def _min(value: float, high: float | None = None) -> str:
    """Minutes to 4 significant digits, as the table and its "lean on" lines show them
    (16,420 min, never 1.642e+04), with a long time's hours or days (``format_minutes``);
    with ``high``, an interval."""
    return format_minutes(value, high, 4)


def _minutes(values: list[float]) -> str:
    low, high = min(values), max(values)
    return _min(low) if low == high else _min(low, high)


def _definition(fit: WorkloadFit, since: str) -> str:
    """``v5.0's definition of stable_diffusion (not v3.1's: their reference convergence
    points differ)``: the plan's, against a result of round ``since``."""
    return (
        f"{fit['round']}'s definition of {fit['workload']} (not {since}'s: their reference "
        "convergence points differ)"
    )


def _level_since(
    fit: WorkloadFit, own: FamilyFit, since: str, batch: float, *, definition: bool = True
) -> str:
    """How far the fit moves the family's level from round ``since`` to the plan's, and,
    where the plan's definition of the workload is not ``since``'s (another era: its
    reference convergence points moved) and ``definition``, how that moves a time at
    global batch ``batch`` (the era's level step and the samples to converge by each
    round's RCPs: ``predict.definition_factor``)."""
    level_round = fit["round"]
    step = at_round(own["round_level"], level_round) - at_round(own["round_level"], since)
    change = math.exp(step) - 1
    how = "within 1% of its level"
    if abs(change) >= 0.005:
        how = f"{abs(change) * 100:.0f}% {'faster' if change < 0 else 'slower'} than"
    text = (
        f"the plan is at {level_round}'s level, where the fit puts the family {how} in "
        f"{since} (each round's step, fitted on all the family's results, is shrunk towards "
        "none by how many results support it)"
    )
    if not definition or at_round(fit["era"], since) == at_round(fit["era"], level_round):
        return text
    factor = definition_factor(fit, since, batch)
    return text + (
        f", and at {_definition(fit, since)}, where its level step and samples to converge "
        f"make a time at a global batch of {number(batch)} x{factor:.3f} of one at {since}'s"
    )


def _converted(held: list, converted: list[float], at: str) -> str:
    """``x0.495 at v5.0's definition ...: 10.00 min``: how the plan's definition (``at``)
    moves the results ``held`` (their minutes ``converted`` to it), one factor, or the
    range of them."""
    factors = sorted({f"{c / float(s[4]):.3f}" for s, c in zip(held, converted, strict=True)})
    factor = factors[0] if len(factors) == 1 else f"{factors[0]}-{factors[-1]}"
    return f"x{factor} at {at}: {_minutes(converted)}"


def held_notes(fit: WorkloadFit, family: str, rows: list[PlanRow]) -> list[str]:
    """One sentence per count whose calibrated interval excluded one of the family's own
    newest results there (``own_results``: the interval now holds them), each at the plan's
    definition of the workload (``own_converted``): a result of another definition is
    said as it ran and as that definition moves it."""
    own = fit["families"].get(family)
    out = []
    for r in rows:
        held = r.get("own_results") or []
        if not held or not math.isfinite(r["time_to_train_min"]):
            continue
        converted = r.get("own_converted") or [float(s[4]) for s in held]
        low, high = r["calibrated_low"], r["calibrated_high"]
        outside = sorted(
            (p for p in zip(held, converted, strict=True) if not low <= p[1] <= high),
            key=lambda p: p[1],
        )
        if not outside:
            continue
        n, k, since = int(r["accelerators"]), len(held), held[0][0]
        moved = definition_moves(fit, since)
        cited = joined(
            f"{s[0]} {named(s[1], s[2])} ({_min(s[4])}"
            + (f"; {_min(c)} at {fit['round']}'s" if moved else "")
            + ")"
            for s, c in outside[:3]
        )
        what = agreeing(k, "own result", f"{k} own results")
        them = agreeing(k, "it", "them")
        ran = _minutes([s[4] for s in held])
        if moved:
            ran += f", {_converted(held, converted, at=_definition(fit, since))}"
        text = (
            f"At {n:,}, {family}'s {what} of {since} there ran {ran}, outside the "
            f"calibrated interval {_min(low, high)}, so the interval is widened to "
            f"{_min(r['time_to_train_min_low'], r['time_to_train_min_high'])} to "
            f"hold {them}: the planned {_min(r['time_to_train_min'])} is the family's "
            f"level there (the model's line moved {k}/{k + ANCHOR_PRIOR:g} of the way to "
            f"{agreeing(k, 'it', 'their mean')}), and one system's time at a count spreads "
            f"wider with its CPUs, software and submitter; outside: {cited}"
        )
        if own and since != fit["round"]:
            text += "; " + _level_since(fit, own, since, r["global_batch"], definition=False)
        out.append(text + ".")
    return out


def definition_moves(fit: WorkloadFit, since: str) -> bool:
    """Whether round ``since``'s definition of the workload is not the plan's (another
    era: its reference convergence points moved)."""
    return at_round(fit["era"], since) != at_round(fit["era"], fit["round"])


def _typical(fit: WorkloadFit, n: float) -> float:
    return 2 ** typical_log2_batch(fit, math.log2(n))


def _ratio_how(fit: WorkloadFit, family: str, n: int) -> str:
    """How the family's ratio to the typical batch at ``n``, a count it never ran, is had:
    interpolated between its own at the counts around ``n``, or held from the nearest."""
    own = fit["families"][family]["batch"]
    ran = [round(2**x) for x in own["log2_n"]]
    ratio = {m: 2**y / _typical(fit, m) for m, y in zip(ran, own["log2_b"], strict=True)}
    below, above = [m for m in ran if m < n], [m for m in ran if m > n]
    if below and above:
        lo, hi = max(below), min(above)
        k = decimals_apart(ratio[lo], ratio[hi])
        return (
            f"interpolated between its own at {lo:,} ({ratio[lo]:.{k}f}) and at {hi:,} "
            f"({ratio[hi]:.{k}f})"
        )
    m = max(below) if below else min(above)
    return f"held from its own at {m:,}"


def _pooled(fit: WorkloadFit, n: int) -> tuple[float, list[int]] | None:
    """The families' median batch at ``n`` (a count run) and the counts the typical batch
    there was pooled with to never fall as the count grows (``planning.workload``); None
    where it is that count's median alone (or the fits predate the pooling)."""
    curve = fit["batch_curve"]
    medians = curve.get("log2_b_median")
    counts = [round(2**x) for x in curve["log2_n"]]
    if medians is None or n not in counts:
        return None
    at = counts.index(n)
    if math.isclose(medians[at], curve["log2_b"][at], abs_tol=1e-9):
        return None
    level = curve["log2_b"][at]
    pooled = [c for c, y in zip(counts, curve["log2_b"], strict=True) if math.isclose(y, level)]
    return 2 ** medians[at], pooled


def _source(fit: WorkloadFit, n: int) -> str:
    """Where the workload's typical batch at ``n`` comes from."""
    by = [f for f, fam in fit["families"].items() if str(n) in fam["counts"]]
    if not by:
        return "interpolated between the counts run"
    more = more_than_shown(len(by), "other")
    source = f"the median of the newest choices of {joined(sorted(by)[:3])}{more} there"
    pooled = _pooled(fit, n)
    if pooled:
        median, counts = pooled
        source = (
            f"{source}, {median:,.0f}, pooled with the counts "
            f"{counts[0]:,}-{counts[-1]:,} so that it never falls as the count grows"
        )
    return source


def _end(fit: WorkloadFit, family: str, n: int, ran: bool, ratio: str) -> str:
    """What the global batch assumed at ``n`` is: the family's own choice, or the
    workload's typical batch times the family's ratio to it."""
    typical = f"{round(_typical(fit, n)):,}"
    if ran:
        return (
            f"at {n:,} it is {family}'s own newest submissions' batch, {ratio} of the "
            f"workload's typical {typical}"
        )
    return (
        f"at {n:,}, which {family} never ran, it is the workload's typical batch there, "
        f"{typical} ({_source(fit, n)}), times {ratio}, {family}'s ratio to it "
        f"{_ratio_how(fit, family, n)}"
    )


def _change(what: str, a: float, b: float, decimals: int) -> tuple[int, str]:
    """(-1 falls, 0 reads alike, 1 rises; how ``what`` goes from ``a`` to ``b``), the
    values to the decimals that tell them apart."""
    k = decimals_apart(a, b, decimals=decimals)
    sa, sb = f"{a:,.{k}f}", f"{b:,.{k}f}"
    if sa == sb:
        return 0, f"{what} is {sa} at both"
    if b < a:
        return -1, f"{what} falling from {sa} to {sb}"
    return 1, f"{what} rising from {sa} to {sb}"


def batch_drop_notes(fit: WorkloadFit, family: str, rows: list[PlanRow]) -> list[str]:
    """Where the global batch assumed falls from one count to the next larger one: the
    family's own choices, or the workload's typical batch (and which families ran it)
    times the family's ratio to it, said with which of the two falls (at a count the
    family ran, its own choice is the typical batch times its ratio there, so the batch
    assumed is the typical one times the ratio at every count)."""
    own = fit["families"].get(family)
    ran = set(counts_run(own))
    timed = [r for r in rows if math.isfinite(r["time_to_train_min"])]
    out = []
    for a, b in pairwise(timed):
        if not b["global_batch"] < a["global_batch"]:
            continue
        na, nb = int(a["accelerators"]), int(b["accelerators"])
        text = (
            f"The global batch assumed falls from {number(a['global_batch'])} at {na:,} to "
            f"{number(b['global_batch'])} at {nb:,}: "
        )
        moved = [
            f"{r['assumed_batch']:,.0f} -> {r['global_batch']:,} at {int(r['accelerators']):,}"
            for r in (a, b)
            if abs(r["assumed_batch"] - r["global_batch"]) >= 0.5
        ]
        chose = "these batches"
        if moved:
            chose = f"{a['assumed_batch']:,.0f} and {b['assumed_batch']:,.0f}"
        if _rounding_falls(a, b):  # most of the fall is the rounding's: said first
            text += (
                f"mostly by the rounding to a batch a user can run ({joined(moved)}: "
                f"{RUNNABLE}); the batch the model assumes falls {_fall(a, b)}: "
            )
            moved = []
        if {na, nb} <= ran:
            out.append(
                text + f"{family}'s own newest submissions chose {chose}"
                f"{filled('; rounded to a batch a user can run, {}', joined(moved))}."
            )
            continue
        if not b["assumed_batch"] < a["assumed_batch"]:  # the rounding's, not the model's
            out.append(
                text + f"the batch the model assumes does not fall ({a['assumed_batch']:,.2f} "
                f"-> {b['assumed_batch']:,.2f}); rounded to one a user can run at each count "
                f"({RUNNABLE}), it does."
            )
            continue
        ta, tb = _typical(fit, na), _typical(fit, nb)
        if not own:
            _, how = _change("the workload's typical batch", ta, tb, 0)
            out.append(
                text + f"{family} never ran the workload, so its batch is {how} "
                f"({_source(fit, nb)} at {nb:,})."
            )
            continue
        # the rows' batches are whole samples: the ratios are the model's own
        ra, rb = (2 ** log2_batch(fit, own, math.log2(n)) / _typical(fit, n) for n in (na, nb))
        k = decimals_apart(ra, rb)
        ends = [
            _end(fit, family, na, na in ran, f"{ra:.{k}f}"),
            _end(fit, family, nb, nb in ran, f"{rb:.{k}f}"),
        ]
        moves = [
            _change(f"{family}'s ratio to the typical batch", ra, rb, 2),
            _change("the typical batch", ta, tb, 0),
        ]
        falls = [how for way, how in moves if way < 0]
        others = [how for way, how in moves if way >= 0]
        why = filled("; the fall is {}", joined(falls)) + filled(" ({})", falls and joined(others))
        why += filled("; rounded to a batch a user can run, {}", joined(moved))
        out.append(text + "; ".join(ends) + f"{why}.")
    return out


# what the plan rounds the batch assumed to at each count (``predict.runnable_batch``)
RUNNABLE = "a whole per-device batch, or (model parallel) m samples per k devices"


def _rounding_falls(a: PlanRow, b: PlanRow) -> bool:
    """Whether rounding to a runnable batch makes most (in log) of the planned batch's
    fall from row ``a`` to ``b``: the assumed batch falls, less than half as far."""
    planned = math.log(a["global_batch"] / b["global_batch"])
    return 0 < math.log(a["assumed_batch"] / b["assumed_batch"]) < planned / 2


def _fall(a: PlanRow, b: PlanRow) -> str:
    """``1.3% (5,870 -> 5,793)``: how far the assumed batch falls from ``a`` to ``b``."""
    x, y = a["assumed_batch"], b["assumed_batch"]
    pct = 100 * (1 - y / x)
    return f"{pct:.{decimals_apart(pct, 0.0, decimals=1)}f}% ({x:,.0f} -> {y:,.0f})"


def _why_outside(fit: WorkloadFit, family: str, row: PlanRow, cited: dict) -> str:
    """Why a result the plan cites at its own count lies outside the count's interval: an
    older round, another definition of the workload (the interval holds the result as the
    plan's definition moves it), or one system's spread."""
    own = fit["families"].get(family)
    newest = row.get("own_results") or []
    if newest and cited["round"] != newest[0][0]:
        holds = "holds"
        if definition_moves(fit, newest[0][0]):
            holds = f"holds at {fit['round']}'s definition"
        return (
            f"it is of {cited['round']}, older than the family's {newest[0][0]} "
            f"{noun_for(len(newest), 'result')} at this count "
            f"({_minutes([s[4] for s in newest])}), which the count's level is anchored on "
            f"and the interval {holds}; "
            f"{_level_since(fit, own, cited['round'], row['global_batch'])}"
        )
    same = [
        (s, c)
        for s, c in zip(newest, row.get("own_converted") or [], strict=True)
        if (s[1], s[2], round(float(s[4]), 3)) == cited_key(cited)
    ]
    if same and definition_moves(fit, cited["round"]):
        at = f"{fit['round']}'s (their reference convergence points differ)"
        return (
            f"it ran at {cited['round']}'s definition of {fit['workload']}: "
            f"{_converted([s for s, _ in same], [c for _, c in same], at)}, which the "
            f"interval holds; {_level_since(fit, own, cited['round'], 0, definition=False)}"
        )
    return "one system's time at a count spreads wider with its CPUs, software and submitter"


def cited_key(cited: dict) -> tuple[str, str, float]:
    """(submitter, system, minutes to 3 decimals) of a result a count leans on, as its
    systems entry gives them."""
    return cited["submitter"], cited["system"], round(float(cited["time_to_train_min"]), 3)


def cited_notes(fit: WorkloadFit, family: str, rows: list[PlanRow]) -> list[str]:
    """One sentence per result a count leans on (``nearest``, at that very count) that
    lies outside the count's interval, with why (an older round, another family), and one
    per count planned slower than a result of the family on fewer devices
    (``faster_fewer``, :func:`gpuscale.planning.result.faster_fewer`), with the plan at
    that result's count."""
    out, others = [], {}
    for r in rows:
        if not math.isfinite(r["time_to_train_min"]):
            continue
        n, low, high = (
            int(r["accelerators"]),
            r["time_to_train_min_low"],
            r["time_to_train_min_high"],
        )
        for s in r["nearest"]:
            # the cited minutes are rounded to 3 decimals
            if s["accelerators"] != n or low - 1e-3 <= s["time_to_train_min"] <= high + 1e-3:
                continue
            if s["family"] != family:  # a family that never ran it leans on others'
                others.setdefault(n, []).append(s["family"])
                continue
            out.append(
                f"Cited at {n:,}: {s['round']} {named(s['submitter'], s['system'])} "
                f"({_min(s['time_to_train_min'])}), outside the interval "
                f"{_min(low, high)}: {_why_outside(fit, family, r, s)}."
            )
        out += [
            _against_note(fit, family, r, *pair, fewer=fewer)
            for fewer, pair in ((True, r.get("faster_fewer")), (False, r.get("slower_more")))
            if pair
        ]
    if others:
        families = sorted({f for fs in others.values() for f in fs})
        out.insert(
            0,
            f"Of the results cited at {joined(f'{n:,}' for n in others)}, "
            f"{sum(map(len, others.values())):,} of other families ({joined(families)}) lie "
            f"outside the {noun_for(len(others), 'interval')} there: {family} never ran "
            f"{fit['workload']}, so they show what ran there, not its level.",
        )
    return out


def _against_note(
    fit: WorkloadFit, family: str, row: PlanRow, entry: list, planned: float, *, fewer: bool
) -> str:
    """Why the plan at ``row``'s count is slower than the family ran on fewer devices
    (``fewer``: ``result.faster_fewer``) or faster than it ran on more
    (``result.slower_more``): the result's definition of the workload, where it is not the
    plan's (the plan's definition moves it: ``predict.definition_factor``), then the plan
    at the result's count (``planned``) against the result and against the plan at ``n``."""
    n, m, ran = int(row["accelerators"]), int(entry[3]), float(entry[4])
    minutes = row["time_to_train_min"]
    text = (
        f"At {n:,} the planned {_min(minutes)} is {'slower' if fewer else 'faster'} than "
        f"{family} ran on {counted(m, 'device')} ({entry[0]} {named(entry[1], entry[2])}, "
        f"{_min(ran)}): "
    )
    if definition_moves(fit, entry[0]):
        converted = at_definition(fit, entry, row["global_batch"])
        at = f"{fit['round']}'s (their reference convergence points differ)"
        text += (
            f"that result ran at {entry[0]}'s definition of {fit['workload']}: "
            f"{_converted([entry], [converted], at)}, "
        )
        if (converted >= minutes) if fewer else (converted <= minutes):
            return text + f"{'no faster' if fewer else 'no slower'} than the plan at {n:,}."
        text += f"still {'faster' if fewer else 'slower'}; "
        ran = converted
    gap = 1 - ran / planned if fewer else ran / planned - 1
    if (planned > minutes) if fewer else (planned < minutes):
        return text + (
            f"that result is {100 * gap:.0f}% {'faster' if fewer else 'slower'} than the "
            f"plan at {m:,} "
            f"({_min(planned)}), the family's level there with its other results and the "
            f"shared shape; the plan at {n:,} follows that level, not the one result."
        )
    low, high = (m, n) if fewer else (n, m)
    return text + (
        f"the plan at {m:,} is {_min(planned)}, {'faster' if fewer else 'slower'} than at "
        f"{n:,} too: the model's line gives no speed-up from {low:,} to {high:,} (more "
        "devices are planned slower, a count not worth buying)."
    )


def evidence_notes(fit: WorkloadFit, family: str, rows: list[PlanRow]) -> list[str]:
    """What the family's level rests on and how much wider its intervals are for it
    (``predict.evidence``): said wherever the widening shows at two decimals, and where the
    level rests on one or two (submitter, round) pairs even without one, so that the
    factors the interval note gives times this widening are the intervals planned."""
    timed = [r for r in rows if math.isfinite(r["time_to_train_min"]) and "evidence" in r]
    if timed and timed[0]["count_class"] == "iii":
        return _transfer_note(fit, family, timed)
    if not timed or not timed[0]["evidence"]["pairs"]:
        return []
    e = timed[0]["evidence"]
    wide = max(r["evidence_factor"] for r in timed)
    if e["pairs"] > 2 and f"{wide:.2f}" == "1.00":
        return []
    stack = ", one submitter's software stack, not a consensus" if e["submitters"] == 1 else ""
    said = (
        f"The plan rests on {counted(e['results'], 'result')} of {fit['workload']} by "
        f"{counted(e['submitters'], 'submitter')} in {counted(e['rounds'], 'round')} for "
        f"{family}{stack}"
    )
    if f"{wide:.2f}" == "1.00":  # no widening to say (the class's prior for few is 0)
        return [f"{said}."]
    return [
        f"{said} ({counted(e['pairs'], '(submitter, round) pair')}): its intervals are up to "
        f"x{wide:.2f} as wide (in log) as the factors above, which hold where many "
        "submitters and rounds agree (sqrt(1 + prior / pairs): forecasts of levels resting "
        "on fewer pairs erred further, in the rounds the intervals are calibrated on)."
    ]


def _transfer_note(fit: WorkloadFit, family: str, timed: list[PlanRow]) -> list[str]:
    """What a level borrowed from other workloads (class iii) rests on, and how much wider
    its intervals are for it (``predict.transfer_factor``)."""
    k = timed[0]["evidence"]["workloads"]
    wide = timed[0]["evidence_factor"]
    how = f"sqrt(1 + 1/{k})"
    if wide > math.sqrt(1 + 1 / k) + 1e-9:  # the floor of a transfer from one workload
        how = "as far as a level from one other workload erred in sample, against from many"
    return [
        f"{family} never ran {fit['workload']}: its level is borrowed from "
        f"{counted(k, 'workload')} it ran, so its intervals are x{wide:.2f} as wide (in log) "
        "as the factor above for a family that never ran the workload, that of a level "
        f"borrowed from many ({how})."
    ]

"""The plan said in words, each sentence computed from the plan's rows and the fits:
which systems it rests on, which class each count is in, why throughput per device moves
as it does (the per-device batch), and why an interval is wide."""

from __future__ import annotations

import math

from gpuscale.hardware.ceilings import above_ceiling
from gpuscale.planning.crossing import borrowed_crossing
from gpuscale.planning.limits import NO_TIME
from gpuscale.planning.linear import linear_notes
from gpuscale.planning.memory import memory_check
from gpuscale.planning.predict import batch_grain, own_results, ran_batch, submitted_batch
from gpuscale.planning.records import (
    Facts,
    FamilyFit,
    Fits,
    PlanRow,
    SystemEntry,
    WorkloadFit,
    counts_run,
)
from gpuscale.planning.request import PlanRequest
from gpuscale.planning.spread import batch_drop_notes, cited_notes, evidence_notes, held_notes
from gpuscale.planning.terminal import (
    PLAN_SHOWN,
    nearest_text,
    outlier_lines,
    plan_document,
    plan_records,
)
from gpuscale.planning.throughput import (
    batch_sign,
    efficiency_note,
    per_device,
    samples_per_devices,
    time_turn_notes,
)
from gpuscale.plausibility import LOWEST_BOARD_POWER_W, under_floor
from gpuscale.quantities import counted, filled, format_minutes, joined, named, number, span
from gpuscale.tables.workloads import round_key

# the plan's rows as tables show them live in ``terminal``, imported from here too
__all__ = ["PLAN_SHOWN", "nearest_text", "plan_document", "plan_records"]

WIDE = math.log(1.25)  # an interval wider than +-25% is explained
CLASS_WORDS = {
    "i": "measured before (class i)",
    "ii_in": "not measured, between the family's counts (class ii)",
    "ii_out": "not measured, beyond the family's counts (class ii)",
    "iii": "on a workload the family never ran (class iii)",
}
# (class, below the family's counts) in the order the notes say them: a count of class
# ii_out below the family's counts is said apart from those beyond them
CLASS_ORDER = [("i", False), ("ii_in", False), ("ii_out", True), ("ii_out", False), ("iii", False)]
SHORT = {
    "i": "at counts measured before",
    "ii_in": "between them",
    "ii_out": "beyond them",
    "iii": "for a family that never ran the workload",
}


def _counts(values: list[int]) -> str:
    return ", ".join(f"{v:,}" for v in values)


def _accelerators(values: list[int]) -> str:
    """``1 accelerator``, ``1 and 16 accelerators``, ``1, 2 and 4 accelerators``."""
    return f"{joined(f'{v:,}' for v in values)} accelerator{'s' * (values != [1])}"


def _rounds(systems: list[SystemEntry]) -> str:
    rounds = sorted({s[0] for s in systems}, key=round_key)
    return span(rounds[0], rounds[-1])


def model_note(fit: WorkloadFit, family: str, speed_from: list[str]) -> str:
    """How the model was fitted and on what."""
    every = [s for f in fit["families"].values() for s in f["systems"]]
    families = counted(len(fit["families"]), "family")
    base = (
        f"Model: time = samples to converge at the batch / throughput, fitted on "
        f"{counted(len(every), 'result')} of {families} on "
        f"{fit['workload']} (rounds {_rounds(every)}, each result once): the shape of "
        "scaling shared by the families"
    )
    own = fit["families"].get(family)
    if own is None:
        return (
            f"{base}; no {family} system ran {fit['workload']}, so its level is borrowed "
            f"from its speed on {', '.join(speed_from) or 'other workloads'} against the "
            f"families that ran those too (class iii), at {fit['round']}'s level."
        )
    newest = max((s[0] for s in own["systems"]), key=round_key)
    level = (
        f"at {newest}'s level"
        if newest == fit["round"]
        else f"at its {newest} level (its newest results on {fit['workload']}: none later), "
        f"counted under {fit['round']}'s rules"
    )
    return (
        f"{base}, {family}'s own level from its {counted(len(own['systems']), 'result')} "
        f"(rounds {_rounds(own['systems'])}; each round's step shrunk towards no step by "
        f"how many results support it), {level}."
    )


def _runs(values: dict[str, object]) -> list[tuple[object, list[str]]]:
    """The rounds in order, grouped where consecutive ones share a value."""
    out: list[tuple[object, list[str]]] = []
    for r in sorted(values, key=round_key):
        if out and out[-1][0] == values[r]:
            out[-1][1].append(r)
        else:
            out.append((values[r], [r]))
    return out


def pooled_facts(fit: WorkloadFit) -> Facts:
    """What the fit pools: its rounds, each one's quality target (None: unknown) and era
    (its rules as the RCPs say), and whether rounds of different targets share one era
    (``targets_pooled``: no level step between them) or several eras are pooled."""
    rounds = sorted(fit["era"], key=round_key)
    targets = {r: (fit.get("targets") or {}).get(r) for r in rounds}
    known = [t for t in targets.values() if t is not None]
    eras = {r: int(fit["era"][r]) for r in rounds}
    mixed = any(
        len({targets[r] for r in rounds if eras[r] == e and targets[r] is not None}) > 1
        for e in set(eras.values())
    )
    return {
        "rounds": rounds,
        "targets": targets,
        "eras": eras,
        "targets_pooled": mixed,
        "eras_pooled": len(set(eras.values())) > 1,
        "distinct_targets": sorted(set(known)),
    }


def pooled_line(fit: WorkloadFit) -> str:
    """One line where the fit pools rounds of different quality targets or benchmark
    definitions (eras); "" where every round it rests on is alike."""
    facts = pooled_facts(fit)
    if facts["targets_pooled"]:
        groups = [
            f"{span(r[0], r[-1])} at {t:g}" for t, r in _runs(facts["targets"]) if t is not None
        ]
        return (
            f"Pools rounds of {fit['workload']} of different quality targets ({'; '.join(groups)}) "
            "with no level step between them (no reference convergence points size it): the "
            f"older results count as if run to {fit['round']}'s target."
        )
    if facts["eras_pooled"]:
        groups = [span(r[0], r[-1]) for _, r in _runs(facts["eras"])]
        return (
            f"Pools {counted(len(groups), 'definition')} of {fit['workload']} "
            f"({'; '.join(groups)}: their reference convergence points differ), each with a "
            f"level step of its own; the shape of scaling is shared, the plan at "
            f"{fit['round']}'s."
        )
    return ""


def borrowed_line(fits: Fits, workload: str, family: str) -> str:
    """Where a family that never ran ``workload`` has its level from (class iii): the
    workloads, rounds and submitters of its speed, and whether those submitters' software
    ran ``workload`` at all; "" where it ran it."""
    fit = fits["workloads"][workload]
    if family in fit["families"]:
        return ""
    parts, theirs = [], set()
    for name, other in sorted(fits["workloads"].items()):
        mine = (other["families"].get(family) or {}).get("systems") or []
        if name == workload or not mine:
            continue
        who = sorted({str(s[1]) for s in mine})
        theirs |= set(who)
        parts.append(f"{name} ({_rounds(mine)}, {joined(who)})")
    here = {str(s[1]) for f in fit["families"].values() for s in f["systems"]}
    # a submitter is one software stack: none of theirs on the workload, the level crosses
    crossing = borrowed_crossing(fits, workload, family)
    stack = filled(
        "; none of {}'s results are on " + workload + ": the level crosses software stacks",
        crossing["crosses_software_to"] and joined(crossing["crosses_software_from"].split(", ")),
    ) + filled(
        "; {} also submitted " + workload + " on other accelerators",
        joined(sorted(theirs & here)),
    )
    generations = filled(
        "; the families that ran it are of another hardware generation ({}): the level "
        "crosses hardware generations",
        crossing["crosses_generation_to"]
        and f"{joined(crossing['crosses_generation_to'].split(', '))}, not "
        f"{crossing['crosses_generation_from']}",
    )
    return (
        f"{family} never ran {workload}: its level is borrowed from its speed on "
        f"{joined(parts) or 'other workloads'}{stack}{generations}."
    )


# a fraction of devices per sample: the groups cannot be equal
UNEVEN = (
    "; where that is no whole number, the count is no multiple of the samples a step: "
    "groups of devices per sample of unequal size, or devices left idle (plan a multiple "
    "of the samples a step to run the submissions' split)"
)


def _moved(row: PlanRow, grain: int = 1) -> str:
    """``12: 61.25 per device -> 61 (a global batch of 732)``; model parallel, ``3,072:
    1 sample per 1.52 devices -> 3 samples per 4 devices (a global batch of 2,304)``, in
    groups of at least ``grain`` devices as the rounding's rule says (GPT-3's 2.5 per
    device ``10 samples per 4 devices``, not the lowest terms' ``5 per 2``)."""
    n, batch, assumed = int(row["accelerators"]), int(row["global_batch"]), row["assumed_batch"]
    if batch % n == 0 and assumed >= n:
        return (
            f"{n:,}: {assumed / n:,.2f} per device -> {batch // n:,} (a global batch of {batch:,})"
        )
    was = (
        f"1 sample per {n / assumed:,.2f} devices"
        if assumed < n
        else f"{assumed / n:,.2f} per device"
    )
    share = samples_per_devices(batch / n)
    if share and share[1] < grain:  # both powers of two: the same share in k >= grain
        share = (share[0] * grain // share[1], grain)
    now = (
        f"{share[0]:,} samples per {share[1]:,} devices"
        if share and share[0] > 1 and batch % n
        else per_device(batch / n)
    )
    return f"{n:,}: {was} -> {now} (a global batch of {batch:,})"


def _shares(rows: list[PlanRow]) -> tuple[dict[str, list[int]], bool]:
    """The counts of ``rows`` whose batch is below one sample per device, by how many
    devices share each sample (``3 samples per 4 devices``, ``8 devices per sample``), and
    whether any count is no multiple of its groups (uneven)."""
    shared: dict[str, list[int]] = {}
    uneven = False
    for r in rows:
        n, b = int(r["accelerators"]), int(r["global_batch"])
        if b >= n:
            continue
        share = samples_per_devices(b / n)
        if share is None:
            k, uneven = f"{n / b:,.2f} devices per sample", True
        elif share[0] == 1:
            k = f"{share[1]:,} devices per sample"
        else:
            k = f"{share[0]:,} samples per {share[1]:,} devices"
        shared.setdefault(k, []).append(n)
    return shared, uneven


def _rounded(fit: WorkloadFit, rows: list[PlanRow]) -> str:
    """How the batch assumed was rounded to one a user can run, at every count where it
    moved (``predict.runnable_batch``), and what a batch below one sample per
    device means."""
    timed = [r for r in rows if _timed(r) and r["global_batch"] == r["global_batch"]]
    moved = [r for r in timed if abs(r["assumed_batch"] - r["global_batch"]) >= 0.5]
    grain = batch_grain(fit)
    text = (
        ", rounded at each count it did not run to one a user can run: the nearest whole "
        "per-device batch (the global batch divides by the count), or below one sample per "
        "device the nearest whole number of samples a step (never a choice among the count's "
        "divisors)"
    )
    if grain > 1:  # model parallel: whole samples per group of k devices
        text = (
            ", rounded at each count it did not run to one a user can run: m samples per k "
            f"devices, k a power of two, at least {grain:,} ({fit['workload']}'s submissions "
            f"ran whole samples per {grain:,} devices), m whole, the nearest in log (model "
            "parallel: the global batch divides "
            "by the data-parallel size, the count over k, not by the count; never a choice "
            "among the count's divisors)"
        )
    if moved:  # every count: the notes are --explain's, the view that hides nothing
        text += f" ({'; '.join(_moved(r, grain) for r in moved)})"
    split = [  # above one per device, on a count no multiple of the groups' k
        int(r["accelerators"])
        for r in timed
        if grain > 1
        and not r.get("own_results")
        and int(r["accelerators"]) % grain
        and r["global_batch"] % r["accelerators"]
    ]
    text += filled(
        " ({}: no multiple of k, m x the count / k rounded to whole samples, groups of "
        "unequal size or devices left idle)",
        split and joined(f"{n:,}" for n in split),
    )
    text += ", and the time and samples to converge are at the batch planned"
    shared, uneven = _shares(timed)
    if shared:
        per = [float(s[5]) / int(s[3]) for f in fit["families"].values() for s in f["systems"]]
        said = [f"{k} at {joined(f'{n:,}' for n in c)}" for k, c in shared.items()]
        text += (
            f"; below one sample per device, as {fit['workload']}'s submissions ran down to "
            f"{per_device(min(per))}, devices share each sample (model or "
            f"tensor parallel: the batch per accelerator is not a per-device batch): "
            f"{joined(said)}{filled(UNEVEN, uneven)}"
        )
    return text


def _several(own: FamilyFit, asked: list[int]) -> str:
    """The counts asked where the family's newest results ran several global batches, and
    which the plan takes there (``predict.submitted_batch``); "" where none."""
    said = []
    for count in sorted(set(counts_run(own)) & set(asked)):
        held = own_results(own, count)
        ran = sorted({round(float(s[5])) for s in held if ran_batch(s)})
        if len(ran) > 1:
            said.append(f"{count:,}: {submitted_batch(held):,} of {joined(f'{b:,}' for b in ran)}")
    return filled(
        "; where a count's newest results ran several, the most common, else the fastest "
        "result's: {}",
        "; ".join(said),
    )


def batch_note(fit: WorkloadFit, family: str, rows: list[PlanRow] = ()) -> str:
    """Where the global batch and samples to converge come from, and how it was rounded
    to one a user can run."""
    own = fit["families"].get(family)
    where = "the workload's typical batch (the median of the families' choices)"
    if own:
        ran = sorted(round(2**x) for x in own["batch"]["log2_n"])
        asked = [int(r["accelerators"]) for r in rows]
        where = (
            f"the submissions' own at the counts {family} ran "
            f"({_counts(ran)}{_several(own, asked)}), "
            "unrounded (a batch a submission ran is runnable), elsewhere the "
            f"workload's typical batch times {family}'s ratio to it"
        )
    newest = (fit["rcp"] or {}).get(fit["round"])
    # what E(B) counts: the rows' convergence_unit (retinanet's RCPs are in epochs)
    unit = next((r["convergence_unit"] for r in rows if r.get("convergence_unit")), "samples")
    converge = (
        f"{unit} to converge E(B) from the {newest['source']}"
        if newest
        else "no reference convergence points: the batch's effect on convergence is not modelled"
    )
    return f"Global batch: {where}{_rounded(fit, list(rows))}; {converge}."


def class_notes(fit: WorkloadFit, family: str, rows: list[PlanRow]) -> list[str]:
    """Which counts are in which class, and what a count beyond the family's rests on."""
    out = []
    own = fit["families"].get(family)
    for kind, below in CLASS_ORDER:
        mine = [
            r for r in rows if r["count_class"] == kind and bool(r.get("below_counts")) == below
        ]
        counts = [int(r["accelerators"]) for r in mine]
        if not counts:
            continue
        words = CLASS_WORDS[kind].replace("beyond", "below") if below else CLASS_WORDS[kind]
        text = f"{counted(len(counts), 'count')} {words}: {_counts(counts)}"
        if kind in ("ii_in", "ii_out") and own:
            ran = counts_run(own)
            text += f" ({family} ran {_counts(ran)})"
        timed = [r for r in mine if _timed(r)]
        if kind in ("ii_out", "iii") and timed:
            text += "; " + _shape_support(fit, timed)
        out.append(text + ".")
    return out


def _shape_support(fit: WorkloadFit, rows: list[PlanRow]) -> str:
    """Which families' results (the planned family's own among them, as the systems each
    count leans on are) within an octave of the counts of ``rows`` the shape there rests
    on; where none, the counts those rows lean on (``nearest``), said as further away."""
    counts = [int(r["accelerators"]) for r in rows]
    low, high = min(counts), max(counts)
    near = {
        f: sum(n["all_systems"] for c, n in fam["counts"].items() if low / 2 <= int(c) <= high * 2)
        for f, fam in fit["families"].items()
    }
    near = {f: k for f, k in near.items() if k}
    if not near:
        leaned = sorted({int(s["accelerators"]) for r in rows for s in r["nearest"]})
        return (
            "no family of the workload ran counts within an octave of these (the nearest "
            f"leaned on ran {_accelerators(leaned)}): the shape is extrapolated"
        )
    most = sorted(near, key=lambda f: (-near[f], f))[:3]
    parts = [f"{counted(near[f], 'result')} of {f}" for f in most]
    rest = [f for f in near if f not in most]
    if rest:
        results = sum(near[f] for f in rest)
        parts.append(f"{counted(results, 'result')} of {counted(len(rest), 'other family')}")
    return (
        f"the shape there rests on the results at counts within an octave of these: {joined(parts)}"
    )


def outlier_notes(fit: WorkloadFit, family: str) -> list[str]:
    """The outliers left out of the fit (``gpuscale.analysis.outliers``): each of
    ``family``'s, and how many of the other families'."""
    left = fit.get("outliers", [])
    mine = [o for o in left if o[5] == family]
    out = [
        f"Left out of the fit as an outlier (one submitter's software, not the family's): "
        f"{o[0]} {named(o[1], o[2])} on {o[3]:,} ({format_minutes(o[4])}): {o[6]}."
        for o in mine
    ]
    if len(left) > len(mine):
        out.append(
            f"{counted(len(left) - len(mine), 'result')} of other families left out of the "
            f"fit as outliers (`gpuscale analyze -b {fit['workload']}` names them)."
        )
    return out


def _timed(row: PlanRow) -> bool:
    """Whether the row has a time (none where its flags say "no time")."""
    return math.isfinite(row["time_to_train_min"])


def flag_notes(rows: list[PlanRow]) -> list[str]:
    """One sentence per reason in the rows' ``flags`` (``gpuscale.planning.limits``),
    with the counts it applies to."""
    groups: dict[str, list[int]] = {}
    against: dict[int, tuple[int, float]] = {}
    for r in rows:
        for reason in filter(None, r["flags"].split("; ")):
            groups.setdefault(reason, []).append(int(r["accelerators"]))
            if reason.startswith("super-linear"):
                against[int(r["accelerators"])] = r["superlinear_reference"]
    out = []
    for reason, counts in groups.items():
        if reason.startswith(NO_TIME):
            out.append(f"No time at {_accelerators(counts)}: {reason.removeprefix(NO_TIME)}.")
        else:
            kind, _, why = reason.partition(": ")
            if kind == "super-linear":  # each count's ratio to the best smaller count's
                why += (
                    " ("
                    + "; ".join(
                        f"{c:,}: {against[c][1]:.2f}x the plan's at {against[c][0]:,}"
                        for c in counts
                    )
                    + ")"
                )
            out.append(
                f"Flagged {kind} at {_accelerators(counts)}: {why} (kept out of the "
                "Pareto front and the stops-paying picks)."
            )
    return out


FEW_FORECASTS = 20  # a class's coverage resting on fewer forecasts is said to be few


def coverage_facts(coverage: Facts | None, rows: list[PlanRow]) -> Facts:
    """Per class of the rows: the share of past forecasts of that class its 80% intervals
    covered and how many (``cache.bundled_coverage``: measured by the forward backtest of
    the bundled rounds), ``few`` under :data:`FEW_FORECASTS`; ``measured`` False (and
    no classes) where the fits are of data given, whose coverage no backtest measured."""
    if not coverage:
        return {"measured": False, "rounds": [], "classes": {}}
    kinds = dict.fromkeys(r["count_class"] for r in rows if _timed(r))
    measured = {k: coverage["classes"][k] for k in kinds if k in coverage["classes"]}
    return {
        "measured": True,
        "rounds": coverage["rounds"],
        "classes": {
            k: {
                "coverage_pct": c["coverage_pct"],
                "forecasts": c["forecasts"],
                "few": c["forecasts"] < FEW_FORECASTS,
            }
            for k, c in measured.items()
        },
    }


def coverage_notes(facts: Facts, rows: list[PlanRow]) -> list[str]:
    """One line per class of the rows: how often its 80% intervals held in the past."""
    timed = [r for r in rows if _timed(r)]
    if not timed:
        return []
    if not facts["measured"]:
        return [
            "80% intervals: their coverage is not measured on the data given (the forward "
            "backtest measures it on the bundled rounds only; `gpuscale plan` without a "
            "PATH says it there)."
        ]
    out = []
    rounds = span(facts["rounds"][min(1, len(facts["rounds"]) - 1)], facts["rounds"][-1])
    for kind, c in facts["classes"].items():
        counts = _counts([int(r["accelerators"]) for r in timed if r["count_class"] == kind])
        few = f"; it rests on {c['forecasts']}, few: a rough share" if c["few"] else ""
        out.append(
            f"80% interval at {counts} (count class {kind}): covered {c['coverage_pct']:.1f}% of "
            f"{counted(c['forecasts'], 'past forecast')} of this class (each round of "
            f"{rounds} forecast from the rounds before it){few}."
        )
    return out


def interval_notes(intervals: Facts, rows: list[PlanRow], rounds: list[str] = ()) -> list[str]:
    """The intervals' calibration, and why each wide one is wide; nothing where no count
    has a time (``plan -n 1`` of a workload none ran on 1 printed the calibration of
    intervals it did not give). ``rounds``: those of the data, in order."""
    if not any(_timed(r) for r in rows):
        return []
    later = filled(
        "none of the results of {} could be forecast from the rounds before it (their "
        "families and workloads not measured before)",
        len(rounds) > 1 and joined(rounds[1:]),
    )
    cases = sum(int(intervals.get(f"cases_{k}", 0)) for k in CLASS_WORDS)
    widths = ", ".join(
        f"{math.exp(intervals[k]):.2f} {words}" for k, words in SHORT.items() if k in intervals
    )
    how = (
        f"calibrated by forecasting each past round from the rounds before it "
        f"({counted(cases, 'forecast')})"
        if cases
        else f"{later or 'no earlier round in these data to forecast from'}, so the prior factors"
    )
    out = [
        f"80% intervals: the planned times multiplied or divided by a factor, {how}: "
        f"{widths}; beyond the family's counts the factor's log grows "
        f"{100 * intervals.get('widen', 0):.0f}% per octave."
    ]
    for r in rows:
        if r["half_width"] <= WIDE or not _timed(r):
            continue
        # without a forecast of a measured count in these data the factor is the prior's:
        # "the past forecasts erred this much" would cite forecasts never made
        measured = (
            "the past forecasts of measured counts erred this much"
            if intervals.get("cases_i")
            else f"{later or 'no earlier round in these data to forecast from'}, so the prior "
            "factor"
        )
        why = {
            "i": measured,
            "ii_in": "no system of the family ran this count",
            "ii_out": f"{r['octaves_outside']:.1f} octaves "
            f"{'below' if r.get('below_counts') else 'beyond'} the counts the family ran",
            "iii": "the family never ran the workload: its level is borrowed",
        }[r["count_class"]]
        out.append(
            f"The interval at {int(r['accelerators']):,} is wide "
            f"({format_minutes(r['time_to_train_min_low'], r['time_to_train_min_high'])}): "
            f"{why}."
        )
    return out


def notes(
    fits: Fits,
    workload: str,
    family: str,
    rows: list[dict],
    request,
    nodes: str = "",
    coverage: Facts | None = None,
) -> list[str]:
    """Every sentence of a plan, in order (``nodes``: the one on its devices per node;
    ``coverage``: the bundled rounds' measured interval coverage, None for data given)."""
    fit = fits["workloads"][workload]
    speed_from = sorted(w for w, other in fits["workloads"].items() if family in other["families"])
    out = [model_note(fit, family, speed_from)]
    out += [s for s in (pooled_line(fit), borrowed_line(fits, workload, family)) if s]
    out.append(batch_note(fit, family, rows))
    out += class_notes(fit, family, rows)
    out += outlier_notes(fit, family)
    out += outlier_lines(rows)  # the submitter a level rests on, an outlier elsewhere
    out += [s for s in (nodes,) if s]
    out.append(memory_check(workload, family, request.devices_per_node).note())
    out += flag_notes(rows)
    out += [s for s in (efficiency_note(fit, family, rows), batch_sign(fit)) if s]
    out += time_turn_notes(fit, family, rows)
    out += linear_notes(fit, family, rows)
    out += batch_drop_notes(fit, family, rows)
    rounds = sorted({r for w in fits["workloads"].values() for r in w["era"]}, key=round_key)
    out += interval_notes(fits.get("intervals") or {}, rows, rounds)
    out += coverage_notes(coverage_facts(coverage, rows), rows)
    out += evidence_notes(fit, family, rows)
    out += held_notes(fit, family, rows)
    out += cited_notes(fit, family, rows)
    if request.price_per_device_hour is not None:  # the cost column's unit: the price's
        out.append(
            f"Cost: accelerator hours x the price given ({request.price_per_device_hour:g} per "
            "accelerator-hour), in the price's currency."
        )
    if request.interconnect:
        out.append(f"Interconnect {request.interconnect!r} noted, not modelled.")
    return out


def typed_notes(request: PlanRequest) -> list[str]:
    """The numbers typed that cannot be true (``plausibility.under_floor``: a device's power
    in kW; ``hardware.ceilings``: in mW, or a node's), each flagged and left unused: said
    with how the names typed were read."""
    typed = {"power_w": request.power_w}
    under = [
        f"IMPLAUSIBLE: --power-w {number(watts)} W per device is under any accelerator's draw "
        f"while training (under {floor:g} W, a tenth of the lowest board power gpuscale knows, "
        f"{LOWEST_BOARD_POWER_W:g} W): no energy is computed from it; check the unit (--power-w "
        "is in W, not kW)."
        for _, watts, floor in under_floor(typed)
    ]
    above = [
        f"IMPLAUSIBLE: --power-w {number(watts)} W per device is above any accelerator's draw "
        f"(above {number(c.ceiling)} W, ten times the highest board power gpuscale knows, the "
        f"{c.of}'s {number(c.top)} W): no energy is computed from it; check the unit (--power-w "
        "is in W, not mW) and that it is one device's, not a node's."
        for c, watts in above_ceiling(typed)
    ]
    return [*under, *above]

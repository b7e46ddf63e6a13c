"""A plan from the fits, in plain Python: what ``gpuscale plan`` prints and
``gpuscale.plan`` turns into a DataFrame (``gpuscale.tables.plan.PLAN_COLUMNS``)."""

from __future__ import annotations

import math
from dataclasses import replace
from typing import TYPE_CHECKING

from gpuscale import criteria, quantities
from gpuscale.hardware.accelerators import other_variants
from gpuscale.hardware.ceilings import above_ceiling
from gpuscale.names import UnknownNameError, resolve_family, resolve_workloads, workload_read_as
from gpuscale.planning.cache import bundled_coverage, default_fits, fits_of
from gpuscale.planning.crossing import borrowed_crossing, linear_crossing, merged
from gpuscale.planning.intervals import evidence, transfer_factor
from gpuscale.planning.limits import (
    batch_below,
    batch_below_flag,
    batch_beyond,
    batch_flag,
    below_fewest,
    below_floor,
    far_flag,
    global_batch_beyond,
    global_batch_flag,
    reach,
    refusals,
    runnable_near,
    superlinear_flag,
    superlinear_reference,
)
from gpuscale.planning.linear import UNSUPPORTED, cell, judged
from gpuscale.planning.memory import memory_check
from gpuscale.planning.nodes import node_note, node_size, partial_nodes
from gpuscale.planning.predict import plannable, predict_point
from gpuscale.planning.records import (
    Facts,
    Fits,
    PlanResult,
    PlanRow,
    SystemEntry,
    WorkloadFit,
    systems_of,
)
from gpuscale.planning.request import MAX_DEVICES, PlanRequest
from gpuscale.planning.thin import thin_columns
from gpuscale.planning.words import (
    borrowed_line,
    coverage_facts,
    notes,
    pooled_facts,
    pooled_line,
    typed_notes,
)
from gpuscale.plausibility import under_floor
from gpuscale.tables import Criterion, measures
from gpuscale.tables.plan import NEAREST_SYSTEMS, Nearest
from gpuscale.tables.rounds import UNKNOWN_FAMILY
from gpuscale.tables.workloads import convergence_unit, round_key

if TYPE_CHECKING:
    import pandas as pd


class PlanError(ValueError):
    """Nothing in the data supports an answer; the message says why."""


# plan's keyword for another round's data, as a refusal says it
_PLAN_CALL = "plan(..., scores={round}.scores)"


def _system(entry: SystemEntry, family: str) -> Nearest:
    round_name, submitter, system, devices, minutes, _ = entry
    return Nearest(
        round=round_name,
        submitter=submitter,
        system=system,
        accelerators=int(devices),
        time_to_train_min=round(float(minutes), 3),
        family=family,
    )


def leaned_on(
    workload: WorkloadFit, family: str, n: int, k: int = NEAREST_SYSTEMS
) -> list[Nearest]:
    """The measured systems a count leans on: the family's at the count nearest ``n`` (in
    log), newest round first, fastest first; a family that never ran the workload, the
    workload's systems (any family) at the count nearest ``n``."""
    own = workload["families"].get(family)
    pool = (
        [(e, family) for e in own["systems"]]
        if own
        else [(e, f) for f, fit in workload["families"].items() for e in fit["systems"]]
    )
    gap = min(abs(math.log(e[3] / n)) for e, _ in pool)
    near = [(e, f) for e, f in pool if math.isclose(abs(math.log(e[3] / n)), gap)]
    near.sort(key=lambda p: (tuple(-v for v in round_key(p[0][0])), p[0][4]))
    return [_system(e, f) for e, f in near[:k]]


def _marks(n: list[float], minutes: list[float], threshold: float) -> tuple[list, list, Facts]:
    """(on the Pareto front, the criteria picking each count, what they picked over) over
    the counts asked: ``picked``, each count picked with its criteria, ``among`` the
    counts, E' against the plan at the first, ``reference``, the threshold's ``best``
    count and its E' (``best_normalized_efficiency``), so a reader sees why ``gpuscale
    analyze``, over one round's measured systems against its reference system, can pick
    another count."""
    if not n:
        return [], [], {}
    speedups = [measures.speedup(minutes[0], t) for t in minutes]
    efficiencies = [measures.efficiency(s, x) for s, x in zip(speedups, n, strict=True)]
    normalised = [
        measures.normalized_efficiency(s, x, n[0]) for s, x in zip(speedups, n, strict=True)
    ]
    hours = [measures.accelerator_hours(x, t) for x, t in zip(n, minutes, strict=True)]
    picks: dict[int, list[str]] = {}
    knee = None
    if len(n) >= 3:
        knee = criteria.kneedle([math.log10(x) for x in n], [math.log10(t) for t in minutes])
    chosen = [
        (Criterion.KNEE, knee),
        (Criterion.SPEED_X_EFFICIENCY, criteria.best_speed_x_efficiency(speedups, efficiencies)),
        (Criterion.EFFICIENCY_THRESHOLD, criteria.last_above_threshold(normalised, threshold)),
    ]
    for criterion, index in chosen:
        if index is not None:
            picks.setdefault(index, []).append(criterion.label(threshold))
    front = criteria.pareto_mask(minutes, hours)
    best = max(range(len(n)), key=lambda i: normalised[i])
    over = {
        # each count picked and the criteria picking it, smallest count first
        "picked": [{"accelerators": int(n[i]), "by": picks[i]} for i in sorted(picks)],
        "among": [int(x) for x in n],
        "reference": int(n[0]),
        "best": int(n[best]),
        "best_normalized_efficiency": normalised[best],
        "threshold": threshold,
    }
    return front, [", ".join(picks.get(i, [])) for i in range(len(n))], over


TIMES = ("time_to_train_min", "time_to_train_min_low", "time_to_train_min_high")
# a refused count: no time, no batch it assumed (blank, not a batch beside no time), no
# throughput, no cost
UNTIMED: dict[str, object] = dict.fromkeys(TIMES, math.nan) | {
    "global_batch": None,
    "batch_per_accelerator": math.nan,
    "expected_to_converge": math.nan,
    "convergence_factor": math.nan,
    "faster_fewer": None,
    "slower_more": None,
}


def faster_fewer(
    fits: Fits, workload: str, family: str, n: int, minutes: float
) -> tuple[SystemEntry, float] | None:
    """``(entry, plan there)``: the fastest result of ``family`` on fewer than ``n``
    devices (any round) that ran faster than ``minutes``, the time planned at ``n``, and
    the plan at that result's count; None where none did."""
    own = fits["workloads"][workload]["families"].get(family)
    fewer = [e for e in systems_of(own) if int(e[3]) < n and e[4] < minutes]
    if not fewer:
        return None
    entry = min(fewer, key=lambda e: e[4])
    return entry, predict_point(fits, workload, family, int(entry[3]))["time_to_train_min"]


def slower_more(
    fits: Fits, workload: str, family: str, n: int, minutes: float
) -> tuple[SystemEntry, float] | None:
    """``(entry, plan there)``: the slowest result of ``family`` on more than ``n`` devices
    (any round) that ran slower than ``minutes``, the time planned at ``n``, and the plan at
    that result's count; None where none did (the mirror of :func:`faster_fewer`)."""
    own = fits["workloads"][workload]["families"].get(family)
    more = [e for e in systems_of(own) if int(e[3]) > n and e[4] > minutes]
    if not more:
        return None
    entry = max(more, key=lambda e: e[4])
    return entry, predict_point(fits, workload, family, int(entry[3]))["time_to_train_min"]


def _plannable(fits: Fits, workload: str, family: str) -> None:
    """PlanError when ``family`` has no level on ``workload``."""
    if not plannable(fits, workload, family):
        raise PlanError(
            f"no {family} system ran {workload}, and no family that ran it shares another "
            f"workload with {family}: nothing supports a plan"
        )


def _rows(points: list[dict], request: PlanRequest, fits: Fits, workload: str, family: str):
    """The table's rows: each point with its derived columns and its flags
    (``gpuscale.planning.limits``: each a property of its count alone); a refused row has
    no time, no throughput and no cost, and only unflagged rows take part in the Pareto
    front and the "stops paying" picks."""
    fit = fits["workloads"][workload]
    data = reach(fit)
    n = [float(p["accelerators"]) for p in points]
    batch = [p["global_batch"] for p in points]  # runnable: predict.runnable_batch
    # refused on the batch assumed: rounding it up to one per device makes it no likelier
    memory = memory_check(workload, family, request.devices_per_node)

    def refused_at(p: PlanRow) -> list[str]:
        """Why a count has no time (its batch, its reach, its memory); empty: it has one."""
        m, near = int(p["accelerators"]), (None, None)
        if below_floor(m, p["assumed_batch"], data):  # the runnable counts nearest, said
            near = runnable_near(fits, workload, family, m)
        return refusals(m, p["assumed_batch"], data, near) + [
            why for why in [memory.refusal(m)] if why
        ]

    refused = [refused_at(p) for p in points]
    timed = [k for k, why in enumerate(refused) if not why]
    base = points[next(iter(timed), 0)]  # efficiency: against the smallest with a time
    efficiency = {k: math.exp(base["log_y"] - points[k]["log_y"]) for k in timed}
    against = {k: superlinear_reference(fits, workload, family, int(n[k])) for k in timed}
    beyond = {k: batch_beyond(fits, workload, points[k], data) for k in timed}
    above = {k: global_batch_beyond(fits, workload, points[k], data) for k in timed}
    below = {
        k: batch_below(fits, workload, family, points[k], data, lambda m: not memory.refusal(m))
        for k in timed
    }
    flags = []
    for k in range(len(points)):
        said = [*refused[k], far_flag(int(n[k]), data)]
        said.append(superlinear_flag(against.get(k), family not in fit["families"]))
        said.append(batch_flag(beyond.get(k), workload))
        said.append(batch_below_flag(below.get(k), workload))
        said.append(global_batch_flag(above.get(k), workload))
        flags.append(([w for w in said if w], efficiency.get(k, math.nan)))
    # faster than linear against a smaller count asked: explained, or flagged unsupported
    verdicts = judged(fit, points, timed)
    for k, verdict in verdicts.items():
        if verdict["flagged"]:
            flags[k][0].append(UNSUPPORTED)
        # the generation and software stack its support crosses (linear.cell says it)
        verdict["crossing"] = linear_crossing(fits, workload, family, verdict)
    borrowed = borrowed_crossing(fits, workload, family)  # class iii: every count's level
    kept = [k for k in timed if not flags[k][0]]
    front, stops, over = _marks(
        [n[k] for k in kept], [points[k]["time_to_train_min"] for k in kept], request.threshold
    )
    if len(kept) < 2:  # one count: none to stop paying against, no criterion named
        stops, over = [""] * len(kept), {}
    marked = {k: (bool(front[i]), stops[i]) for i, k in enumerate(kept)}
    price, power = request.price_per_device_hour, request.power_w
    if under_floor({"power_w": power}) or above_ceiling({"power_w": power}):  # a unit mistaken
        power = None
    # what expected_to_converge counts: the unit of the RCPs of the round the plan is at
    unit = convergence_unit(workload, fits["workloads"][workload]["round"])

    def timed_columns(k: int, p: PlanRow) -> dict[str, object]:
        """The columns a count with a time has (a refused count: ``UNTIMED``)."""
        return {t: p[t] for t in TIMES} | {
            "global_batch": batch[k],
            # as its schema says, of the global batch shown (it was of the fitted one:
            # 478.93 per device beside a global batch of 479 on one device)
            "batch_per_accelerator": batch[k] / n[k],
            "expected_to_converge": p["expected_to_converge"],
            "convergence_factor": base["convergence"] / p["convergence"],
            # a result of the family on fewer devices that ran faster than this plan
            "faster_fewer": faster_fewer(fits, workload, family, int(n[k]), p["time_to_train_min"]),
            # a result of the family on more devices that ran slower than this plan
            "slower_more": slower_more(fits, workload, family, int(n[k]), p["time_to_train_min"]),
        }

    rows = []
    for k, p in enumerate(points):
        at = timed_columns(k, p) if k in timed else UNTIMED
        hours = measures.accelerator_hours(n[k], at["time_to_train_min"])
        pareto, stops_paying = marked.get(k, (False, ""))
        rows.append(
            p
            | {t: at[t] for t in TIMES}
            | {
                "nodes": math.ceil(n[k] / request.devices_per_node),
                "global_batch": at["global_batch"],
                "batch_per_accelerator": at["batch_per_accelerator"],
                "expected_to_converge": at["expected_to_converge"],
                "convergence_unit": unit.value if unit else "",
                "throughput_efficiency": flags[k][1],
                "convergence_factor": at["convergence_factor"],
                "extrapolated": p["count_class"] in ("ii_out", "iii"),
                "nearest": leaned_on(fit, family, int(n[k])),
                "accelerator_hours": hours,
                "cost": measures.cost(hours, price),
                "energy_kwh": measures.energy_kwh(hours, power),
                "pareto": pareto,
                "stops_paying": stops_paying,
                "flags": "; ".join(flags[k][0]),
                "model_state_gb": state.total_gb if (state := memory.at(int(n[k]))) else math.nan,
                **thin_columns(fit, family, p["count_class"], int(n[k])),
                "beyond_linear": (
                    cell(points[verdicts[k]["against"]], p, verdicts[k]) if k in verdicts else ""
                ),
                "beyond_linear_verdict": verdicts.get(k),  # linear.linear_notes says it
                # the hardware generation and software stack its level or its
                # faster-than-linear support crosses (planning.crossing)
                **merged(borrowed, verdicts[k]["crossing"] if k in verdicts else {}),
                # (smaller count, ratio) the super-linear check held the count against
                "superlinear_reference": against.get(k),
                # the per-device batch above the most any system ran (limits.batch_beyond)
                "batch_beyond": beyond.get(k),
                # the per-device batch below the fewest any system ran (limits.batch_below)
                "batch_below": below.get(k),
                "faster_fewer": at["faster_fewer"],
                "slower_more": at["slower_more"],
            }
        )
    return rows, over


def _planned(
    counts: list[int], request: PlanRequest, fits: Fits, workload: str, family: str
) -> tuple[list[PlanRow], Facts]:
    """The rows of the plan of ``request`` at ``counts`` and what its picks picked over."""
    points = [predict_point(fits, workload, family, c) for c in counts]
    return _rows(points, replace(request, devices=tuple(counts)), fits, workload, family)


def _unflagged(rows: list[PlanRow]) -> list[int]:
    """The counts with a time and no flag: those the picks are among."""
    return [
        int(r["accelerators"])
        for r in rows
        if not r["flags"] and math.isfinite(r["time_to_train_min"])
    ]


# the octaves around a count asked tried for counts that let a plan pick (x1/16 to x16)
_OCTAVES = (-4, -3, -2, -1, 1, 2, 3, 4)
_MORE_TRIED = 3  # added counts tried beyond the fewest a pick needs (two to compare)


def _more_counts(
    rows: list[PlanRow], request: PlanRequest, fits: Fits, workload: str, family: str
) -> list[int]:
    """The counts asked with the fewest counts added whose plan picks one: the added from
    the counts any result of the workload ran and the smallest and the largest count asked
    without a flag (of any count asked, where none is unflagged) halved or doubled up to
    4 times, those planned without a flag among them all, the halved or doubled first,
    then the nearest (in log2), the larger on a tie; [] where none of those lets it pick."""
    asked = [int(r["accelerators"]) for r in rows]
    anchors = _unflagged(rows) or asked
    near = {round(c * 2.0**j) for c in (min(anchors), max(anchors)) for j in _OCTAVES}
    workload_fit = fits["workloads"][workload]
    ran = {int(e[3]) for f in workload_fit["families"].values() for e in f["systems"]}
    pool = {c for c in near | ran if 1 <= c <= MAX_DEVICES} - set(asked)
    # a count below the fewest samples per device run is flagged whatever else is asked
    # (and searching for its nearest smaller count that keeps them costs a plan each)
    data = reach(workload_fit)
    pool = {c for c in pool if not below_fewest(predict_point(fits, workload, family, c), data)}
    if not pool:
        return []
    tried, _ = _planned(sorted(set(asked) | pool), request, fits, workload, family)
    added = sorted(
        (c for c in _unflagged(tried) if c in pool),
        key=lambda c: (c not in near, min(abs(math.log2(c / a)) for a in anchors), -c),
    )
    need = 2 - len(_unflagged(rows))  # two counts to compare
    for k in range(need, min(len(added), need + _MORE_TRIED) + 1):
        counts = sorted(set(asked) | set(added[:k]))
        if _planned(counts, request, fits, workload, family)[1]:
            return counts
    return []


def no_pick(
    rows: list[PlanRow], request: PlanRequest, fits: Fits, workload: str, family: str
) -> Facts:
    """Why the plan picks no count, as a record: ``why`` ``one_count`` (one count with a time
    and no flag: nothing to compare it with), ``all_flagged`` (every count with a time
    flagged) or ``no_time`` (no count has one); the counts asked ``unflagged``,
    ``flagged`` (with a time) and ``untimed``; ``more``, the counts to ask for a pick
    (:func:`_more_counts`; [] where none was found)."""
    unflagged = _unflagged(rows)
    timed = [int(r["accelerators"]) for r in rows if math.isfinite(r["time_to_train_min"])]
    return {
        "why": "one_count" if unflagged else "all_flagged" if timed else "no_time",
        "unflagged": unflagged,
        "flagged": [c for c in timed if c not in unflagged],
        "untimed": [int(r["accelerators"]) for r in rows if int(r["accelerators"]) not in timed],
        "more": _more_counts(rows, request, fits, workload, family),
    }


def plan_result(
    request: PlanRequest,
    fits: Fits,
    left_out: dict[str, str] | None = None,
    coverage: Facts | None = None,
) -> PlanResult:
    """The plan of ``request`` from ``fits`` (``gpuscale.planning.cache``); ``left_out``:
    why the data's other workloads have no fit (``gpuscale.planning.systems.unplanned``),
    said where one is asked; ``coverage``: the measured coverage of the bundled rounds'
    intervals (``cache.bundled_coverage``), None for data given."""
    if not fits["workloads"]:
        raise PlanError(
            "no closed-division MLPerf result in the data given with all the plan reads: a "
            "time to train, an accelerator count, a global batch size and a named "
            "accelerator family (the plan is fitted on the closed division)"
        )
    try:  # the workloads as the rounds' scores name them (v1.1's ssd: ssd_resnet34)
        workload = resolve_workloads(
            [request.workload], list(fits["workloads"]), left_out, _PLAN_CALL
        )[0]
    except UnknownNameError as exc:  # named as the request's field (the CLI: its option)
        raise exc.as_field("workload") from None
    if workload not in fits["workloads"]:
        raise PlanError(f"no measured system of {workload} in the data given")
    families = sorted(
        {f for fit in fits["workloads"].values() for f in fit["families"]} - {UNKNOWN_FAMILY}
    )
    try:
        family, read_as = resolve_family(request.accelerator, families)
    except UnknownNameError as exc:
        raise exc.as_field("accelerator") from None
    _plannable(fits, workload, family)
    node = node_size(fits, family, request.devices_per_node)
    node["partial_last_node"] = partial_nodes(request.devices, node["devices_per_node"])
    # the nodes column and the memory check count with it (given, or the family's own)
    request = replace(request, devices_per_node=node["devices_per_node"])
    fit = fits["workloads"][workload]
    points = [predict_point(fits, workload, family, n) for n in request.devices]
    data = reach(fit)
    odd = [
        p["accelerators"]
        for p in points
        if not 0 < p["time_to_train_min"] < math.inf
        and not refusals(p["accelerators"], p["assumed_batch"], data)
    ]
    if odd:  # a number that cannot be true is a bug, never a plan
        raise PlanError(
            f"the model gives no finite positive time at {', '.join(map(str, odd))} devices "
            f"for {family} on {workload}: please report it"
        )
    rows, picked_over = _rows(points, request, fits, workload, family)
    own = fit["families"].get(family)
    systems = [_system(e, family) for e in systems_of(own)]
    model = {
        "workload": workload,
        "family": family,
        "round": fit["round"],
        "systems": len(systems),
        "workload_systems": fit["systems"],
        "workload_families": len(fit["families"]),
        "batch_slope": fit["batch_slope"],
        # the free fit's slope: where positive, ``batch_slope`` is held at 0 (said)
        "batch_slope_free": fit.get("batch_slope_free", fit["batch_slope"]),
        "intervals": fits.get("intervals", {}),
        "classes": [r["count_class"] for r in rows],
        "borrowed": own is None,
        # what the family's level rests on: results, submitters, rounds, (submitter, round)
        # pairs; borrowed (class iii): the workloads it ran, its speed's evidence
        "evidence": evidence(own)
        | ({} if own else {"workloads": transfer_factor(fits, family)[0]}),
        # the name asked, and the other parts of the results it could mean (``A100``:
        # read as A100-SXM4-80GB, also A100-PCIe-80GB and A100-SXM4-40GB)
        "accelerator_asked": request.accelerator,
        "could_also_mean": other_variants(request.accelerator, family, families) if read_as else [],
        "memory": memory_check(workload, family, request.devices_per_node).facts(),
        # the devices per node the nodes are counted with, and where it comes from
        "devices_per_node": node,
        # the rounds the fit pools, each one's quality target and era (``words.pooled_facts``)
        "pooled": pooled_facts(fit),
        # what ``stops_paying`` picked over: the counts, E' against which, the best E'
        # (``_marks``); {} where fewer than two counts take part
        "picks": picked_over,
        # why no count is picked, and the counts that would let it pick (``no_pick``);
        # None where one is
        "no_pick": None if picked_over else no_pick(rows, request, fits, workload, family),
        # per class of the rows: how often its 80% intervals covered past forecasts
        "interval_coverage": coverage_facts(coverage, rows),
    }
    said = notes(fits, workload, family, rows, request, node_note(node, family), coverage)
    held = sorted(fit["era"], key=round_key)
    span = quantities.span(held[0], held[-1])
    named = [workload_read_as(request.workload, workload, span), read_as, *typed_notes(request)]
    read = tuple(s for s in named if s)
    short = tuple(s for s in (pooled_line(fit), borrowed_line(fits, workload, family)) if s)
    return PlanResult(rows, [*read, *said], model, systems, read, short)


def plan_for(request: PlanRequest, scores: pd.DataFrame | None = None) -> PlanResult:
    """The plan of ``request`` on ``scores`` (a scores DataFrame; default: the bundled
    rounds, whose fits ship with the package: no pandas is imported)."""
    if scores is None:
        return plan_result(request, default_fits(), coverage=bundled_coverage())
    # lazy: pandas and the systems table, only for data given
    from gpuscale.planning.systems import COLUMNS, flagged_left_out, unplanned
    from gpuscale.tables.checks import check_columns, check_counts, check_frame, check_times

    check_frame(scores, "scores", "scores")  # a RoundTables given: TypeError, naming .scores
    if len(scores) == 0:
        raise PlanError("no MLPerf results in the data given")
    # the columns the fit reads, each said where lacking; an impossible time or count
    # refused as every table given is (gpuscale.tables.checks), not dropped unsaid
    check_columns(scores, COLUMNS, "scores", "scores")
    check_times(scores, "scores")
    check_counts(scores, "scores")

    result = plan_result(request, fits_of(scores), unplanned(scores))
    flagged = flagged_left_out(scores, result.model["workload"])
    return replace(result, notes=[*result.notes, *flagged])


__all__ = ["PlanError", "PlanResult", "plan_for", "plan_result", "resolve_family"]

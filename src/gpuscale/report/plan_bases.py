"""Where a report answers "where do more accelerators stop paying" twice, by the E'
threshold: the answer table (``gpuscale.analysis.answers``: the family of the most counts'
fastest measured system per count, E' against the best of them) and a plan's "stops
paying" column (``gpuscale.planning``: its planned times at the counts it plans, E'
against the best of those). One sentence beside the plan says each basis and, where the
two counts differ, what each basis gives at both counts, from both tables."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

import pandas as pd

from gpuscale.analysis.analyze import WorkloadAnalysis
from gpuscale.analysis.equilibrium import fastest_per_count
from gpuscale.quantities import filled, fixed_apart, format_minutes, joined
from gpuscale.tables import display_name

if TYPE_CHECKING:  # its types alone: the plan section imports the planning engine
    from gpuscale.report.plan_section import PlanData, PlanSection

LABEL = "E' >= "


def _threshold(label: str) -> float:
    """``0.8`` of ``E' >= 0.8 x best``."""
    return float(label.removeprefix(LABEL).split(" ")[0])


def planned_shares(table: pd.DataFrame) -> tuple[dict[int, float], tuple[int, str]]:
    """E' of each planned count without flags as a share of the best of them (the rows the
    plan's "stops paying" picks are made over), and the count its E' threshold pick marks
    with the pick's label (``(0, "")`` where it marks none)."""
    kept = table[(table["flags"] == "") & table["time_to_train_min"].notna()]
    if kept.empty:
        return {}, (0, "")
    n0, t0 = float(kept["accelerators"].iloc[0]), float(kept["time_to_train_min"].iloc[0])
    e = {
        int(n): n0 * t0 / (float(n) * float(t))
        for n, t in zip(kept["accelerators"], kept["time_to_train_min"], strict=True)
    }
    best = max(e.values())
    marked = [
        (int(n), part)
        for n, cell in zip(table["accelerators"], table["stops_paying"], strict=True)
        for part in str(cell).split(", ")
        if part.startswith(LABEL)
    ]
    return {n: v / best for n, v in e.items()}, next(iter(marked), (0, ""))


def measured_shares(result: WorkloadAnalysis, family: str) -> pd.DataFrame:
    """The family's fastest measured system per count, with ``share``: its E' as a share
    of the best E' of the family's systems (the answer table's basis, the same whatever
    the reference rule: within a family every E' moves by one factor)."""
    part = result.table[result.table["accelerator_family"] == family]
    frontier = fastest_per_count(part)
    best = float(part["normalized_efficiency"].max())
    return frontier.assign(share=frontier["normalized_efficiency"] / best).set_index(
        frontier["accelerators"].astype(int)
    )


def flagged(table: pd.DataFrame) -> dict[int, str]:
    """The plan's flagged counts, each with its flags' names (``super-linear``, ``no
    time``: each flag's words before its colon), as the table's ``flags`` column says."""
    return {
        int(n): joined(part.split(":")[0].strip() for part in str(cell).split("; "))
        for n, cell in zip(table["accelerators"], table["flags"], strict=True)
        if cell
    }


def _plan_at(n: int, plan: dict[int, float], flags: dict[int, str], t: float) -> str:
    """What the plan's basis gives at ``n``: its share, or why it has none there."""
    if n in plan:
        return f"the plan keeps {fixed_apart(plan[n], t)} of its best"
    if n in flags:
        return f"the plan's time is flagged ({flags[n]}) and kept out of its E'"
    return "the plan asks no such count"


def _at(
    n: int,
    plan: dict[int, float],
    flags: dict[int, str],
    measured: pd.DataFrame,
    family: str,
    rnd: str,
    t: float,
) -> str:
    """What each basis gives at ``n`` (shares to the digits that tell them from ``t``)."""
    words = [_plan_at(n, plan, flags, t)]
    if n in measured.index:
        row = measured.loc[n]
        words.append(
            f"{family}'s fastest measured ({row['system_name']}, "
            f"{format_minutes(row['time_to_train_min'])}) {fixed_apart(float(row['share']), t)}"
        )
    else:
        words.append(f"{family} ran no {n:,} in {rnd} (the plan's there is modelled)")
    return f"at {n:,} " + joined(words)


def _in_plan(count: int, plan: dict[int, float], flags: dict[int, str]) -> str:
    """What the plan says of ``count`` (the table's best), where it plans no time for it:
    ``, a count this plan flags (why)`` or ``, a count this plan does not ask``."""
    if count in plan:
        return ""
    if count in flags:
        return f", a count this plan flags ({flags[count]})"
    return ", a count this plan does not ask"


def bases_sentence(item: PlanData, result: WorkloadAnalysis) -> str:
    """The sentence beside ``item``'s plan (a ``PlanData``) on its E' threshold pick and
    the answer table's within the same family (``result``, the analysis of the plan's
    round): each basis, and where the counts differ, both bases at both counts; "" where
    either picks nothing or the table's family is another."""
    family = item.family
    pick = next((e.efficiency_threshold for e in result.by_family if e.scope == family), None)
    plan, (marked, plan_label) = planned_shares(item.table)
    if pick is None or not marked:
        return ""
    measured = measured_shares(result, family)
    top = measured.loc[measured["share"].idxmax()]
    planned = sorted(plan)
    best = max(plan, key=lambda n: plan[n])
    flags = flagged(item.table)
    out = filled("; {} flagged, kept out", joined(f"{n:,} ({why})" for n, why in flags.items()))
    name = f"{display_name(item.workload)} on {family}"
    head = (
        f"{name}, where more accelerators stop paying: this plan's {plan_label} marks "
        f"{marked:,}, the answer table's {pick.label} (How many accelerators?) picks "
        f"{int(pick.accelerators):,} within {family}. The plan's E' is of its planned times "
        f"against the best of the counts it plans without a flag "
        f"({joined(f'{n:,}' for n in planned)}: best at {best:,}{out}); the table's is of "
        f"{family}'s fastest measured system per count "
        f"in {result.round} against the best of them (at {int(top['accelerators']):,}, "
        f"{top['system_name']}, {format_minutes(top['time_to_train_min'])}"
    )
    head += _in_plan(int(top["accelerators"]), plan, flags) + ")"
    if marked == int(pick.accelerators):
        return head + ": both mark the same count."
    counts = {marked, int(pick.accelerators)}
    # why each stops where it does: the other's count, or where a basis has none there
    # the next count it has past its own pick
    if int(pick.accelerators) > marked and int(pick.accelerators) not in plan:
        counts |= set([n for n in planned if n > marked][:1])
    if marked > int(pick.accelerators) and marked not in measured.index:
        counts |= set([int(n) for n in measured.index if n > int(pick.accelerators)][:1])
    counts = sorted(counts)
    thresholds = {_threshold(plan_label), _threshold(pick.label)}
    t = min(thresholds)
    ats = [_at(n, plan, flags, measured, family, result.round, t) for n in counts]
    return (
        head + f". They differ as the bases do: {'; '.join(ats)} (the threshold "
        f"{joined(f'{t:g}' for t in sorted(thresholds))} x the best)."
    )


def with_bases(section: PlanSection | None, results: list[WorkloadAnalysis]) -> PlanSection | None:
    """``section`` (a ``PlanSection``) with :func:`bases_sentence` after each plan's words,
    against the analysis of its workload in the plan's round."""
    if section is None or not section.plans:
        return section
    findings = list(section.findings)
    for item in section.plans:
        result = next(
            (r for r in results if r.workload == item.workload and r.round == item.round), None
        )
        said = bases_sentence(item, result) if result is not None else ""
        if not said:
            continue
        start = f"{display_name(item.workload)} on {item.family}: "
        at = next((k for k, f in enumerate(findings) if f.startswith(start)), len(findings) - 1)
        findings.insert(at + 1, said)
    return replace(section, findings=findings)


__all__ = ["bases_sentence", "flagged", "measured_shares", "planned_shares", "with_bases"]

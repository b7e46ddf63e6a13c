"""Samples to converge that cannot be true, flagged where the scores are made.

A result's samples (or epochs, or steps) to converge is compared with what the workload's
reference convergence points (RCPs) needed in the round's ruleset, or, where that ruleset
has none (v0.7 has no RCPs), in the nearest ruleset whose RCPs count the same workload in
the same unit; and with the median of the round's other submitters. Published cases: v2.0
BERT, Baidu and Samsung log 1.0 (every other submitter ~2.5M samples); v0.7 BERT mixes
units across submitters (1 to 11,718); v3.1 3D U-Net, some submitters log epochs (~2,000)
where the ruleset's RCPs count samples (~400,000). A flagged value stays in the scores
table beside its reason (``samples_to_converge_flag``) and a problem row; the analysis
keeps it out of the decomposition, the findings, the per-sample rates and every pooled
convergence law of the intervals (``gpuscale.analysis.score_intervals``). A reference
run of the round's RCP files that cannot be true, which the RCP reader leaves out
(``rcp.rcp_runs``), is a problem row of the round too (:func:`rcp_problems`).
"""

from __future__ import annotations

import functools
import math
import statistics
from collections import defaultdict

from gpuscale.mlperf.benchmarks import workload_in_round
from gpuscale.mlperf.rcp import rcp_left_out, rcp_names, rcp_points
from gpuscale.mlperf.rules import known_rulesets, ruleset_for
from gpuscale.plausibility import SAMPLES_TO_CONVERGE_FACTOR
from gpuscale.quantities import agreeing, number, span
from gpuscale.tables import (
    RENAMED,
    ProblemKind,
    ProblemRow,
    Row,
    benchmark_of_folder,
    convergence_unit,
    problem_row,
    workload_of,
)


def samples_to_converge_flag(
    value: float,
    unit: str,
    references: tuple[float, float, str] | None,
    peers: list[float],
) -> str:
    """Why a result's samples (or epochs) to converge cannot be true, else "".

    ``references``: (least, most) mean convergence of the workload's RCPs and the ruleset
    they come from; ``peers``: the other submitters' values of the round (one each),
    compared only when there are at least two.
    """
    factor = SAMPLES_TO_CONVERGE_FACTOR
    if not (math.isfinite(value) and value > 0):
        return f"{value!r} is not a positive number"
    # "1 sample", never "1 samples" (v1.1's BERT logged 1 where millions were needed)
    shown = f"{number(value)} {agreeing(value, unit.removesuffix('s'), unit)}"
    if references is not None:
        low, high, ruleset = references
        if not low / factor <= value <= high * factor:
            return (
                f"{shown} is more than {factor:g}x outside what the reference convergence "
                f"points of ruleset {ruleset} needed ({span(number(low), number(high))} {unit}): "
                "another unit, or a logging error"
            )
    if len(peers) >= 2:
        middle = statistics.median(peers)
        if not middle / factor <= value <= middle * factor:
            return (
                f"{shown} is more than {factor:g}x from the median of the round's "
                f"{len(peers)} other submitters ({number(middle)} {unit}): another unit, "
                "or a logging error"
            )
    return ""


def _version(ruleset: str) -> tuple[int, ...]:
    return tuple(int(x) for x in ruleset.split("."))


def _distance(a: str, b: str) -> int:
    """How far apart two rulesets are, in minor versions (0.7.0 is nearer 1.0.0 than 1.1.0)."""
    (ma, na, _), (mb, nb, _) = _version(a), _version(b)
    return abs((ma * 100 + na) - (mb * 100 + nb))


@functools.lru_cache(maxsize=256)
def reference_range(round_name: str, folder: str) -> tuple[float, float, str] | None:
    """(least, most) mean samples to converge over the RCPs of the benchmark folder's
    workload, and their ruleset: the round's own, else the nearest ruleset whose RCPs
    count the same workload in the same unit; None without any."""
    ruleset, _ = ruleset_for(round_name)
    workload = workload_in_round(folder, round_name)
    unit = convergence_unit(workload, round_name)
    if ruleset is None or unit is None:
        return None
    name = benchmark_of_folder(folder)
    names = [name, *(old for old, new in RENAMED.items() if new == workload_of(name)), workload]
    for other in sorted(known_rulesets(), key=lambda r: _distance(r, ruleset)):
        other_round = "v" + other.rsplit(".", 1)[0]
        if workload_in_round(folder, other_round) != workload:
            continue
        if convergence_unit(workload, other_round) is not unit:
            continue
        for candidate in dict.fromkeys(names):
            points = rcp_points(other, candidate)
            if points:
                means = [mean for _, mean in points]
                return min(means), max(means), other
    return None


def flag_samples(round_name: str, rows: list[Row]) -> list[ProblemRow]:
    """Set each score row's ``convergence_unit`` and ``samples_to_converge_flag`` (its
    reason, "" when plausible); return a problem row for each flagged value."""
    by_workload: dict[str, list[Row]] = defaultdict(list)
    for row in rows:
        unit = convergence_unit(row["workload"], round_name)
        row["convergence_unit"] = str(unit or "")
        row["samples_to_converge_flag"] = ""
        if row.get("samples_to_converge") is not None:
            by_workload[row["workload"]].append(row)
    problems = []
    for group in by_workload.values():
        reasons = _reasons(round_name, group)
        for row, reason in zip(group, reasons, strict=True):
            if not reason:
                continue
            row["samples_to_converge_flag"] = reason
            where = f"{row['org']}/results/{row['system_id']}/{row['benchmark']}"
            problems.append(
                problem_row(
                    round_name,
                    where,
                    ProblemKind.IMPOSSIBLE_VALUE,
                    f"samples_to_converge: {reason}; kept out of the decomposition, the "
                    "findings, the per-sample rates and the intervals' pooled convergence "
                    "(the official score stands)",
                )
            )
    return problems + rcp_problems(round_name, {row["workload"] for row in rows})


def rcp_problems(round_name: str, workloads: set[str]) -> list[ProblemRow]:
    """A problem row for each reference run of the round's RCP files of ``workloads`` that
    the reader leaves out (``rcp.rcp_left_out``: more than 10x from its batch's median),
    its path the file's inside mlperf-logging (``rcp_checker/training_4.1.0/
    rcps_gpt3.json``), so a count left out is said, not silent."""
    ruleset, _ = ruleset_for(round_name)
    if ruleset is None:
        return []
    problems = []
    for workload in sorted(workloads):
        unit = convergence_unit(workload, round_name) or "samples (or epochs)"
        for name in rcp_names(workload, ruleset):
            for run in rcp_left_out(ruleset, name):
                problems.append(
                    problem_row(
                        round_name,
                        f"rcp_checker/training_{ruleset}/rcps_{name}.json",
                        ProblemKind.IMPOSSIBLE_VALUE,
                        f"a reference run at global batch {number(run.batch)}: "
                        f"{number(run.value)} {unit} to converge is more than "
                        f"{SAMPLES_TO_CONVERGE_FACTOR:g}x the median of the batch's "
                        f"{run.runs} runs ({number(run.median)}), a count that cannot be "
                        "true; left out of the reference convergence points (their means, "
                        "the convergence model E(B), the plan's expected samples and the "
                        "intervals' pools), as the RCP checker's olympic mean drops it",
                    )
                )
    return problems


def _reasons(round_name: str, group: list[Row]) -> list[str]:
    """The flag of each row of one workload: against the RCPs first, then against the
    other submitters' values that the RCPs do not flag (one per submitter, its median)."""
    against_rcps = []
    for row in group:
        references = reference_range(round_name, row["benchmark"])
        unit = row["convergence_unit"] or "(unknown unit)"
        against_rcps.append(
            samples_to_converge_flag(float(row["samples_to_converge"]), unit, references, [])
        )
    by_org: dict[str, list[float]] = defaultdict(list)
    for row, reason in zip(group, against_rcps, strict=True):
        if not reason:
            by_org[row["org"]].append(float(row["samples_to_converge"]))
    medians = {org: sorted(v)[len(v) // 2] for org, v in by_org.items()}
    out = []
    for row, reason in zip(group, against_rcps, strict=True):
        if not reason:
            peers = [m for org, m in medians.items() if org != row["org"]]
            unit = row["convergence_unit"] or "(unknown unit)"
            reason = samples_to_converge_flag(float(row["samples_to_converge"]), unit, None, peers)
        out.append(reason)
    return out

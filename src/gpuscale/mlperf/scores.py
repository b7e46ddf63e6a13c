"""The ``scores`` table: one official score per (system, benchmark folder).

Official MLPerf Training scoring is the olympic average of the runs' times to train.

Mirrors ``mlperf_logging.result_summarizer`` (``_compute_strong_score_standalone`` and
``_compute_olympic_average``):

* a run's time to train is ``(run_stop - run_start) / 60 / 1000`` minutes;
* a run whose log fails compliance (parse error, quality target missed, missing
  ``run_stop`` ...) is *dropped*, and counts as one of the runs the olympic rule drops
  at the slow end;
* with ``d`` runs dropped and ``k`` the olympic drop count (1; 4 for unet3d), the
  score is the mean of the sorted counted times ``t[k : n - (k - d)]``; more than ``k``
  dropped runs give no score;
* the mean is multiplied by the RCP ``scaling_factor`` of ``scaling.json`` (1 if absent).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pandas as pd

from gpuscale.mlperf.benchmarks import workload_in_round
from gpuscale.mlperf.rcp import olympic_samples
from gpuscale.mlperf.rules import (
    MAX_DROPPED_RUNS,
    benchmarks_of,
    result_file_counts,
    ruleset_for,
)
from gpuscale.tables import (
    SCORES_SCHEMA,
    SCORES_SYSTEM_COLUMNS,
    ProblemKind,
    benchmark_of_folder,
    frame_of,
    problem_row,
)


@dataclass(frozen=True, slots=True)
class OlympicResult:
    """A benchmark score and which runs it used.

    ``kept`` holds the positions (into the input list of times) of the runs the olympic
    rule averaged, in ascending time order; ``reason`` says why there is no score.
    """

    time_to_train_min: float | None
    kept: tuple[int, ...]
    reason: str


def olympic_score(
    times_min: list[float],
    dropped_runs: int,
    *,
    max_dropped_runs: int = 1,
    scaling_factor: float = 1.0,
) -> OlympicResult:
    """The official score of one (system, benchmark) from its counted runs' times.

    ``times_min`` are the counted runs (any order); ``dropped_runs`` the runs that did not
    count. Returns the score (already multiplied by ``scaling_factor``) or a reason.
    """
    if dropped_runs > max_dropped_runs:
        return OlympicResult(
            None,
            (),
            f"{dropped_runs} runs failed or did not converge; at most {max_dropped_runs} may",
        )
    order = sorted(range(len(times_min)), key=lambda i: times_min[i])
    kept = order[max_dropped_runs : len(order) - (max_dropped_runs - dropped_runs)]
    if not kept:
        return OlympicResult(
            None, (), f"too few counted runs ({len(times_min)}) for the olympic average"
        )
    countable = [times_min[i] for i in kept]
    score = sum(countable) * 1.0 / len(countable)
    return OlympicResult(score * scaling_factor, tuple(kept), "")


def _common_value(values: list[float | None]) -> float | None:
    """The value all runs agree on, else None (the RCP checker rejects a mix)."""
    distinct = set(values)
    if len(distinct) != 1 or None in distinct:
        return None
    value = distinct.pop()
    return None if value != value else float(value)  # NaN: not logged


def _unscored(result: OlympicResult) -> OlympicResult:
    return OlympicResult(None, (), result.reason)


@dataclass(frozen=True, slots=True)
class ScoredRound:
    """The scores table, which runs the olympic rule kept (aligned with ``runs``), and
    the problems met while scoring."""

    scores: pd.DataFrame
    kept: list[bool]
    problems: list[dict[str, Any]]


def build_scores(
    round_name: str,
    systems: list[dict[str, Any]],
    run_rows: list[dict[str, Any]],
    scaling: dict[tuple[str, str, str], float],
    bench_dirs: set[tuple[str, str, str]],
    *,
    damaged: str = "",
) -> ScoredRound:
    """Score every benchmark folder of a round (see :func:`olympic_score`).

    ``systems`` and ``run_rows`` are the rows of the systems and runs tables (a run's
    missing values as None); ``kept`` is aligned with ``run_rows``. A NaN scaling factor
    (an unusable ``scaling.json``) gives no score. ``damaged`` says why the source could
    not be read to its end: then a result with fewer files than the rules require may
    have lost some, and gets no score rather than a wrong one.
    """
    sys_index = {(r["org"], r["system_id"]): r for r in systems}
    positions: dict[tuple[str, str, str], list[int]] = {}
    for pos, run in enumerate(run_rows):
        positions.setdefault((run["org"], run["system_id"], run["benchmark"]), []).append(pos)
    kept = [False] * len(run_rows)
    problems: list[dict[str, Any]] = []
    rows: list[dict[str, Any]] = []
    ruleset, _ = ruleset_for(round_name)
    allowed = set(benchmarks_of(ruleset)) if ruleset else set()
    counts = result_file_counts()
    for org, system_id, folder in sorted(bench_dirs):
        name = benchmark_of_folder(folder)
        required = counts.get(name)
        dropped = MAX_DROPPED_RUNS.get(name, 1)
        group_pos = positions.get((org, system_id, name), [])
        group = [run_rows[p] for p in group_pos]
        where = f"{org}/results/{system_id}/{folder}"
        counted = [p for p, r in zip(group_pos, group, strict=True) if r["counted"]]
        factor = scaling.get((org, system_id, folder), 1.0)
        result = olympic_score(
            [run_rows[p]["time_to_train_min"] for p in counted],
            len(group) - len(counted),
            max_dropped_runs=dropped,
            scaling_factor=factor,
        )
        reason = result.reason if group else "no result files"
        if factor != factor:
            result, reason = _unscored(result), "scaling.json has no usable scaling_factor"
        elif damaged and required is not None and 0 < len(group) < required:
            result = _unscored(result)
            reason = (
                f"only {len(group)} of the {required} result files the rules "
                "require were read: the archive is damaged, so the others may be lost"
            )
        for i in result.kept:
            kept[counted[i]] = True
        energies = [run_rows[counted[i]].get("energy_kj") for i in result.kept]
        # Official energy score: the mean over the runs the time score kept, scaled.
        energy = (
            sum(energies) / len(energies) * factor
            if energies and all(e is not None and e == e for e in energies)
            else None
        )
        system = sys_index.get((org, system_id))
        if system is None:
            reason = reason or f"no system description ({org}/systems/{system_id}.json)"
            problems.append(
                problem_row(
                    round_name,
                    where,
                    ProblemKind.MISSING_SYSTEM,
                    f"results without {org}/systems/{system_id}.json",
                )
            )
        short = required is not None and 0 < len(group) < required
        if short and not reason and system is not None:
            # The official summarizer scores it silently; the score stands, said so.
            reason = (
                f"scored from {len(group)} of the {required} result files the rules require "
                f"({len(counted)} counted): less certain than a full result"
            )
        if name not in allowed:
            problems.append(
                problem_row(
                    round_name,
                    where,
                    ProblemKind.UNKNOWN_BENCHMARK,
                    f"{folder!r} is not a benchmark of MLPerf Training ruleset {ruleset} "
                    f"(mlperf-logging allows: {', '.join(sorted(allowed)) or 'none'}); its "
                    "runs are checked against no benchmark rules",
                )
            )
        if not group:
            problems.append(
                problem_row(
                    round_name,
                    where,
                    ProblemKind.EMPTY_BENCHMARK,
                    "benchmark folder holds no result_*.txt file",
                )
            )
        elif reason:
            problems.append(problem_row(round_name, where, ProblemKind.NO_SCORE, reason))
        row: dict[str, Any] = {
            "source": "mlperf",
            "round": round_name,
            "org": org,
            "system_id": system_id,
            "benchmark": folder,
            "workload": workload_in_round(folder, round_name),
        }
        for name in SCORES_SYSTEM_COLUMNS:
            row[name] = system[name] if system is not None else None
        row.update(
            {
                "runs": len(group),
                "runs_converged": len(counted),
                "runs_required": required,
                "scaling_factor": factor,
                "time_to_train_min": result.time_to_train_min if system is not None else None,
                "score_reason": reason,
                "kept_runs": len(result.kept),
                "global_batch_size": _common_value([r["global_batch_size"] for r in group]),
                "energy_kj": energy,
                "samples_to_converge": olympic_samples(
                    [r["samples_to_converge"] for r in group],
                    max_failed=dropped,
                ),
                "first_round": round_name,  # across rounds: tables.republished
                "republished_in": "",
            }
        )
        rows.append(row)
    scores = frame_of(SCORES_SCHEMA, rows)  # numbers stay numbers in a round without any
    return ScoredRound(scores=scores, kept=kept, problems=problems)

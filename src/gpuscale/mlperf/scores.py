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

import pandas as pd

from gpuscale.mlperf.benchmarks import workload_in_round
from gpuscale.mlperf.convergence_check import flag_samples
from gpuscale.mlperf.power import flag_energies
from gpuscale.mlperf.rcp import olympic_samples
from gpuscale.mlperf.rules import benchmarks_of, result_file_counts, ruleset_for
from gpuscale.tables import (
    SCORES_SCHEMA,
    SCORES_SYSTEM_COLUMNS,
    ProblemKind,
    ProblemRow,
    Row,
    benchmark_of_folder,
    frame_of,
    problem_row,
)
from gpuscale.tables.repeated_runs import repeated_count, repeated_said
from gpuscale.tables.spelling import did_you_mean
from gpuscale.tables.workloads import MAX_DROPPED_RUNS


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
            f"{dropped_runs} runs did not count; at most {max_dropped_runs} may not",
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
    if value != value:  # NaN: not logged
        return None
    return float(value)


def _unscored(result: OlympicResult) -> OlympicResult:
    return OlympicResult(None, (), result.reason)


@dataclass(frozen=True, slots=True)
class ScoredRound:
    """The scores table, which runs the olympic rule kept (aligned with ``runs``), and
    the problems met while scoring."""

    scores: pd.DataFrame
    kept: list[bool]
    problems: list[ProblemRow]


@dataclass(frozen=True)
class _RoundRules:
    """What the rules of a round say about its results (``mlperf_logging``)."""

    round_name: str
    ruleset: str | None
    allowed: set[str]  # the benchmarks the ruleset allows
    counts: dict[str, int]  # the result files each benchmark requires
    damaged: str  # why the source could not be read to its end ("" when it was)

    @staticmethod
    def of(round_name: str, damaged: str) -> _RoundRules:
        ruleset, _ = ruleset_for(round_name)
        allowed = set(benchmarks_of(ruleset))
        return _RoundRules(round_name, ruleset, allowed, result_file_counts(), damaged)


def _dropped(group: list[Row], counted: list[Row], most: int) -> str:
    """Why a result has no score for its runs: how many did not count, by status (the
    logs' own word: ``noncompliant``, ``aborted``, ``not converged``...), and the first
    problem of the commonest status (v1.1's BERT runs converged and were noncompliant,
    which "failed or did not converge" misstated)."""
    kept = {id(r) for r in counted}
    dropped = [r for r in group if id(r) not in kept]
    by_status = pd.Series([str(r.get("status") or "not counted") for r in dropped])
    counts = by_status.value_counts()
    said = ", ".join(f"{n} {status}" for status, n in counts.items())
    first = next((r.get("problem") for r in dropped if r.get("status") == counts.index[0]), "")
    first = str(first or "").split("; ")[0][:160]  # its first reason, of several
    if first:
        said += f" (e.g. {first})"
    return f"{len(dropped)} runs did not count: {said}; at most {most} may not"


def _olympic(
    rules: _RoundRules, name: str, group: list[Row], counted: list[Row], factor: float
) -> tuple[OlympicResult, str]:
    """The olympic score of one result (runs ``group``, of which ``counted`` converged)
    and why it has none: no runs, an unusable scaling factor, or a damaged source that may
    have lost some of the result files the rules require."""
    required = rules.counts.get(name)
    result = olympic_score(
        [r["time_to_train_min"] for r in counted],
        len(group) - len(counted),
        max_dropped_runs=MAX_DROPPED_RUNS.get(name, 1),
        scaling_factor=factor,
    )
    reason = result.reason
    if not group:
        reason = "no result files"
    if result.time_to_train_min is None and len(group) - len(counted) > MAX_DROPPED_RUNS.get(
        name, 1
    ):
        reason = _dropped(group, counted, MAX_DROPPED_RUNS.get(name, 1))
    if factor != factor:
        result, reason = _unscored(result), "scaling.json has no usable scaling_factor"
    elif rules.damaged and required is not None and 0 < len(group) < required:
        result = _unscored(result)
        reason = (
            f"only {len(group)} of the {required} result files the rules "
            "require were read: the archive is damaged, so the others may be lost"
        )
    return result, reason


def _official_energy(kept_runs: list[Row], factor: float) -> float | None:
    """Official energy score (kJ): the mean over the runs the time score kept, scaled;
    None unless every kept run has an energy."""
    energies = [r.get("energy_kj") for r in kept_runs]
    if energies and all(e is not None and e == e for e in energies):
        return sum(energies) / len(energies) * factor
    return None


# A folder's problem with a reason: a score less certain (scored), or none
_WHY_UNSCORED = {True: ProblemKind.FEWER_RUNS, False: ProblemKind.NO_SCORE}


def _folder_problems(
    rules: _RoundRules, where: str, folder: str, runs: int, reason: str, scored: bool
) -> list[ProblemRow]:
    """The problems of one benchmark folder: not a benchmark of the ruleset, no result
    files, or ``reason``: why it has no score, or, ``scored``, why its score is less
    certain (fewer result files than the rules require)."""
    problems = []
    unknown = benchmark_of_folder(folder) not in rules.allowed
    if unknown:
        allowed = ", ".join(sorted(rules.allowed)) or "none"
        problems.append(
            problem_row(
                rules.round_name,
                where,
                ProblemKind.UNKNOWN_BENCHMARK,
                f"{folder!r} is not a benchmark of MLPerf Training ruleset {rules.ruleset} "
                f"(mlperf-logging allows: {allowed}); its runs are checked against no "
                "benchmark rules",
            )
        )
    if not runs:
        problems.append(
            problem_row(
                rules.round_name,
                where,
                ProblemKind.EMPTY_BENCHMARK,
                "benchmark folder holds no result_*.txt file",
            )
        )
    elif reason and not (scored and unknown):  # a score unchecked: its problem is above
        kind = _WHY_UNSCORED[scored]
        problems.append(problem_row(rules.round_name, where, kind, reason))
    return problems


def build_scores(
    round_name: str,
    systems: list[Row],
    run_rows: list[Row],
    scaling: dict[tuple[str, str, str], float],
    bench_dirs: set[tuple[str, str, str]],
    *,
    damaged: str = "",
    unusable: set[tuple[str, str]] | None = None,
) -> ScoredRound:
    """Score every benchmark folder of a round (see :func:`olympic_score`).

    ``systems`` and ``run_rows`` are the rows of the systems and runs tables (a run's
    missing values as None); ``kept`` is aligned with ``run_rows``. A NaN scaling factor
    (an unusable ``scaling.json``) gives no score. ``damaged`` says why the source could
    not be read to its end: then a result with fewer files than the rules require may
    have lost some, and gets no score rather than a wrong one. ``unusable``: the (org,
    system id) whose description is there but could not be used (its own problem says
    why), so that their results say that, not that it is missing.
    """
    sys_index = {(r["org"], r["system_id"]): r for r in systems}
    positions: dict[tuple[str, str, str], list[int]] = {}
    for pos, run in enumerate(run_rows):
        positions.setdefault((run["org"], run["system_id"], run["benchmark"]), []).append(pos)
    kept = [False] * len(run_rows)
    problems: list[ProblemRow] = []
    rows: list[Row] = []
    rules = _RoundRules.of(round_name, damaged)
    for org, system_id, folder in sorted(bench_dirs):
        at = positions.get((org, system_id, benchmark_of_folder(folder)), [])
        counted = [p for p in at if run_rows[p]["counted"]]
        factor = scaling.get((org, system_id, folder), 1.0)
        folder_runs = _FolderRuns([run_rows[p] for p in at], [run_rows[p] for p in counted])
        row, found, kept_of_counted = _score_folder(
            rules,
            (org, system_id, folder),
            sys_index.get((org, system_id)),
            folder_runs,
            factor,
            unusable=(org, system_id) in (unusable or ()),
        )
        for i in kept_of_counted:
            kept[counted[i]] = True
        problems += found
        rows.append(row)
    problems += flag_samples(round_name, rows) + flag_energies(round_name, rows)
    scores = frame_of(SCORES_SCHEMA, rows)  # numbers stay numbers in a round without any
    return ScoredRound(scores=scores, kept=kept, problems=problems)


@dataclass(frozen=True)
class _FolderRuns:
    """The runs of one benchmark folder, and those of them that converged."""

    runs: list[Row]
    counted: list[Row]


def _score_folder(
    rules: _RoundRules,
    key: tuple[str, str, str],
    system: Row | None,
    folder_runs: _FolderRuns,
    factor: float,
    *,
    unusable: bool = False,
) -> tuple[Row, list[ProblemRow], tuple[int, ...]]:
    """One row of ``scores`` for the benchmark folder ``key`` (org, system id, folder),
    its problems, and which of the counted runs the olympic rule kept; ``unusable``: its
    system description is there but could not be used (its own problem says why)."""
    org, system_id, folder = key
    group, counted = folder_runs.runs, folder_runs.counted
    name = benchmark_of_folder(folder)
    required = rules.counts.get(name)
    where = f"{org}/results/{system_id}/{folder}"
    result, reason = _olympic(rules, name, group, counted, factor)
    problems = []
    if system is None:
        path = f"{org}/systems/{system_id}.json"
        said = (
            f"system description unusable ({path}: see its problem)",
            f"results whose {path} could not be used",
        )
        if not unusable:
            said = (f"no system description ({path})", f"results without {path}")
        reason = reason or said[0]
        problems.append(problem_row(rules.round_name, where, ProblemKind.MISSING_SYSTEM, said[1]))
    elif not reason and name not in rules.allowed and result.time_to_train_min is not None:
        # the olympic average of its runs, none of them checked against a benchmark's rules
        reason = (
            f"scored unchecked: {folder!r} is not a benchmark of ruleset {rules.ruleset}"
            f"{did_you_mean(folder, rules.allowed)}"
        )
    elif not reason and required is not None and 0 < len(group) < required:
        # The official summarizer scores it silently; the score stands, said so.
        reason = (
            f"scored from {len(group)} of the {required} result files the rules require "
            f"({len(counted)} counted): less certain than a full result"
        )
    scored = system is not None and result.time_to_train_min is not None
    problems += _folder_problems(rules, where, folder, len(group), reason, scored)
    # the same run published twice: scored as the official tool scores it, said
    repeated = repeated_count((r["run_start_ms"], r["run_stop_ms"]) for r in group)
    if repeated:
        said = repeated_said(repeated, len(group), required)
        problems.append(problem_row(rules.round_name, where, ProblemKind.FEWER_RUNS, said))
    row: Row = {
        "source": "mlperf",
        "round": rules.round_name,
        "org": org,
        "system_id": system_id,
        "benchmark": folder,
        "workload": workload_in_round(folder, rules.round_name),
    }
    row |= dict.fromkeys(SCORES_SYSTEM_COLUMNS)  # None where the system is not described
    time_to_train_min = None
    if system is not None:
        row |= {c: system[c] for c in SCORES_SYSTEM_COLUMNS}
        time_to_train_min = result.time_to_train_min
    row |= {
        "runs": len(group),
        "runs_converged": len(counted),
        "runs_required": required,
        "scaling_factor": factor,
        "time_to_train_min": time_to_train_min,
        "score_reason": reason,
        "kept_runs": len(result.kept),
        "repeated_runs": repeated,
        "global_batch_size": _common_value([r["global_batch_size"] for r in group]),
        "energy_kj": _official_energy([counted[i] for i in result.kept], factor),
        "samples_to_converge": olympic_samples(
            [r["samples_to_converge"] for r in group], max_failed=MAX_DROPPED_RUNS.get(name, 1)
        ),
        "first_round": rules.round_name,  # across rounds: tables.republished
        "republished_in": "",
        "same_runs_as": "",  # within a round: tables.republished
    }
    return row, problems, result.kept

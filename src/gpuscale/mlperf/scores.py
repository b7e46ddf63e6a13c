"""The ``scores`` table: one official score per (system, benchmark folder)."""

from __future__ import annotations

from typing import Any

import pandas as pd

from gpuscale.mlperf.benchmarks import get_benchmark, workload_of
from gpuscale.mlperf.convergence import olympic_samples
from gpuscale.mlperf.scoring import olympic_score
from gpuscale.schema import SCORES_COLUMNS, SCORES_SYSTEM_COLUMNS


def _common_value(values: pd.Series) -> float | None:
    """The value all runs agree on, else None (the RCP checker rejects a mix)."""
    distinct = values.dropna().unique()
    return float(distinct[0]) if len(distinct) == 1 and values.notna().all() else None


def build_scores(
    round_name: str,
    systems: pd.DataFrame,
    runs: pd.DataFrame,
    scaling: dict[tuple[str, str, str], float],
    bench_dirs: set[tuple[str, str, str]],
) -> tuple[pd.DataFrame, list[dict[str, Any]]]:
    """Score every benchmark folder; mark in ``runs['kept']`` the runs the olympic rule kept.

    Returns the scores table and the problems found (unknown benchmark, no system
    description, no score).
    """
    problems: list[dict[str, Any]] = []
    sys_index = {(r["org"], r["system_id"]): r for r in systems.to_dict("records")}
    groups = {
        key: frame for key, frame in runs.groupby(["org", "system_id", "benchmark"], sort=False)
    }
    runs["kept"] = False
    rows: list[dict[str, Any]] = []
    for org, system_id, folder in sorted(bench_dirs):
        bench = get_benchmark(folder)
        frame = groups.get((org, system_id, bench.name if bench else folder))
        frame = frame if frame is not None else runs.iloc[0:0]
        where = f"{org}/results/{system_id}/{folder}"
        counted = frame[frame["counted"].astype(bool)]
        dropped = len(frame) - len(counted)
        factor = scaling.get((org, system_id, folder), 1.0)
        result = olympic_score(
            counted["time_to_train_min"].astype(float).tolist(),
            dropped,
            max_dropped_runs=bench.max_dropped_runs if bench else 1,
            scaling_factor=factor,
        )
        kept_index = counted.index[list(result.kept)]
        runs.loc[kept_index, "kept"] = True
        reason = result.reason if len(frame) else "no result files"
        system = sys_index.get((org, system_id))
        if system is None:
            reason = reason or f"no system description ({org}/systems/{system_id}.json)"
            problems.append(
                {
                    "round": round_name,
                    "path": where,
                    "kind": "missing system",
                    "message": f"results without {org}/systems/{system_id}.json",
                }
            )
        if bench is None:
            problems.append(
                {
                    "round": round_name,
                    "path": where,
                    "kind": "unknown benchmark",
                    "message": f"benchmark folder {folder!r} is not an MLPerf "
                    "Training benchmark gpuscale knows; scored with the "
                    "default olympic rule",
                }
            )
        if reason and len(frame):
            problems.append(
                {"round": round_name, "path": where, "kind": "no score", "message": reason}
            )
        elif not len(frame):
            problems.append(
                {
                    "round": round_name,
                    "path": where,
                    "kind": "empty benchmark",
                    "message": "benchmark folder holds no result_*.txt file",
                }
            )
        row: dict[str, Any] = {
            "round": round_name,
            "org": org,
            "system_id": system_id,
            "benchmark": folder,
            "workload": workload_of(folder),
        }
        for name in SCORES_SYSTEM_COLUMNS:
            row[name] = system[name] if system is not None else None
        row.update(
            {
                "runs": len(frame),
                "runs_converged": len(counted),
                "runs_required": bench.result_files if bench else None,
                "scaling_factor": factor,
                "time_to_train_min": result.time_to_train_min if system is not None else None,
                "score_reason": reason,
                "kept_runs": len(result.kept),
                "global_batch_size": _common_value(frame["global_batch_size"])
                if len(frame)
                else None,
                "samples_to_converge": olympic_samples(frame["samples_to_converge"].tolist())
                if len(frame)
                else None,
            }
        )
        rows.append(row)
    scores = pd.DataFrame(rows, columns=list(SCORES_COLUMNS))
    scores["time_to_train_min"] = scores["time_to_train_min"].astype(float)
    return scores, problems

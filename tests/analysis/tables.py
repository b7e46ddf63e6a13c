"""Tiny hand-made scores/runs tables for the analysis tests."""

from __future__ import annotations

import pandas as pd

from gpuscale.tables import RUNS_COLUMNS, SCORES_COLUMNS, RoundTables, convergence_unit


def scores(rows: list[tuple[str, str, int, float]], workload: str = "bert") -> pd.DataFrame:
    """(system_id, family, accelerators, time_to_train_min) -> a scores table."""
    records = []
    for system_id, family, n, t in rows:
        record = dict.fromkeys(SCORES_COLUMNS)
        record.update(
            round="v9.9",
            org="Org",
            submitter="Org",
            system_id=system_id,
            system_name=system_id.upper(),
            division="closed",
            availability="Available on-premise",
            accelerator_family=family,
            accelerator_model=family,
            nodes=1,
            accelerators=n,
            benchmark=workload,
            workload=workload,
            runs=5,
            runs_converged=5,
            scaling_factor=1.0,
            time_to_train_min=t,
            samples_to_converge=1000.0,
            convergence_unit=str(convergence_unit(workload, "v9.9")),
            samples_to_converge_flag="",
        )
        records.append(record)
    return pd.DataFrame(records, columns=list(SCORES_COLUMNS))


def run_record(system_id: str, j: int, minutes: float, ok: bool = True, **fields) -> dict:
    """One run of a system (its ``j``-th result file): a success, counted and kept, or a
    failure (``ok`` False: aborted); ``fields`` set other columns (a v9.9 BERT by
    default)."""
    record = dict.fromkeys(RUNS_COLUMNS)
    record.update(round="v9.9", org="Org", submitter="Org", benchmark="bert", workload="bert")
    record.update(
        system_id=system_id,
        run_file=f"result_{j}.txt",
        time_to_train_min=minutes,
        counted=ok,
        kept=ok,
        status="success" if ok else "aborted",
    )
    record.update(fields)
    return record


def runs_for(table: pd.DataFrame, spread: float = 0.1) -> pd.DataFrame:
    """Five kept runs per system, symmetric around its score (mean = score)."""
    records = [
        run_record(
            row.system_id,
            j,
            row.time_to_train_min * (1 + d * spread / 2),
            **{c: getattr(row, c) for c in ("round", "org", "submitter", "benchmark", "workload")},
        )
        for row in table.itertuples(index=False)
        for j, d in enumerate((-2, -1, 0, 1, 2))
    ]
    return pd.DataFrame(records, columns=list(RUNS_COLUMNS))


def round_of(table: pd.DataFrame) -> RoundTables:
    """Round tables of ``table``'s scores and their runs (:func:`runs_for`), no systems or
    problems rows."""
    return RoundTables(
        systems=table.iloc[0:0], runs=runs_for(table), scores=table, problems=table.iloc[0:0]
    )

"""Scaling of the user's own bench runs: speedup and efficiency per model, break-even size.

For each model and configuration, against the same model's N = 1 run:
``speedup = samples_per_s(N) / samples_per_s(1)`` (throughput, so weak and strong scaling
read the same way) and ``efficiency = speedup / N``. The **break-even model size** at N is
where the speedup crosses 1: log-linear interpolation in parameters between the largest
model slower than one device and the next larger model that is not.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

GROUP = ["backend", "device", "scaling", "precision", "bucket_mb", "steps"]


def bench_scaling(table: pd.DataFrame) -> pd.DataFrame:
    """The ``ok`` rows of a bench table with ``speedup`` and ``efficiency`` columns
    (NaN where the model has no N = 1 run), sorted by model size and N."""
    ok = table[table["status"] == "ok"].copy()
    if ok.empty:
        return ok.assign(speedup=pd.Series(dtype=float), efficiency=pd.Series(dtype=float))
    single = ok[ok["world_size"] == 1].drop_duplicates(["model", *GROUP], keep="last")
    base = single.set_index(["model", *GROUP])["samples_per_s"]
    keys = pd.MultiIndex.from_frame(ok[["model", *GROUP]])
    ok["speedup"] = ok["samples_per_s"].to_numpy() / base.reindex(keys).to_numpy()
    ok["efficiency"] = ok["speedup"] / ok["world_size"]
    return ok.sort_values(["params", "world_size"]).reset_index(drop=True)


def break_even_params(
    scaling: pd.DataFrame, world_size: int = 2, speedup: float = 1.0
) -> float | None:
    """Parameters at which the speedup on ``world_size`` devices reaches ``speedup``.

    None when no model crosses it (all faster, all slower, or no such runs). With several
    families the smallest crossing is returned.
    """
    rows = scaling[scaling["world_size"] == world_size].dropna(subset=["speedup"])
    crossings = []
    for _, family in rows.groupby("family"):
        ordered = family.sort_values("params")
        params = ordered["params"].to_numpy(float)
        values = ordered["speedup"].to_numpy(float)
        for i in range(1, len(params)):
            if values[i - 1] < speedup <= values[i]:
                fraction = (speedup - values[i - 1]) / (values[i] - values[i - 1])
                log_p = math.log10(params[i - 1]) + fraction * (
                    math.log10(params[i]) - math.log10(params[i - 1])
                )
                crossings.append(10**log_p)
                break
    return float(np.min(crossings)) if crossings else None


SAMPLES_PER_RUN = 1_000_000


def bench_as_scores(table: pd.DataFrame, samples: int = SAMPLES_PER_RUN) -> pd.DataFrame:
    """The ``ok`` bench rows in the ``scores`` schema (``source = "bench"``), so the MLPerf
    analysis applies: each model is a benchmark, the world size the accelerator count, and
    ``time_to_train_min`` the minutes to process ``samples`` samples at the measured
    throughput (speedups are then throughput ratios)."""
    from gpuscale.schema import SCORES_COLUMNS

    ok = table[table["status"] == "ok"]
    rows = []
    for r in ok.itertuples(index=False):
        record = dict.fromkeys(SCORES_COLUMNS)
        record.update(
            source="bench",
            round="bench",
            org=r.hostname or "this machine",
            submitter=r.hostname or "this machine",
            system_id=f"{r.model}-x{r.world_size}-{r.backend}-{r.precision}",
            system_name=f"{r.world_size} x {r.device} ({r.backend}, {r.precision})",
            division="bench",
            availability="",
            accelerator_family=str(r.device),
            accelerator_model=str(r.device),
            nodes=r.nnodes,
            accelerators=r.world_size,
            benchmark=r.model,
            workload=r.model,
            runs=1,
            runs_converged=1,
            runs_required=1,
            scaling_factor=1.0,
            time_to_train_min=samples / r.samples_per_s / 60.0,
            score_reason="",
            kept_runs=1,
            global_batch_size=r.global_batch,
            samples_to_converge=float(samples),
        )
        rows.append(record)
    return pd.DataFrame(rows, columns=list(SCORES_COLUMNS))

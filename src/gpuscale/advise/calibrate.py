"""Calibrating the step model from measurements: bench results and a collectives sweep."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from gpuscale.advise.model import Compute, Link, allreduce_terms


class CalibrationError(ValueError):
    """The measurements cannot calibrate the model (no N = 1 run of that model, ...)."""


def compute_from_bench(table: pd.DataFrame, model: str) -> tuple[Compute, float, float | None]:
    """(per-device compute at N = 1, parameters, mean power in W or None) of one model."""
    single = table[
        (table["status"] == "ok") & (table["model"] == model) & (table["world_size"] == 1)
    ]
    if single.empty:
        known = sorted(table.loc[table["status"] == "ok", "model"].unique())
        raise CalibrationError(
            f"no successful N = 1 run of {model!r} in the bench results "
            f"(models with runs: {', '.join(known) or 'none'})"
        )
    row = single.iloc[-1]
    needed = ["forward_ms", "backward_ms", "optimizer_ms", "batch_per_device", "params"]
    missing = [c for c in needed if pd.isna(row[c])]
    if missing:
        raise CalibrationError(f"the N = 1 run of {model!r} lacks {', '.join(missing)}")
    compute = Compute(
        forward_ms=float(row["forward_ms"]),
        backward_ms=float(row["backward_ms"]),
        optimizer_ms=float(row["optimizer_ms"]),
        batch=int(row["batch_per_device"]),
    )
    power = row["power_w_mean"]
    return compute, float(row["params"]), (float(power) if pd.notna(power) else None)


def overlap_from_bench(
    table: pd.DataFrame, model: str, link: Link, bucket_mb: float = 25.0
) -> float | None:
    """The share of the predicted all-reduce that backward hid in the smallest multi-device
    run of ``model``: ``(t_ar - exposed) / (t_ar - t_last_bucket)``, clamped to [0, 1]."""
    multi = table[
        (table["status"] == "ok") & (table["model"] == model) & (table["world_size"] > 1)
    ].sort_values("world_size")
    if multi.empty:
        return None
    row = multi.iloc[0]
    if pd.isna(row["grad_bytes_per_step"]) or pd.isna(row["exposed_comm_ms"]):
        return None
    terms = allreduce_terms(
        float(row["grad_bytes_per_step"]),
        int(row["world_size"]),
        link,
        bucket_bytes=bucket_mb * 1e6,
    )
    hideable = terms.total_s - terms.last_bucket_s
    if hideable <= 0:
        return None
    hidden = terms.total_s - float(row["exposed_comm_ms"]) / 1e3
    return min(1.0, max(0.0, hidden / hideable))


def link_from_collectives(path: Path, *, max_bytes: float | None = None) -> Link:
    """A link fitted to a ``gpuscale collectives`` all-reduce sweep.

    The ring model says ``t(s) = 2(n-1) a + 2(n-1)/n * s / B``: a straight line in the
    message size ``s``. It is fitted by least squares on relative error (every size
    weighs the same, from 8 B to ``max_bytes``), giving the latency per step ``a`` and
    the bus bandwidth ``B`` that best describe the whole curve, not just its ends.
    """
    import numpy as np

    from gpuscale.bench.collectives import load_collectives

    table, _ = load_collectives(path)
    rows = table[table["op"] == "all_reduce"] if len(table) else table
    if rows.empty:
        raise CalibrationError(f"{path}: no all_reduce measurement")
    ranks = int(rows["ranks"].max())
    rows = rows[rows["ranks"] == ranks]
    if max_bytes is not None:
        rows = rows[rows["bytes"] <= max_bytes]
    if ranks < 2 or len(rows) < 2:
        raise CalibrationError(f"{path}: need an all_reduce sweep on 2 or more ranks")
    size = rows["bytes"].to_numpy(float)
    time_s = rows["time_us"].to_numpy(float) / 1e6
    weights = 1.0 / time_s  # relative error
    slope, intercept = np.polyfit(size, time_s, 1, w=weights)
    slope = max(slope, 1e-15)
    latency_us = max(intercept, 0.0) / (2 * (ranks - 1)) * 1e6
    busbw_gbs = 2 * (ranks - 1) / ranks / slope / 1e9
    return Link(
        busbw_gbs=float(busbw_gbs),
        latency_us=float(latency_us),
        name=f"measured ({path.name}, {ranks} ranks)",
    )

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
        (table["status"] == "ok") & (table["model"] == model) & (table["accelerators"] == 1)
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
    # At N = 1 the synchronised step differs from the no-sync one only by DDP's own work
    # (bucket copies), which every N pays.
    overhead = row["ddp_overhead_ms"]
    samples = row.get("nosync_step_ms_samples")
    compute = Compute(
        forward_ms=float(row["forward_ms"]),
        backward_ms=float(row["backward_ms"]),
        optimizer_ms=float(row["optimizer_ms"]),
        ddp_overhead_ms=float(overhead) if pd.notna(overhead) else 0.0,
        step_samples_ms=tuple(samples) if isinstance(samples, tuple | list) else (),
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
        (table["status"] == "ok") & (table["model"] == model) & (table["accelerators"] > 1)
    ].sort_values("accelerators")
    if multi.empty:
        return None
    row = multi.iloc[0]
    if pd.isna(row["grad_bytes_per_step"]) or pd.isna(row["exposed_comm_ms"]):
        return None
    terms = allreduce_terms(
        float(row["grad_bytes_per_step"]),
        int(row["accelerators"]),
        link,
        bucket_bytes=bucket_mb * 1e6,
    )
    hideable = terms.total_s - terms.last_bucket_s
    if hideable <= 0:
        return None
    hidden = terms.total_s - float(row["exposed_comm_ms"]) / 1e3
    return min(1.0, max(0.0, hidden / hideable))


def overlap_or_default(table: pd.DataFrame, model: str, link: Link) -> float:
    """The overlap measured on ``model``'s multi-device run, else the default for the
    device it ran on (see ``gpuscale.advise.recommend.default_overlap``)."""
    from gpuscale.advise.recommend import default_overlap

    measured = overlap_from_bench(table, model, link)
    if measured is not None:
        return measured
    devices = table.loc[table["model"] == model, "device"].dropna()
    return default_overlap(str(devices.iloc[0]) if len(devices) else None)


def link_from_collectives(path: Path, *, max_bytes: float | None = None) -> Link:
    """A link calibrated on a ``gpuscale collectives`` all-reduce sweep.

    The ring model says ``t(s) = 2(n-1) a + 2(n-1)/n * s / B``. Its two constants are
    read where each one decides, as in the LogP/alpha-beta literature: the bus bandwidth
    ``B`` from the slope of a least-squares line through the large messages (the largest
    sixteenth of the size range, at least three sizes: gradient buckets are megabytes),
    the latency ``a`` from the median time of the small messages (the smallest quarter of
    sizes) less their bandwidth term. One line fitted through 8 B to 128 MB instead
    lets the many small sizes pull the slope: on gloo it overstated the bandwidth by 40%.
    Sizes above ``max_bytes`` are ignored; repeated sizes count by their median.

    On CPU devices calibrate on a sweep taken with ``--load``: there DDP's all-reduce
    shares each rank's core with backward, and an idle sweep underestimates it by 1.5-2x
    for large messages (see the README's accuracy section).
    """
    import numpy as np

    from gpuscale.interconnect.records import read_sweeps

    table = read_sweeps(path).results
    rows = table[(table["op"] == "all_reduce") & (table["status"] == "ok")] if len(table) else table
    if rows.empty:
        raise CalibrationError(f"{path}: no successful all_reduce measurement")
    ranks = int(rows["ranks"].max())
    rows = rows[rows["ranks"] == ranks]
    if max_bytes is not None:
        rows = rows[rows["size_bytes"] <= max_bytes]
    curve = rows.groupby("size_bytes")["time_us"].median()
    if ranks < 2 or len(curve) < 4:
        raise CalibrationError(
            f"{path}: need an all_reduce sweep of 4 or more sizes on 2 or more ranks"
        )
    size = curve.index.to_numpy(float)
    time_s = curve.to_numpy(float) / 1e6
    large = size >= size.max() / 16
    if large.sum() < 3:
        large = np.arange(len(size)) >= len(size) - 3
    slope = max(float(np.polyfit(size[large], time_s[large], 1)[0]), 1e-15)
    small = np.arange(len(size)) < max(1, len(size) // 4)
    fixed_s = max(float(np.median(time_s[small] - slope * size[small])), 0.0)
    loaded = "load" in rows and bool(rows["load"].eq(True).all())
    return Link(
        busbw_gbs=float(2 * (ranks - 1) / ranks / slope / 1e9),
        latency_us=fixed_s / (2 * (ranks - 1)) * 1e6,
        name=f"measured ({path.name}, {ranks} ranks{', under compute load' if loaded else ''})",
    )

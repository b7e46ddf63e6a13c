"""What a model's N > 1 bench runs measured beyond its compute: the no-sync step's growth
over N = 1 (waiting for the slowest device, contention for shared cores) and the
communication DDP timed over what the network predicts for the same buckets (on CPU
above 1: the all-reduce shares the cores with backward). Read at the most specific level
that measured it (``contention``).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from gpuscale.advice.model.network import DEFAULT_BUCKET_MB, Network, comm_times_s
from gpuscale.quantities import number

# A no-sync slowdown that falls by less than this share from fewer devices to more is
# run-to-run noise, not said (the step model holds it all the same).
FALL_NOISE = 0.05


def _comm_ratios(multi: pd.DataFrame, network: Network) -> pd.Series:
    """Per N > 1 row: measured DDP communication over the network's prediction (NaN where
    it was not measured); one prediction per distinct gradient size, N, bucket and
    strategy."""
    rows = multi.dropna(subset=["comm_ms", "grad_bytes_per_step"])
    ratios = pd.Series(np.nan, index=multi.index, dtype=float)
    predicted: dict[tuple, float] = {}
    columns = zip(
        rows.index,
        rows["grad_bytes_per_step"].to_numpy(float),
        rows["accelerators"].to_numpy(int),
        rows["bucket_mb"].to_numpy(float),
        (rows["strategy"] == "fsdp").to_numpy(bool),
        rows["comm_ms"].to_numpy(float),
        strict=True,
    )
    for index, grad, n, bucket, fsdp, comm in columns:
        key = (grad, n, DEFAULT_BUCKET_MB if np.isnan(bucket) else bucket, fsdp)
        if key not in predicted:
            predicted[key], _ = comm_times_s(
                network, grad, n, bucket_mb=key[2], strategy="fsdp" if fsdp else "ddp"
            )
        if predicted[key] > 0 and comm > 0:
            ratios[index] = comm / (predicted[key] * 1e3)
    return ratios


def _comm_scale(ratios: pd.Series) -> float | None:
    """Median of measured DDP communication over the network's prediction."""
    found = ratios.dropna()
    return float(found.median()) if len(found) else None


def _slowdown(multi: pd.DataFrame, single: pd.DataFrame) -> tuple[tuple[int, float], ...]:
    """(N, median no-sync step at N over the same configuration's at N = 1)."""
    if multi.empty or single.empty:
        return ()
    base = single.drop_duplicates("config_group", keep="last").set_index("config_group")
    reference = multi["config_group"].map(base["nosync_step_ms_mean"]).astype(float)
    ratio = multi["nosync_step_ms_mean"].astype(float) / reference
    found = ratio.groupby(multi["accelerators"]).median().dropna()
    return tuple((int(n), float(f)) for n, f in found.items() if f > 0)


def _contention_text(slowdown: dict[int, float]) -> str:
    return ", ".join(f"no-sync step x{number(f)} at N = {n}" for n, f in sorted(slowdown.items()))


def falling(slowdown: tuple[tuple[int, float], ...]) -> str | None:
    """A warning where the bench measured less contention at more devices, by more than
    ``FALL_NOISE`` (the step model takes each count as slow as the slowest measured at
    fewer: ``Compute.held_slowdown``); None where it never fell."""
    fell, most, at = [], 0.0, 1
    for n, s in sorted((n, s) for n, s in slowdown if n > 1):
        if s < most * (1 - FALL_NOISE):
            fell.append(f"x{number(s)} at N = {n}, below the x{number(most)} at N = {at}")
        elif s > most:
            most, at = s, n
    if not fell:
        return None
    return (
        f"WARNING: the bench measured less contention at more devices (no-sync step "
        f"{'; '.join(fell)}): the slowest of more devices waits no less, so one of them is "
        "noise (gpuscale bench --repeat 3 keeps the median); the advice takes each count "
        "as slow as the slowest measured at fewer devices."
    )


def contention(
    single: pd.DataFrame, levels: tuple[pd.DataFrame, ...], family: str, network: Network
) -> tuple[dict[int, float], float | None, str, pd.Index]:
    """Contention at N (no-sync slowdown per N, communication scale), where it was
    read, and the rows the communication scale was read from: the most specific
    ``levels`` (every model of the configuration, the family, the model's own runs) that
    measured it win."""
    labels = ("every model of this configuration", f"the {family} family", "its own runs")
    slowdown: dict[int, float] = {}
    comm_scale, contention = None, "no N > 1 run: the N > 1 figures are extrapolated"
    ratios = _comm_ratios(levels[0], network)  # every level is a part of the first
    comm_rows = pd.Index([])
    for rows_at, label in zip(levels, labels, strict=True):
        found = dict(_slowdown(rows_at, single))
        if found:
            slowdown.update(found)
            contention = f"{label} ({_contention_text(found)})"
        if scale := _comm_scale(ratios.loc[rows_at.index]):
            comm_scale, comm_rows = scale, ratios.loc[rows_at.index].dropna().index
    return slowdown, comm_scale, contention, comm_rows

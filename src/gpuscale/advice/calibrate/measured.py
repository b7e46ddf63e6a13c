"""What the bench's runs measured beyond the calibration point.

Contention: the no-sync step's growth over N = 1 at N > 1 (waiting for the slowest
device, contention for shared cores) and the communication DDP timed over what the
network predicts for the same buckets (on CPU above 1: the all-reduce shares the cores
with backward), each read at the most specific level that measured it (every model of the
configuration, the family, its own runs); the noise scale the gradient norms measured.

The model's runs: ``advice/calibrate/model_runs.py``.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pandas as pd

from gpuscale.advice.calibration import Benched, OneDevice
from gpuscale.advice.model.network import DEFAULT_BUCKET_MB, Network
from gpuscale.advice.model.step import per_step_ms
from gpuscale.advice.model.step_collectives import comm_times_s
from gpuscale.advice.types import Finding
from gpuscale.advice.types import FindingKind as K
from gpuscale.analysis.critical_batch import NoiseScale, noise_scale
from gpuscale.bench.support import support

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


def _slowdown(multi: pd.DataFrame, single: pd.DataFrame) -> tuple[tuple[int, float], ...]:
    """(N, median no-sync step at N over the same configuration's at N = 1)."""
    if multi.empty or single.empty:
        return ()
    base = single.drop_duplicates("config_group", keep="last").set_index("config_group")
    reference = multi["config_group"].map(base["nosync_step_ms_mean"]).astype(float)
    ratio = multi["nosync_step_ms_mean"].astype(float) / reference
    found = ratio.groupby(multi["accelerators"]).median().dropna()
    return tuple((int(n), float(f)) for n, f in found.items() if f > 0)


def falling(slowdown: tuple[tuple[int, float], ...]) -> Finding | None:
    """A warning where the bench measured less contention at more devices, by more than
    ``FALL_NOISE`` (the step model takes each count as slow as the slowest measured at
    fewer: ``Compute.held_slowdown``); None where it never fell."""
    fell, most, at = [], 0.0, 1
    for n, s in sorted((n, s) for n, s in slowdown if n > 1):
        if s < most * (1 - FALL_NOISE):
            fell.append(Finding.of(K.FELL, slowdown=s, devices=n, most=most, at=at))
        elif s > most:
            most, at = s, n
    if not fell:
        return None
    return Finding.of(K.CONTENTION_FELL, falls=tuple(fell))


def slowdowns(
    single: pd.DataFrame, levels: tuple[pd.DataFrame, ...], family: str
) -> tuple[dict[int, float], Finding]:
    """The no-sync slowdown per N, the most specific ``levels`` (every model of the
    configuration, the family, the model's own runs) that measured it winning, and where
    it was read."""
    slowdown: dict[int, float] = {}
    read = Finding.of(K.CONTENTION_FROM, level="none")
    for rows_at, level in zip(levels, ("configuration", "family", "own"), strict=True):
        found = dict(_slowdown(rows_at, single))
        if found:
            slowdown.update(found)
            at = tuple(
                Finding.of(K.NO_SYNC_AT, slowdown=f, devices=n) for n, f in sorted(found.items())
            )
            read = Finding.of(K.CONTENTION_FROM, level=level, family=family, found=at)
    return slowdown, read


def comm_scale(levels: tuple[pd.DataFrame, ...], network: Network) -> tuple[float | None, pd.Index]:
    """The communication scale on ``network`` (measured over predicted, the median), the
    most specific of ``levels`` (N > 1 rows, each a part of the first) that measured it
    winning, and the rows it was read from; (None, no rows) where none did."""
    found, comm_rows = None, pd.Index([])
    if not levels:
        return found, comm_rows
    ratios = _comm_ratios(levels[0], network)  # every level is a part of the first
    for rows_at in levels:  # the median of measured over predicted at each level
        at = ratios.loc[rows_at.index].dropna()
        if len(at) and (scale := float(at.median())):
            found, comm_rows = scale, at.index
    return found, comm_rows


def read_comm(cal: Benched, table: pd.DataFrame, network: Network) -> tuple[Benched, Network]:
    """``cal`` with its communication scale read on ``network`` (:func:`comm_scale` of its
    ``comm_levels``: its own runs reproduce its calibration point; its family's, else all,
    without) and the runs of ``table`` it was read from, and ``network`` scaled by it
    (``Network.scaled``), once."""
    levels = cal.bench.comm_levels
    scale, rows = comm_scale(levels, network)
    if scale is None:
        return cal, network
    found = support(levels[0].loc[rows], table)
    bench = replace(cal.bench, comm_scale=scale, comm_support=found)
    return replace(cal, bench=bench), network.scaled(scale)


def noise(rows: pd.DataFrame) -> NoiseScale | None:
    """The noise scale the runs' gradient norms measured (the one over the most steps)."""
    best = None
    for r in rows.itertuples():
        local, glob = r.noise_local_sq, r.noise_global_sq
        if not (isinstance(local, tuple) and len(local) >= 2 and pd.notna(r.noise_batch_big)):
            continue
        estimate = noise_scale(
            list(local), list(glob), float(r.noise_batch_small), float(r.noise_batch_big)
        )
        if estimate is not None and (best is None or estimate.steps > best.steps):
            best = estimate
    return best


def one_device(cal: Benched) -> OneDevice | None:
    """The calibrated N = 1 run as it trained: its step, batch, strategy and DDP's own work
    in it (the N = 1 row is predicted without DDP: said beside it)."""
    bench, run, compute = cal.bench, cal.run, cal.model.compute
    if not bench.one_step_ms > 0:
        return None
    own = run.accum * compute.one_rank_own_ms  # FSDP's, where its bare step was timed
    if run.strategy == "ddp":
        own = per_step_ms(compute.ddp_ms_per_mparam, cal.model.spec.params)
    return OneDevice(
        bench.one_step_ms,
        run.batch,
        run.accum,
        run.strategy,
        own,
        config_group=bench.config_group,
        device_name=cal.device.name,
        fsdp_own_ms=bench.one_step_own_ms if run.strategy == "fsdp" else 0.0,
    )

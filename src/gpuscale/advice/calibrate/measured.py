"""What the bench's N > 1 runs measured beyond the calibration point: the no-sync step's
growth over N = 1 (the wait for the slowest device, contention for shared cores) and the
communication timed over what the network predicts, each read at the most specific level
that measured it (the configuration, the family, the model's own runs); the noise scale;
the family's break-even basis (:func:`fitted`)."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pandas as pd

from gpuscale.advice.calibrate.fits import fit_compute
from gpuscale.advice.calibrate.fixed_split import one_rank_own
from gpuscale.advice.calibrate.rows import (
    HARDWARE_COLUMNS,
    as_step_model,
    same_hardware,
)
from gpuscale.advice.calibration import Benched, FamilyBasis
from gpuscale.advice.model.compute import Compute
from gpuscale.advice.model.fixed_cost import line
from gpuscale.advice.model.hardware import ceiling
from gpuscale.advice.model.network import collectives
from gpuscale.advice.model.priors import DEFAULT_BUCKET_MB
from gpuscale.advice.records import trusted_runs
from gpuscale.advice.types import Finding
from gpuscale.advice.types import FindingKind as K
from gpuscale.analysis.critical_batch import NoiseScale, noise_scale
from gpuscale.bench.support import support
from gpuscale.interconnect.network import Network

# A no-sync slowdown that falls by less than this share from fewer devices to more is
# run-to-run noise, not said (the step model holds it all the same).
FALL_NOISE = 0.05


def falling(slowdown: tuple[tuple[int, float], ...]) -> Finding | None:
    """A warning where the bench measured less contention at more devices, by more than
    ``FALL_NOISE``; None where it never fell."""
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
    """The no-sync slowdown per N (the median no-sync step at N over the same configuration's
    at N = 1), the most specific ``levels`` that measured it winning, and where it was read."""
    slowdown: dict[int, float] = {}
    read = Finding.of(K.CONTENTION_FROM, level="none")
    base = single.drop_duplicates("config_group", keep="last").set_index("config_group")
    for rows_at, level in zip(levels, ("configuration", "family", "own"), strict=True):
        if rows_at.empty or single.empty:
            continue
        reference = rows_at["config_group"].map(base["nosync_step_ms_mean"]).astype(float)
        ratio = rows_at["nosync_step_ms_mean"].astype(float) / reference
        medians = ratio.groupby(rows_at["accelerators"]).median().dropna()
        found = {int(n): float(f) for n, f in medians.items() if f > 0}
        if found:
            slowdown.update(found)
            at = tuple(
                Finding.of(K.NO_SYNC_AT, slowdown=f, devices=n) for n, f in sorted(found.items())
            )
            read = Finding.of(K.CONTENTION_FROM, level=level, family=family, found=at)
    return slowdown, read


def comm_scale(levels: tuple[pd.DataFrame, ...], network: Network) -> tuple[float | None, pd.Index]:
    """The communication scale on ``network`` (the median of measured over predicted) of the
    most specific ``levels`` that measured it, and the rows it was read from; (None, no
    rows) where none did."""
    found, comm_rows = None, pd.Index([])
    if not levels:
        return found, comm_rows
    # per N > 1 row of the first level (every level is a part of it): measured over predicted
    rows = levels[0].dropna(subset=["comm_ms", "grad_bytes_per_step"])
    ratios = pd.Series(np.nan, index=levels[0].index, dtype=float)
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
            predicted[key] = collectives(
                network, grad, n, bucket_mb=key[2], strategy="fsdp" if fsdp else "ddp"
            ).comm_s
        if predicted[key] > 0 and comm > 0:
            ratios[index] = comm / (predicted[key] * 1e3)
    for rows_at in levels:  # the median of measured over predicted at each level
        at = ratios.loc[rows_at.index].dropna()
        if len(at) and (scale := float(at.median())):
            found, comm_rows = scale, at.index
    return found, comm_rows


def read_comm(cal: Benched, table: pd.DataFrame, network: Network) -> tuple[Benched, Network]:
    """``cal`` with its communication scale read on ``network`` and the runs it was read
    from, and ``network`` scaled by it."""
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


def fitted(table: pd.DataFrame, cal: Benched) -> FamilyBasis | None:
    """The family basis of ``cal``'s model: every member benched in its configuration and
    strategy, unflagged, the latest run of each, their compute and no-sync slowdown; None
    with fewer than two sizes."""
    rows = trusted_runs(as_step_model(table))
    of = cal.bench
    own = rows[(rows["model"] == of.bench_model) & (rows["config_group"] == of.config_group)]
    if own.empty:
        return None
    like = own.iloc[-1]
    hardware = same_hardware(rows, like, (*HARDWARE_COLUMNS, "strategy"))
    single = hardware[(hardware["accelerators"] == 1) & (hardware["family"] == like["family"])]
    single = single.dropna(subset=["params", "flops_per_sample", "optimizer_ms"])
    single = single.groupby("model", sort=False).tail(1).sort_values("params")
    mparams = (single["params"] / 1e6).to_numpy(float)
    fit = fit_compute(single)
    if len(np.unique(mparams)) < 2 or fit is None:
        return None
    fixed, tflops, _ = fit
    peak, _ = ceiling(
        like["device"], like.get("threads"), like.get("peak_tflops"), like.get("precision")
    )
    tflops = min(tflops, peak)
    opt = line(list(zip(mparams, single["optimizer_ms"].to_numpy(float), strict=True)))
    ddp_rows = single.dropna(subset=["ddp_overhead_ms"])
    ddp_x = (ddp_rows["params"] / 1e6).to_numpy(float)
    ddp = (
        line(list(zip(ddp_x, ddp_rows["ddp_overhead_ms"].to_numpy(float), strict=True)))
        if len(np.unique(ddp_x)) >= 2
        else (0.0, 0.0)
    )
    fb = single["forward_ms"] + single["backward_ms"]
    multi = hardware[hardware["accelerators"] > 1]
    family_multi = multi[multi["family"] == like["family"]]
    slowdown, _ = slowdowns(
        hardware[hardware["accelerators"] == 1],
        (multi, family_multi, family_multi),
        str(like["family"]),
    )
    jitter: list[float] = []  # every member's N = 1 no-sync steps over their own mean, pooled
    for samples in single["nosync_step_ms_samples"]:
        if isinstance(samples, tuple | list) and len(samples) > 1:
            mean = float(np.mean(samples))
            jitter += [float(s) / mean for s in samples if mean > 0]
    compute = Compute(
        tflops=tflops,
        fixed_ms=fixed,
        backward_share=float((single["backward_ms"] / fb).median()),
        jitter_ms=tuple(jitter),
        jitter_ref_ms=float(bool(jitter)),  # 1: the spreads are shares of the step
        slowdown=tuple(sorted(slowdown.items())),
        # FSDP's own work one device without it does not do: the members' median
        one_rank_own_ms=float(np.median([one_rank_own(r) for _, r in single.iterrows()])),
    )
    return FamilyBasis(
        family=str(like["family"]),
        members=tuple(str(m) for m in single["model"]),
        flops_per_param=float((single["flops_per_sample"] / single["params"]).median()),
        compute=compute,
        opt_ms=opt,
        ddp_ms=ddp,
    )

"""Bench rows read as the step model takes them: per micro-step where the run accumulated
gradients, and an FSDP run's step at N = 1 taken whole as its compute.

* Accumulation (``accum`` k > 1): the bench times one optimizer step of k micro-batches
  (``bench/steps.py``): its forward and backward phases are summed over the k, its
  optimizer runs once, DDP's copies once (the last micro-step synchronises), and the
  bare module's plain steps (``plain_step_ms_mean``, the small batch's, the fixed cost's
  intercept) are k micro-steps plus one optimizer step. The step model's micro-step is
  ``(forward + backward) / k`` and its fixed cost ``(intercept - optimizer) / k``; a
  step of batch b with k micro-steps is ``b k`` samples (a walk: tf-7m benched at batch
  32 with ``--accum 4``, 128 samples in 53.7 ms, was read as one step of 32 samples,
  3.6x below what was measured, and split over 2 devices).
* FSDP: the no-sync step (``set_requires_gradient_sync(False)``) is not the step FSDP
  trains with (tf-30m on an H100: 26.2 ms no-sync, 36.2 ms synchronised). At N = 1 FSDP
  communicates nothing: its measured step is the compute, the forward and backward
  scaled to it, and no DDP overhead is read from it. FSDP's own work
  (``fsdp_overhead_ms``, the bench table's, ``bench.table.fsdp_own``) is at least the
  synchronised-minus-no-sync gap (the reduce-scatter and the resharding, which no bare
  module does): a fixed per-step cost that a smaller per-device batch does not shrink
  (``fsdp_fixed``; a walk: tf-30m's 10.1 ms was split over the devices with the batch,
  1.3 ms of it at N = 8). The plain step of an FSDP run (36.5 ms) is no bare module:
  FSDP2's ``fully_shard`` shards the module in place, so the bench's plain step times the
  sharded module; reading FSDP's work as the step less it gave 0 ms by construction (a
  walk: FSDP 1.47x on 2 devices against DDP's 1.07x).

Contention: What a model's N > 1 bench runs measured beyond its compute: the no-sync step's growth
over N = 1 (waiting for the slowest device, contention for shared cores) and the
communication DDP timed over what the network predicts for the same buckets (on CPU
above 1: the all-reduce shares the cores with backward). Read at the most specific level
that measured it (``contention``).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np
import pandas as pd

from gpuscale.advice.inputs import OneDevice
from gpuscale.advice.model.fixed_cost import FixedCost, cpu_peak
from gpuscale.advice.model.network import DEFAULT_BUCKET_MB, Network, comm_times_s
from gpuscale.advice.model.step import per_step_ms
from gpuscale.advice.types import Source
from gpuscale.analysis.critical_batch import NoiseScale, noise_scale
from gpuscale.bench.support import support
from gpuscale.quantities import format_ms, number

# Columns holding k plain micro-steps plus one optimizer step (the bare module at N = 1).
_PLAIN_STEPS = (
    "plain_step_ms_mean",
    "small_batch_step_ms_mean",
    "fixed_ms",
    "fixed_ms_low",
    "fixed_ms_high",
)


def as_step_model(table: pd.DataFrame) -> pd.DataFrame:
    """``table`` with every row's phases per micro-step and FSDP's N = 1 step as its
    compute (see the module docstring); the measured steps and rates left as they are."""
    if table.empty:
        return table
    out = table.copy()
    opt = out["optimizer_ms"].astype(float).fillna(0.0)
    fsdp = (out["strategy"] == "fsdp") & (out["accelerators"] == 1)
    fb = (out["forward_ms"] + out["backward_ms"]).astype(float)
    whole = (out["step_ms_mean"].astype(float) - opt) / fb
    scale = whole.where(fsdp & (fb > 0) & (whole > 0), 1.0)
    accum = out["accum"].astype(float).fillna(1.0).clip(lower=1.0)
    for column in ("forward_ms", "backward_ms"):
        out[column] = out[column].astype(float) * scale / accum
    for column in _PLAIN_STEPS:
        if column in out.columns:
            out[column] = (out[column].astype(float) - opt) / accum + opt
    out["ddp_overhead_ms"] = out["ddp_overhead_ms"].where(out["strategy"] != "fsdp")
    # no CPU records a peak: its threads' ceiling at the run's precision stands in for it
    # (fixed_cost.cpu_peak), the bound and the price of its work (fp32 work was priced at
    # AMX's bf16 8 TFLOP/s a thread)
    cpu = (out["device"] == "cpu") & out["peak_tflops"].isna()
    if cpu.any():
        out["peak_tflops"] = out["peak_tflops"].astype(float)
        on = out.loc[cpu]
        out.loc[cpu, "peak_tflops"] = [
            cpu_peak(t, p) for t, p in zip(on["threads"], on["precision"], strict=True)
        ]
    return out


def fsdp_fixed(row: pd.Series, fb_ms: float, own: FixedCost | None) -> FixedCost | None:
    """An FSDP run's fixed per-step cost: its own work at N = 1 (``fsdp_overhead_ms``),
    where that is more than the fixed cost measured otherwise (``own``, else none)."""
    gap = row.get("fsdp_overhead_ms")
    if row["strategy"] != "fsdp" or gap is None or pd.isna(gap) or not gap > 0:
        return own
    accum = int(row["accum"]) if pd.notna(row["accum"]) else 1
    ms = min(float(gap) / max(accum, 1), fb_ms * (1 - 1e-6))  # per micro-step, as fixed_ms
    if own is not None and own.ms >= ms:
        return own
    return FixedCost.exact(
        ms,
        source=Source.MEASURED,
        basis=f"FSDP's own work at N = 1, {fsdp_own_basis(row)}: once per step over the "
        "whole model, which a smaller per-device batch does not shrink",
        at_batch=float(row["batch_per_device"]),
    )


def fsdp_own_basis(row: pd.Series) -> str:
    """What an FSDP row's own work (``fsdp_overhead_ms``) was read from, with its numbers:
    its synchronised minus no-sync step, or its step less the plain one where that is
    larger (``bench.table.fsdp_own``: FSDP2 shards the module in place, so an FSDP run's
    plain step times the sharded module, not a bare one)."""
    gap = row.get("fsdp_overhead_ms")
    own = format_ms(float(gap)) if gap is not None and pd.notna(gap) else "unmeasured"
    step, plain = row.get("step_ms_mean"), row.get("plain_step_ms_mean")
    nosync = row.get("nosync_step_ms_mean")
    timed = [v is not None and pd.notna(v) for v in (step, plain, nosync)]
    if all(timed[::2]) and not (
        timed[1] and float(step) - float(plain) > float(step) - float(nosync)
    ):
        said = (
            f"{own}: its synchronised step ({format_ms(float(step))}) less its no-sync step "
            f"({format_ms(float(nosync))}): the gradients' reduce-scatter and the resharding"
        )
        if timed[1]:
            said += (
                f"; its plain step ({format_ms(float(plain))}) is the sharded module "
                "(fully_shard shards in place), no bare module, so the step less it is no "
                "measure of FSDP's work"
            )
        return said
    if timed[0] and timed[1]:
        less = f"its plain step ({format_ms(float(plain))})"
        return f"{own}: its step ({format_ms(float(step))}) less {less}"
    return f"{own}: its synchronised minus no-sync step"


def accumulation_note(row: pd.Series) -> str:
    """How a run that accumulated gradients was read ("" for one that did not)."""
    k = int(row["accum"]) if pd.notna(row["accum"]) else 1
    if k <= 1:
        return ""
    b = int(row["batch_per_device"])
    return (
        f"{row['model']} was benched with gradient accumulation ({k} micro-batches of {b} "
        f"per optimizer step, {b * k} samples per device): its forward and backward are read "
        f"per micro-batch ({format_ms(float(row['forward_ms'] + row['backward_ms']))} the "
        "two together), "
        "the optimizer and DDP's copies once per step, and the advice keeps its "
        f"{b * k} samples per device-step"
    )


def fsdp_note(row: pd.Series) -> str:
    """How an FSDP run's N = 1 step was read ("" for another strategy)."""
    if row["strategy"] != "fsdp":
        return ""
    return (
        f"{row['model']} was benched with FSDP: its N = 1 step "
        f"({format_ms(float(row['step_ms_mean']))}) is taken whole as compute (FSDP "
        "communicates nothing on one device); FSDP's own work, a fixed per-step cost, "
        f"{fsdp_own_basis(row)}"
    )


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


def slowdowns(
    single: pd.DataFrame, levels: tuple[pd.DataFrame, ...], family: str
) -> tuple[dict[int, float], str]:
    """The no-sync slowdown per N, the most specific ``levels`` (every model of the
    configuration, the family, the model's own runs) that measured it winning, and where
    it was read."""
    labels = ("every model of this configuration", f"the {family} family", "its own runs")
    slowdown: dict[int, float] = {}
    read = "no N > 1 run: the N > 1 figures are extrapolated"
    for rows_at, label in zip(levels, labels, strict=True):
        found = dict(_slowdown(rows_at, single))
        if found:
            slowdown.update(found)
            read = f"{label} ({_contention_text(found)})"
    return slowdown, read


def comm_scale(levels: tuple[pd.DataFrame, ...], network: Network) -> tuple[float | None, pd.Index]:
    """The communication scale on ``network`` (measured over predicted, the median), the
    most specific of ``levels`` (N > 1 rows, each a part of the first) that measured it
    winning, and the rows it was read from; (None, no rows) where none did."""
    found, comm_rows = None, pd.Index([])
    if not levels:
        return found, comm_rows
    ratios = _comm_ratios(levels[0], network)  # every level is a part of the first
    for rows_at in levels:
        if scale := _comm_scale(ratios.loc[rows_at.index]):
            found, comm_rows = scale, ratios.loc[rows_at.index].dropna().index
    return found, comm_rows


def read_comm(cal: Any, table: pd.DataFrame, network: Network) -> tuple[Any, Network]:
    """``cal`` (a ``Calibration``) with its communication scale read on ``network``
    (:func:`comm_scale` of its ``comm_levels``: its own runs reproduce its calibration
    point; its family's, else all, without) and the runs of ``table`` it was read from,
    and ``network`` scaled by it (``Network.scaled``), once."""
    scale, rows = comm_scale(cal.comm_levels, network)
    if scale is None:
        return cal, network
    found = support(cal.comm_levels[0].loc[rows], table)
    return replace(cal, comm_scale=scale, comm_support=found), network.scaled(scale)


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


def one_device(cal: Any) -> OneDevice | None:
    """The calibrated N = 1 run as it trained: its step, batch, strategy and DDP's own work
    in it (the N = 1 row is predicted without DDP: said beside it)."""
    if not cal.one_step_ms > 0:
        return None
    own = 0.0
    if cal.strategy == "ddp":
        own = per_step_ms(cal.compute.ddp_ms_per_mparam, cal.model.params)
    return OneDevice(
        cal.one_step_ms,
        cal.batch,
        cal.accum,
        cal.strategy,
        own,
        config_group=cal.config_group,
        device_name=cal.device_name,
    )


def which_configuration(rows: pd.DataFrame, row: pd.Series) -> list[str]:
    """Where the model ran in several precisions or strategies, which one the advice is
    on (the latest N = 1 run's), said."""
    own = rows[(rows["model"] == row["model"]) & (rows["accelerators"] == 1)]
    kinds = own[["precision", "tf32", "strategy"]].astype(str).drop_duplicates()
    if len(kinds) < 2:
        return []
    return [
        f"{row['model']} ran in {len(kinds)} configurations; this advice is on its "
        f"{row['precision']} {row['strategy']} runs (TF32 {row['tf32']}), the latest"
    ]

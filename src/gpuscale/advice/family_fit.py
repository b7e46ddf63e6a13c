"""The family basis fitted over the bench's N = 1 runs (``family.FamilyBasis``): every
member of the advised model's family benched in its configuration (device, backend,
precision, TF32, threads, strategy), unflagged, the latest run of each. None with fewer
than two sizes (the member alone is then the basis, said)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from gpuscale.advice import contention as measured_contention
from gpuscale.advice.bench_reading import as_step_model
from gpuscale.advice.calibrate import HARDWARE_COLUMNS, fit_compute, same_hardware
from gpuscale.advice.family import FamilyBasis
from gpuscale.advice.fixed_cost import ceiling, line
from gpuscale.advice.model import Compute
from gpuscale.advice.network import Network


def _jitter(rows: pd.DataFrame) -> tuple[float, ...]:
    """Every member's N = 1 no-sync steps over their own mean, pooled (the wait's spread
    as a share of the step, ``Compute.jitter_ref_ms`` 1)."""
    pooled: list[float] = []
    for samples in rows["nosync_step_ms_samples"]:
        if isinstance(samples, tuple | list) and len(samples) > 1:
            mean = float(np.mean(samples))
            pooled += [float(s) / mean for s in samples] if mean > 0 else []
    return tuple(pooled)


def fitted(table: pd.DataFrame, cal: Any, network: Network) -> FamilyBasis | None:
    """The family basis of ``cal``'s model (a ``calibrate.Calibration``) from ``table``."""
    rows = as_step_model(table)
    rows = rows[(rows["status"] == "ok") & ~rows["flagged"].fillna(False).astype(bool)]
    own = rows[(rows["model"] == cal.bench_model) & (rows["config_group"] == cal.config_group)]
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
    slowdown, *_ = measured_contention.contention(
        hardware[hardware["accelerators"] == 1],
        (multi, family_multi, family_multi),
        str(like["family"]),
        network,
    )
    jitter = _jitter(single)
    compute = Compute(
        tflops=tflops,
        fixed_ms=fixed,
        backward_share=float((single["backward_ms"] / fb).median()),
        jitter_ms=jitter,
        jitter_ref_ms=1.0 if jitter else 0.0,
        slowdown=tuple(sorted(slowdown.items())),
    )
    return FamilyBasis(
        family=str(like["family"]),
        members=tuple(str(m) for m in single["model"]),
        flops_per_param=float((single["flops_per_sample"] / single["params"]).median()),
        compute=compute,
        opt_ms=opt,
        ddp_ms=ddp,
    )

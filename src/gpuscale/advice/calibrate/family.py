"""The family basis fitted over the bench's N = 1 runs (``family.FamilyBasis``): every
member of the advised model's family benched in its configuration (device, backend,
precision, TF32, threads, strategy), unflagged, the latest run of each. None with fewer
than two sizes (the member alone is then the basis, said).

By numbers: A model given by its numbers (``--params``, ``--flops-per-sample``) advised from a
bench file that does not hold it: the device's rate for the model's family, as the bench
measured it, applied to the given parameters and FLOPs.

The family is the one asked for (``--family``), else inferred: the bench's family whose
FLOPs per parameter per sample are nearest the given model's (log distance; an MLP does
~6, a CNN or transformer several hundred), and the advice says it was inferred. Within
the family the model nearest in parameters is calibrated (``calibrate``): its family's
achieved rate ``R``, its fixed cost or launch-bound floor and its optimizer time per
parameter carry over; its own measured batches do not (they are another model's). With
neither FLOPs nor a family there is nothing to choose by: refused, saying what to give.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np
import pandas as pd

from gpuscale.advice.calibrate.calibration import (
    HARDWARE_COLUMNS,
    as_asked,
    calibrate,
    default_model,
    same_hardware,
)
from gpuscale.advice.calibrate.fits import fit_compute
from gpuscale.advice.calibrate.link import cpu_processes, on_bench_host_link
from gpuscale.advice.calibrate.measured import slowdowns
from gpuscale.advice.calibrate.rows import CalibrationError, NamedCalibrationError, as_step_model
from gpuscale.advice.inputs import Basis
from gpuscale.advice.model.fixed_cost import ceiling, line
from gpuscale.advice.model.step import Compute, FamilyBasis, ModelSpec
from gpuscale.advice.request import AdviceRequest
from gpuscale.advice.types import Source, trusted_runs, words
from gpuscale.quantities import format_count, number
from gpuscale.tables.requests import ref


def _jitter(rows: pd.DataFrame) -> tuple[float, ...]:
    """Every member's N = 1 no-sync steps over their own mean, pooled (the wait's spread
    as a share of the step, ``Compute.jitter_ref_ms`` 1)."""
    pooled: list[float] = []
    for samples in rows["nosync_step_ms_samples"]:
        if isinstance(samples, tuple | list) and len(samples) > 1:
            mean = float(np.mean(samples))
            pooled += [float(s) / mean for s in samples] if mean > 0 else []
    return tuple(pooled)


def fitted(table: pd.DataFrame, cal: Any) -> FamilyBasis | None:
    """The family basis of ``cal``'s model (a ``calibration.Calibration``) from ``table``:
    its members' compute and the no-sync slowdown they measured (no link: the break-even
    prices the communication on the advice's own network)."""
    rows = as_step_model(table)
    rows = trusted_runs(rows)
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
    slowdown, _ = slowdowns(
        hardware[hardware["accelerators"] == 1],
        (multi, family_multi, family_multi),
        str(like["family"]),
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


def _families(single: pd.DataFrame) -> pd.Series:
    """FLOPs per parameter per sample of each family (median over its models)."""
    rows = single.dropna(subset=["flops_per_sample", "params"])
    ratio = rows["flops_per_sample"].astype(float) / rows["params"].astype(float)
    return ratio.groupby(rows["family"]).median().sort_index()


def representative(table: pd.DataFrame, req: AdviceRequest) -> tuple[str, str, str]:
    """(bench model to calibrate on, its family, a sentence on how it was chosen) for the
    model of ``req.params`` (``CalibrationError`` saying what to give when none can be)."""
    usable = trusted_runs(table)
    single = usable[usable["accelerators"] == 1]
    families = _families(single)
    known = ", ".join(f"{f} ({number(r)} FLOPs per parameter)" for f, r in families.items())
    if single.empty:  # the cause, before any word on families or FLOPs (it asked for the
        # --flops-per-sample already given, "one of: none measured")
        raise CalibrationError(
            "the bench results hold no trustworthy N = 1 run to calibrate a family on"
        )
    if req.family is not None:
        if req.family not in set(single["family"]):
            raise NamedCalibrationError(
                f"the bench results hold no trustworthy N = 1 run of the {req.family!r} family "
                f"(families: {known or 'none'}): give {ref('family')} one of them, or bench a "
                "model of that family (gpuscale bench --model FILE.py:FACTORY --nproc 1)"
            )
        family, how = req.family, "as given"
    elif req.flops_per_sample is None or families.empty:
        raise NamedCalibrationError(
            "a model given by its numbers is advised from the bench's calibration of its "
            f"family: give {ref('flops_per_sample')} (forward + backward FLOPs per sample, "
            f"e.g. from torch.utils.flop_counter) or {ref('family')} (one of: "
            f"{known or 'none measured'})"
        )
    else:
        given = req.flops_per_sample / req.params
        distance = (np.log(families / given)).abs()
        family = str(distance.idxmin())
        how = (
            f"inferred: {number(given)} FLOPs per parameter, nearest the {family} family's "
            f"{number(families[family])} of the bench's {known}; give --family to choose"
        )
    rows = single[single["family"] == family].dropna(subset=["params"])
    sizes = rows.drop_duplicates("model").set_index("model")["params"].astype(float)
    model = str((np.log(sizes / req.params)).abs().idxmin())
    return model, family, f"Family {family} ({how}); calibrated on its nearest in size, {model}"


def adopt(cal: Any, req: AdviceRequest, family: str, how: str) -> Any:
    """``cal`` (a bench model's calibration) carried to the model of ``req``: the
    family's rate, the fixed cost or floor and the optimizer's time per parameter kept,
    its measured batches, memory and noise scale (another model's) dropped."""
    flops = req.flops_per_sample
    flops_note = "the FLOPs given"
    if flops is None:  # the family's FLOPs per parameter, said
        flops = cal.model.flops / cal.model.params * req.params
        flops_note = f"{number(flops / req.params)} FLOPs per parameter, {family}'s as measured"
    spec = ModelSpec(params=float(req.params), flops_per_sample=float(flops))
    compute = replace(cal.compute, measured_ms=())
    fixed = cal.fixed
    note = (
        f"{how} ({format_count(cal.model.params)} parameters): its family's achieved "
        f"{number(compute.tflops)} TFLOP/s and {number(fixed.ms if fixed else 0)} ms fixed "
        f"per step applied to {format_count(req.params)} parameters at {flops_note}; no "
        "batch of this model was measured"
    )
    if fixed is not None:  # an assumed one stays assumed, its range in the interval
        basis = f"{cal.name}'s, of the {family} family"
        fixed = replace(
            fixed,
            source=Source.ASSUMED if fixed.source == Source.ASSUMED else Source.FITTED,
            basis=f"{basis}: {fixed.basis}" if fixed.source == Source.ASSUMED else basis,
            measure=words(
                "`gpuscale bench --model FILE.py:FACTORY --nproc 1 --batch "
                f"{req.batch or cal.batch}` (your model: the bench times it at N = 1 at that "
                "batch and a quarter of it)"
            ),
        )
    return replace(
        cal,
        name=f"a {format_count(req.params)}-parameter {family} model",
        model=spec,
        compute=compute,
        fixed=fixed,
        shape=None,
        max_batch=None,
        memory_note="",
        noise=None,
        notes=(*cal.notes, note),
        measured_steps=cal.measured_steps.iloc[0:0],
    )


def calibration_advised(table: pd.DataFrame, req: AdviceRequest) -> Any:
    """The calibration advised on: the model asked for (else the largest benched), or for
    a model the bench did not measure (``req.params``), its family's representative's."""
    if req.params is not None:  # a model the bench did not measure: its family's rate
        model, named, how = representative(table, req)
        return adopt(calibrate(table, model), req, named, how)
    return calibrate(table, req.model or default_model(table))


def on_bench_host(table: pd.DataFrame, req: AdviceRequest, basis: Basis) -> tuple[Any, Any, Basis]:
    """The calibration advised on (:func:`calibration_advised`), the same as the request
    predicts it (``calibration.as_asked``: the strategy asked, the fixed cost entered), and
    ``basis`` on the link of the host it ran on (``link.on_bench_host_link``; CPU
    processes: their count capped at the host's cores, their link no GPU preset,
    ``link.cpu_processes``)."""
    cal = calibration_advised(table, req)
    asked = as_asked(cal, req.strategy, req.fixed_ms)
    on_host = on_bench_host_link(basis, req, table, cal)
    if cal.device == "cpu":
        on_host = cpu_processes(on_host, req, table, cal)
    return cal, asked, on_host

"""A model given by its numbers (``--params``, ``--flops-per-sample``) advised from a
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

import math
from dataclasses import replace
from typing import Any

import numpy as np
import pandas as pd

from gpuscale.advice.calibrate import CalibrationError, NamedCalibrationError
from gpuscale.advice.model import ModelSpec
from gpuscale.advice.request import AdviceRequest
from gpuscale.advice.types import Source, words
from gpuscale.quantities import format_count, number
from gpuscale.tables.requests import NamedError, ref


def _families(single: pd.DataFrame) -> pd.Series:
    """FLOPs per parameter per sample of each family (median over its models)."""
    rows = single.dropna(subset=["flops_per_sample", "params"])
    ratio = rows["flops_per_sample"].astype(float) / rows["params"].astype(float)
    return ratio.groupby(rows["family"]).median().sort_index()


def representative(table: pd.DataFrame, req: AdviceRequest) -> tuple[str, str, str]:
    """(bench model to calibrate on, its family, a sentence on how it was chosen) for the
    model of ``req.params`` (``CalibrationError`` saying what to give when none can be)."""
    usable = table[(table["status"] == "ok") & ~table["flagged"].fillna(False).astype(bool)]
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


def check(req: AdviceRequest) -> None:
    """A bench model and a model by its numbers are two questions: one at a time."""
    if req.params is not None and req.model is not None:
        raise NamedError(
            f"give {ref('model', req.model)} (a model the bench measured) or "
            f"{ref('params')} (a model by its numbers, advised from its family's "
            "calibration), not both"
        )
    if req.params is not None and not math.isfinite(req.params):
        raise NamedError(f"{ref('params')} must be a finite number")

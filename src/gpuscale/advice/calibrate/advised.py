"""The model a bench file's advice is on (:func:`calibration_advised`), on the bench host's link
(:func:`on_bench_host`): the one asked for, else the largest with a trustworthy N = 1 run; a
model given by its numbers (``--params``) takes its family's calibration
(:func:`representative`, :func:`adopt`): the family asked for (``--family``), else the
bench's nearest in FLOPs per parameter per sample (log distance; an MLP does ~6, a CNN or
transformer several hundred), said as inferred; within it the member nearest in parameters.
With neither FLOPs nor a family there is nothing to choose by: refused."""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pandas as pd

from gpuscale.advice.calibrate.calibration import (
    as_asked,
    calibrate,
    default_model,
)
from gpuscale.advice.calibrate.link import cpu_processes, on_bench_host_link
from gpuscale.advice.calibrate.rows import (
    CalibrationError,
    NamedCalibrationError,
)
from gpuscale.advice.calibration import Benched, Machine, Said
from gpuscale.advice.explain.findings import said
from gpuscale.advice.explain.phrasebook import sentence
from gpuscale.advice.measured_runs import trusted_runs
from gpuscale.advice.model.step import ModelSpec
from gpuscale.advice.request import AdviceRequest
from gpuscale.advice.types import Finding, Source, words
from gpuscale.advice.types import FindingKind as K
from gpuscale.quantities import format_count
from gpuscale.tables.requests import ref


def _families(single: pd.DataFrame) -> pd.Series:
    """FLOPs per parameter per sample of each family (median over its models)."""
    rows = single.dropna(subset=["flops_per_sample", "params"])
    ratio = rows["flops_per_sample"].astype(float) / rows["params"].astype(float)
    return ratio.groupby(rows["family"]).median().sort_index()


def representative(table: pd.DataFrame, req: AdviceRequest) -> tuple[str, str, Finding]:
    """(bench model to calibrate on, its family, the finding of how it was chosen) for the
    model of ``req.params`` (``CalibrationError`` saying what to give when none can be)."""
    usable = trusted_runs(table)
    single = usable[usable["accelerators"] == 1]
    families = _families(single)
    known = tuple(
        Finding.of(K.FAMILY_RATE, family=f, flops_per_param=float(r)) for f, r in families.items()
    )
    if single.empty:  # the cause, before any word on families or FLOPs (it asked for the
        # --flops-per-sample already given, "one of: none measured")
        raise CalibrationError(said(Finding.of(K.NO_SINGLE_RUN_FOR_FAMILY)))
    options = {"family": ref("family"), "flops": ref("flops_per_sample")}
    if req.family is not None:
        if req.family not in set(single["family"]):
            found = Finding.of(K.NO_SINGLE_RUN_OF_FAMILY, asked=req.family, known=known, **options)
            raise NamedCalibrationError(said(found))
        family, given = req.family, None
    elif req.flops_per_sample is None or families.empty:
        found = Finding.of(K.FAMILY_NEEDED, known=known, **options)
        raise NamedCalibrationError(said(found))
    else:
        given = req.flops_per_sample / req.params
        distance = (np.log(families / given)).abs()
        family = str(distance.idxmin())
    rows = single[single["family"] == family].dropna(subset=["params"])
    sizes = rows.drop_duplicates("model").set_index("model")["params"].astype(float)
    model = str((np.log(sizes / req.params)).abs().idxmin())
    how = Finding.of(
        K.FAMILY_CHOSEN,
        family=family,
        inferred=given is not None,
        flops_per_param=given,
        family_flops_per_param=float(families.get(family, math.nan)),
        known=known,
        model=model,
    )
    return model, family, how


def adopt(cal: Benched, req: AdviceRequest, family: str, how: Finding) -> Benched:
    """``cal`` (a bench model's calibration) carried to the model of ``req``: its rate, fixed
    cost or floor, optimizer time per parameter and DDP's work beside its bucket copies kept
    (the copies resized); its batches, memory and noise scale (another model's) dropped."""
    of, bench = cal.model, cal.bench
    flops = req.flops_per_sample
    measured_per_param = None  # the family's FLOPs per parameter, where none were given
    if flops is None:
        flops = of.spec.flops / of.spec.params * req.params
        measured_per_param = flops / req.params
    spec = ModelSpec(params=float(req.params), flops_per_sample=float(flops))
    part = cal.device.part  # DDP's rest a step (hooks) kept, its copies resized
    bandwidth, own = getattr(part, "memory_bw_gbs", None), of.compute.ddp_ms_per_mparam
    rest = (own - of.spec.ddp_ms_per_mparam(0.0, bandwidth)) * of.spec.params / 1e6
    ddp = spec.ddp_ms_per_mparam(max(rest, 0.0), bandwidth)
    compute = replace(of.compute, measured_ms=(), ddp_ms_per_mparam=ddp)
    fixed = of.fixed
    note = Finding.of(
        K.ADOPTED,
        how=(how,),
        params_of=of.spec.params,
        tflops=compute.tflops,
        fixed_ms=getattr(fixed, "ms", 0),
        params=req.params,
        flops_given=measured_per_param is None,
        flops_per_param=measured_per_param,
        family=family,
    )
    if fixed is not None:
        source, basis = Source.FITTED, f"{of.name}'s, of the {family} family"
        if fixed.source == Source.ASSUMED:  # it stays assumed, its range in the interval
            source, basis = Source.ASSUMED, f"{basis}: {fixed.basis}"
        fixed = replace(
            fixed,
            source=source,
            basis=basis,
            measure=words(sentence("bench_own_model", batch=req.batch or cal.run.batch)),
        )
    model = replace(
        of,
        name=f"a {format_count(req.params)}-parameter {family} model",
        spec=spec,
        compute=compute,
        fixed=fixed,
    )
    dropped = replace(
        bench,
        shape=None,
        max_batch=None,
        memory_note=None,
        noise=None,
        notes=(*bench.notes, note),
        measured_steps=bench.measured_steps.iloc[0:0],
    )
    return replace(cal, model=model, bench=dropped)


def calibration_advised(table: pd.DataFrame, req: AdviceRequest) -> Benched:
    """The calibration advised on: the model asked for (else the largest benched), or for
    a model the bench did not measure (``req.params``), its family's representative's."""
    if req.params is not None:  # a model the bench did not measure: its family's rate
        model, named, how = representative(table, req)
        return adopt(calibrate(table, model), req, named, how)
    return calibrate(table, req.model or default_model(table))


def on_bench_host(
    table: pd.DataFrame, req: AdviceRequest, machine: Machine, said: Said
) -> tuple[Benched, Benched, Machine, Said]:
    """The calibration advised on (:func:`calibration_advised`), the same as the request
    predicts it (``calibration.as_asked``: the strategy asked, the fixed cost entered), and
    ``machine`` on the link of the host it ran on, with where it came from
    (``link.on_bench_host_link``; CPU processes: their count capped at the host's cores,
    their link no GPU preset, ``link.cpu_processes``)."""
    cal = calibration_advised(table, req)
    asked = as_asked(cal, req.strategy, req.fixed_ms)
    machine, said = on_bench_host_link(machine, said, table, cal)
    if cal.bench.device_kind == "cpu":
        machine, said = cpu_processes(machine, said, req, table, cal)
    return cal, asked, machine, said

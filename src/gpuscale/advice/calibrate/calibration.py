"""One model calibrated on the bench's unflagged rows (:func:`calibrate`): the fixed cost and
rate of its N = 1 run (``t_fb = t_fixed + b F / R``), DDP's own cost (synchronised minus
no-sync step, per parameter), the overlap (``1 - exposed / comm``); a ``--params`` model
from its family's (:func:`of_size`)."""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pandas as pd

from gpuscale.advice.calibrate import fits, memory
from gpuscale.advice.calibrate.errors import (
    BenchFieldError,
    CalibrationError,
    NamedCalibrationError,
)
from gpuscale.advice.calibrate.fits import noise, slowdowns
from gpuscale.advice.calibrate.rows import (
    Usable,
    as_step_model,
    default_model,
    same_hardware,
    trusted,
)
from gpuscale.advice.calibration import Bench, Calibration, Machine, Run, Runs, StepModel
from gpuscale.advice.model import fixed_cost, priors
from gpuscale.advice.model.hardware import device_record
from gpuscale.advice.model.network import MeasuredComm
from gpuscale.advice.model.step import Compute, ModelSpec, per_step_ms, rate_tflops, work_ms
from gpuscale.advice.request import AdviceRequest
from gpuscale.advice.types import OWN_MODEL, BenchRun, Finding, Measure, Source, trusted_runs
from gpuscale.advice.types import FindingKind as K
from gpuscale.tables.bench import cell
from gpuscale.tables.requests import ref


def single(rows: pd.DataFrame, **same: object) -> pd.DataFrame:
    keep = rows["accelerators"] == 1
    for column, value in same.items():
        keep &= rows[column] == value
    return rows[keep]


def _whose(note: str | Finding, model: str) -> str | Finding:
    """The note on the flagged runs left out (``FLAGGED_LEFT_OUT``) with whether any is
    another model's than ``model``: one model's runs calibrate another's contention,
    overlap and communication, so its flagged runs are left out of both."""
    if not isinstance(note, Finding) or note.kind is not K.FLAGGED_LEFT_OUT:
        return note
    others = any(run["model"] != model for run in note.findings("pairs"))
    return Finding(note.kind, (*note.values, ("others", others)))


def calibrate(table: pd.DataFrame, model: str) -> Calibration:
    """All the bench measured of ``model``, its communication as numbers (``measured_comm``)
    to be read on the link advised (``model.network.comm_scale``)."""
    rows, notes = trusted(as_step_model(table))  # per micro-step; FSDP's step whole
    notes = [_whose(note, model) for note in notes]
    runs_of = single(rows, model=model)  # its latest N = 1 run, with every phase
    if runs_of.empty:
        known = tuple(sorted(single(rows)["model"].unique()))
        raise CalibrationError(Finding.of(K.NO_SINGLE_RUN_OF, model=model, known=known))
    row = runs_of.iloc[-1]
    needed = ("forward_ms", "backward_ms", "optimizer_ms", "batch_per_device", "params")
    if missing := [c for c in needed if pd.isna(row[c])]:
        raise CalibrationError(Finding.of(K.RUN_LACKS, model=model, missing=tuple(missing)))
    k, batch = cell(row, "accum", int, 1), int(row["batch_per_device"])
    fb = float(row["forward_ms"] + row["backward_ms"])
    if k > 1:  # its step accumulated ``k`` micro-batches
        notes.append(
            Finding.of(
                K.ACCUMULATED,
                model=model,
                micro=k,
                batch=batch,
                samples=batch * k,
                forward_backward_ms=fb,
            )
        )
    if row["strategy"] == "fsdp":
        step_ms = float(row["step_ms_mean"])
        notes.append(Finding.of(K.FSDP_NOTE, model=model, step=step_ms, basis=fits.fsdp_own(row)))
    # where the model ran in several configurations, which one the advice is on
    kinds = runs_of[["precision", "tf32", "strategy"]].astype(str).drop_duplicates()
    if len(kinds) >= 2:
        notes.append(
            Finding.of(
                K.CONFIGURATIONS,
                model=model,
                configurations=len(kinds),
                precision=row["precision"],
                strategy=row["strategy"],
                tf32=row["tf32"],
            )
        )
    hardware = same_hardware(rows, row)
    if other := len(rows) - len(hardware):
        notes.append(Finding.of(K.OTHER_HARDWARE_LEFT_OUT, runs=other))
    # the compute of its N = 1 run, its model and the split of its step
    flops, params = row["flops_per_sample"], float(row["params"])
    if pd.isna(flops) or flops <= 0:
        notes.append(Finding.of(K.FLOPS_NOT_COUNTED, model=model))
        flops = 6.0 * params
    spec = ModelSpec(params=params, flops_per_sample=float(flops))
    ones = single(hardware)  # the family's fit, else every model's
    family_ones = single(hardware, family=row["family"])
    fit = fits.fit_compute(family_ones) or fits.fit_compute(ones)
    split = fits.split(row, spec, fit)
    fixed, how = split.cost, Finding.of(K.COMPUTE_FROM, note=split.note)
    # its N = 1 runs of one micro-step at each batch: the shape of its step, its memory
    plain = single(hardware, model=model, strategy=row["strategy"])
    plain = plain[plain["accum"].fillna(1) == 1]
    plain = plain.dropna(subset=["forward_ms", "backward_ms", "batch_per_device"])
    tflops, fixed_ms, floor_ms = split.tflops, split.fixed_ms, split.floor_ms
    measured_ms: tuple[tuple[float, float], ...] = ()
    shape = None
    if k == 1 and plain["batch_per_device"].nunique() >= 2:
        steps = plain["forward_ms"] + plain["backward_ms"]
        points = list(zip(plain["batch_per_device"], steps, strict=True))
        shape = fits.fit_with_error(points, work_ms(1.0, spec.flops, tflops))
        tflops = rate_tflops(1, spec.flops, shape.ms_per_sample)
        fixed_ms, floor_ms, measured_ms = shape.fixed_ms, shape.floor_ms, shape.points
        # the model's own batches replace the family's line: its floor, else the intercept
        floor = shape.knee is not None
        fixed = fixed_cost.FixedCost.exact(
            shape.floor_ms if floor else shape.fixed_ms,
            source=Source.MEASURED,
            basis=Finding.of(K.SHAPE_FIXED, floor=floor, batches=tuple(b for b, _ in shape.points)),
            at_batch=float(batch),
        )
        how = Finding.of(K.COMPUTE_OWN_BATCHES, batches=len(shape.points))
    elif k == 1:
        # the calibrated row's own step: with two runs at one batch, mixing the first run's
        # step with the last run's split can make batch 33 faster than batch 32
        measured_ms = ((float(batch), fb),)
    notes.append(how)
    device = device_record(cell(row, "device_name", str))
    # the largest batch the peak memory of its N = 1 runs allows (on a GPU of known size)
    size = memory.device_memory_bytes(cell(row, "device_memory_bytes", float), device)
    max_batch, memory_note = None, None
    if row.get("device") == "cuda" and size is not None:
        peaks = plain.dropna(subset=["peak_memory_bytes"])
        points = list(zip(peaks["batch_per_device"], peaks["peak_memory_bytes"], strict=True))
        max_batch, memory_note = memory.largest_batch(points, size) or (None, None)
    multi = hardware[hardware["accelerators"] > 1]
    own = multi[multi["config_group"] == row["config_group"]].sort_values("accelerators")
    family = multi[multi["family"] == row["family"]]
    slowdown, contention = slowdowns(ones, (multi, family, own), row["family"])
    notes.append(contention)
    mparams = params / 1e6
    backward_share = float(row["backward_ms"]) / fb if fb > 0 else 2 / 3
    samples = row.get("nosync_step_ms_samples")
    samples = tuple(float(v) for v in samples) if isinstance(samples, tuple | list) else ()
    compute = Compute(
        tflops=tflops,
        fixed_ms=fixed_ms,
        floor_ms=floor_ms,
        opt_ms_per_mparam=float(row["optimizer_ms"]) / mparams,
        ddp_ms_per_mparam=cell(row, "ddp_overhead_ms", float, 0.0) / mparams,
        backward_share=min(1.0, max(0.0, backward_share)),
        jitter_ms=samples,
        jitter_ref_ms=float(np.mean(samples)) if samples else 0.0,
        one_rank_own_ms=fits.one_rank_own(row),  # one device runs the bare module
        measured_ms=measured_ms,
        slowdown=tuple(sorted(slowdown.items())),
    )
    overlap = None
    if own["overlap"].notna().any():
        # its smallest count measured, the median of its runs there
        timed = own.dropna(subset=["overlap"])
        first = timed[timed["accelerators"] == timed["accelerators"].min()]
        overlap = float(first["overlap"].median())
    elif multi["overlap"].notna().any():
        overlap = float(multi["overlap"].median())
        notes.append(Finding.of(K.OVERLAP_OF_OTHERS, model=model))
    run = Run(
        batch=batch,
        accum=k,
        strategy="fsdp" if row["strategy"] == "fsdp" else "ddp",
        bucket_mb=cell(row, "bucket_mb", float, priors.DEFAULT_BUCKET_MB),
        overlap=overlap,
    )
    # the N = 1 run as it trained, with the strategy's own work in it (FSDP's, DDP's)
    own_ms = k * compute.one_rank_own_ms
    if run.strategy == "ddp":
        own_ms = per_step_ms(compute.ddp_ms_per_mparam, spec.params)
    one_step_ms = float(row["step_ms_mean"])
    fsdp_own_ms = cell(row, "fsdp_overhead_ms", float, 0.0) if run.strategy == "fsdp" else 0.0
    one = Runs(
        own_model=model,
        one_step_ms=one_step_ms,
        one_batch=batch,
        one_accum=k,
        one_strategy=run.strategy,
        one_own_ms=own_ms,
        one_device_name=device.name,
        one_fsdp_own_ms=fsdp_own_ms,
    )
    return Calibration(
        model=StepModel(name=model, spec=spec, compute=compute, fixed=fixed),
        run=run,
        machine=Machine(device=device),
        runs=one if one_step_ms > 0 else Runs(own_model=model),
        bench=Bench(
            bench_model=model,
            config_group=str(row["config_group"]),
            device_kind=cell(row, "device", str),
            threads=cell(row, "threads", int),
            shape=shape,
            noise=noise(own),
            comm=measured_comm((multi, family, own)),
            max_batch=max_batch,
            memory_note=memory_note,
            notes=tuple(notes),
        ),
    )


def measured_comm(levels: tuple[pd.DataFrame, ...]) -> MeasuredComm:
    """The communication ``levels``' runs measured (each level a part of the first), as
    numbers: the runs that recorded their comm and gradient bytes, a bucket not recorded at
    DDP's default."""
    rows = levels[0].dropna(subset=["comm_ms", "grad_bytes_per_step"])
    columns = zip(
        rows["grad_bytes_per_step"].to_numpy(float),
        rows["accelerators"].to_numpy(int),
        rows["bucket_mb"].astype(float).fillna(priors.DEFAULT_BUCKET_MB).to_numpy(float),
        (rows["strategy"] == "fsdp").to_numpy(bool),
        rows["comm_ms"].to_numpy(float),
        strict=True,
    )
    at = {label: i for i, label in enumerate(rows.index)}
    return MeasuredComm(
        runs=tuple((float(g), int(n), float(b), bool(f), float(c)) for g, n, b, f, c in columns),
        rows=tuple(rows.index),
        levels=tuple(tuple(at[label] for label in level.index if label in at) for level in levels),
    )


def of_size(table: pd.DataFrame, req: AdviceRequest) -> Calibration:
    """The model of ``req.params`` on its family's bench model (the family asked, else the
    nearest in FLOPs per parameter, log distance; in it the nearest in size): its rate, fixed
    cost, optimizer time and DDP's hooks kept (bucket copies resized); batches, memory and
    noise dropped."""
    ones = single(trusted_runs(table))
    rated = ones.dropna(subset=["flops_per_sample", "params"])
    ratio = rated["flops_per_sample"].astype(float) / rated["params"].astype(float)
    families = ratio.groupby(rated["family"]).median().sort_index()  # FLOPs per parameter
    known = tuple(
        Finding.of(K.FAMILY_RATE, family=f, flops_per_param=float(r)) for f, r in families.items()
    )
    if ones.empty:  # the cause, before any word on families or FLOPs
        raise CalibrationError(Finding.of(K.NO_SINGLE_RUN_FOR_FAMILY))
    options = {"family": ref("family"), "flops": ref("flops_per_sample")}
    if req.family is not None:
        if req.family not in set(ones["family"]):
            found = Finding.of(K.NO_SINGLE_RUN_OF_FAMILY, asked=req.family, known=known, **options)
            raise NamedCalibrationError(found)
        family, given = req.family, None
    elif req.flops_per_sample is None or families.empty:
        raise NamedCalibrationError(Finding.of(K.FAMILY_NEEDED, known=known, **options))
    else:
        given = req.flops_per_sample / req.params
        family = str((np.log(families / given)).abs().idxmin())
    rows = single(ones, family=family).dropna(subset=["params"])
    sizes = rows.drop_duplicates("model").set_index("model")["params"].astype(float)
    name = str((np.log(sizes / req.params)).abs().idxmin())
    how = Finding.of(
        K.FAMILY_CHOSEN,
        family=family,
        inferred=given is not None,
        flops_per_param=given,
        family_flops_per_param=float(families.get(family, math.nan)),
        known=known,
        model=name,
    )
    cal = calibrate(table, name)
    of, bench = cal.model, cal.bench
    flops, measured_per_param = req.flops_per_sample, None
    if flops is None:  # the family's FLOPs per parameter
        flops = of.spec.flops / of.spec.params * float(req.params)
        measured_per_param = flops / req.params
    spec = ModelSpec(params=float(req.params), flops_per_sample=float(flops))
    part = cal.machine.device.part  # DDP's rest a step (hooks) kept, its copies resized
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
        source, assumed = Source.FITTED, None
        if fixed.source == Source.ASSUMED:  # it stays assumed, its range in the interval
            source, assumed = Source.ASSUMED, fixed.basis
        basis = Finding.of(K.FIXED_OF_FAMILY, model=of.name, family=family, basis=assumed)
        run = BenchRun(OWN_MODEL, (1,), more=f"--batch {req.batch or cal.run.batch}")
        measure = Measure(bench=run, after=Finding.of(K.BENCH_OWN_MODEL))
        fixed = replace(fixed, source=source, basis=basis, measure=measure)
    model = replace(
        of,
        name=Finding.of(K.PARAMS_MODEL, params=req.params, family=family),
        spec=spec,
        compute=compute,
        fixed=fixed,
    )
    notes = (*bench.notes, note)
    dropped = replace(bench, shape=None, max_batch=None, memory_note=None, noise=None, notes=notes)
    # a model given by its size has no bench run of its own
    return replace(cal, model=model, bench=dropped, runs=Runs())


def advised(found: Usable, req: AdviceRequest) -> Calibration:
    """The calibration advised on, as benched: the model asked for, else the largest benched,
    else the family's of ``req.params``."""
    table = found.table
    try:
        if req.params is not None:  # a model the bench did not measure: its family's rate
            return of_size(table, req)
        return calibrate(table, req.model or default_model(table))
    except BenchFieldError:
        raise
    except CalibrationError as exc:
        if not found.left:
            raise
        raise NamedCalibrationError(exc.found, found.left) from None

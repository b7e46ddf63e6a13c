"""Calibrating the step model from ``gpuscale bench`` results (a ``gpuscale collectives``
sweep: ``advice/model/collectives.py``).

* Compute: the model's own fixed per-step cost where the bench timed it at two batches
  (``fixed_ms``: the intercept of its plain step against the batch, less the optimizer),
  the per-sample rate then from the rest of its step. Else per model family, least
  squares (non-negative) of the N = 1 forward + backward time on the work per step,
  ``t_fb = t_fixed + (b F) / R`` (``b F``: samples x FLOPs per sample, from
  ``torch.utils.flop_counter``), and of the optimizer time on the parameters; the model
  advised on keeps the family's rate ``R`` and its own measured step (the fixed term
  absorbs the difference). With neither (one batch of one model), the device prior with
  its range. Which of these, and the split of the step it gives:
  ``calibrate/fixed_split.split``. Its calibration point is reproduced exactly.
* DDP's own cost: the N = 1 synchronised minus no-sync step, per parameter.
* Overlap: ``1 - exposed / comm`` of the model's smallest multi-device run (the bench
  measures both), else the median over the other models of the same configuration.
* Communication scale: the communication DDP measured over what the network (sweep or
  link) predicts for the same buckets, median over the model's own multi-device runs, else
  over the configuration's (on CPU it is above 1: the all-reduce shares the cores with
  backward); read once the link is known (``measured.read_comm``), the rest needing none.

Only rows of the configuration advised on (device, backend, precision, TF32, threads)
and without plausibility flags are used; what was left out is said in ``notes``.

Bench error: The step's 80% interval at N > 1 from a bench file: leave-one-out over the bench's
models with N > 1 rows (each calibrated on the others, ``step_error.leave_one_out``), and the
advised model's own N > 1 runs against its calibration (``step_error.with_own_runs``).
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pandas as pd

from gpuscale.advice.calibrate import fits, fixed_split
from gpuscale.advice.calibrate.fixed_split import fsdp_note
from gpuscale.advice.calibrate.link import device_record
from gpuscale.advice.calibrate.measured import noise, read_comm, slowdowns
from gpuscale.advice.calibrate.record import HARDWARE_COLUMNS, cell
from gpuscale.advice.calibrate.rows import (
    BenchFieldError,
    CalibrationError,
    accumulation_note,
    as_step_model,
    which_configuration,
)
from gpuscale.advice.calibration import Bench, Benched, Run, StepModel
from gpuscale.advice.explain.findings import said
from gpuscale.advice.measured_runs import trusted_runs
from gpuscale.advice.model import fixed_cost
from gpuscale.advice.model.network import Network
from gpuscale.advice.model.priors import DDP_WORK, StepError, leave_one_out, with_own_runs
from gpuscale.advice.model.step import Compute, ModelSpec, step_of
from gpuscale.advice.types import Finding
from gpuscale.advice.types import FindingKind as K
from gpuscale.bench.table import flags_counted
from gpuscale.quantities import counted, joined


def _usable(table: pd.DataFrame) -> tuple[pd.DataFrame, list[str]]:
    ok = table[table["status"] == "ok"]
    flagged = ok[ok["flagged"].fillna(False).astype(bool)]
    runs = joined(f"{r.model} on {counted(r.accelerators, 'device')}" for r in flagged.itertuples())
    notes = [f"left out {counted(len(flagged), 'flagged run')}, {runs}: {flags_counted(flagged)}"]
    notes = notes * bool(runs)
    return ok[~ok.index.isin(flagged.index)], notes


def same_hardware(
    rows: pd.DataFrame, like: pd.Series, columns: tuple[str, ...] = HARDWARE_COLUMNS
) -> pd.DataFrame:
    """The rows whose ``columns`` (the hardware's, by default) hold ``like``'s values (a
    missing value matches only a missing one)."""
    keep = np.ones(len(rows), bool)
    for column in columns:
        value = like[column]
        same = rows[column].isna() if pd.isna(value) else rows[column] == value
        keep &= same.to_numpy()
    return rows[keep]


def _single_row(rows: pd.DataFrame, model: str) -> pd.Series:
    single = rows[(rows["model"] == model) & (rows["accelerators"] == 1)]
    if single.empty:
        known = sorted(rows.loc[rows["accelerators"] == 1, "model"].unique())
        raise CalibrationError(
            said(Finding.of(K.NO_SINGLE_RUN_OF, model=model, known=tuple(known)))
        )
    row = single.iloc[-1]
    missing = [
        c
        for c in ("forward_ms", "backward_ms", "optimizer_ms", "batch_per_device", "params")
        if pd.isna(row[c])
    ]
    if missing:
        raise CalibrationError(f"the N = 1 run of {model!r} lacks {', '.join(missing)}")
    return row


def _compute(
    row: pd.Series, hardware: pd.DataFrame, notes: list[str | Finding]
) -> tuple[Compute, ModelSpec, fixed_split.Split]:
    flops = row["flops_per_sample"]
    params = float(row["params"])
    if pd.isna(flops) or flops <= 0:
        notes.append(Finding.of(K.FLOPS_NOT_COUNTED, model=row["model"]))
        flops = 6.0 * params
    model = ModelSpec(params=params, flops_per_sample=float(flops))
    fb = float(row["forward_ms"] + row["backward_ms"])
    single = hardware[hardware["accelerators"] == 1]
    family = single[single["family"] == row["family"]]
    split = fixed_split.split(row, model, fits.fit_compute(family) or fits.fit_compute(single))
    mparams = params / 1e6
    backward_share = float(row["backward_ms"]) / fb if fb > 0 else 2 / 3
    samples = row.get("nosync_step_ms_samples")
    samples = tuple(float(v) for v in samples) if isinstance(samples, tuple | list) else ()
    compute = Compute(
        tflops=split.tflops,
        fixed_ms=split.fixed_ms,
        floor_ms=split.floor_ms,
        opt_ms_per_mparam=float(row["optimizer_ms"]) / mparams,
        ddp_ms_per_mparam=cell(row, "ddp_overhead_ms", float, 0.0) / mparams,
        backward_share=min(1.0, max(0.0, backward_share)),
        jitter_ms=samples,
        jitter_ref_ms=float(np.mean(samples)) if samples else 0.0,
        one_rank_own_ms=fixed_split.one_rank_own(row),  # one device runs the bare module
    )
    return compute, model, split


def calibrate(table: pd.DataFrame, model: str) -> Benched:
    """Everything the bench measured about ``model`` (see the module docstring) but its
    communication scale, which is read on a network (:func:`read_comm`)."""
    rows, usable_notes = _usable(as_step_model(table))  # per micro-step; FSDP's step whole
    notes: list[str | Finding] = [*usable_notes]
    row = _single_row(rows, model)
    notes += [n for n in (accumulation_note(row), fsdp_note(row)) if n]
    notes += which_configuration(rows, row)
    hardware = same_hardware(rows, row)
    other = len(rows) - len(hardware)
    if other:
        notes.append(Finding.of(K.OTHER_HARDWARE_LEFT_OUT, runs=other))
    compute, spec, split = _compute(row, hardware, notes)
    compute, shape = fits.calibrated(hardware, row, compute, spec)
    fixed, how = split.cost, Finding.of(K.COMPUTE_FROM, note=split.note)
    if shape is not None:  # the model's own batches replace the family's line
        fixed = fits.shape_fixed(shape, float(row["batch_per_device"]))
        how = Finding.of(K.COMPUTE_OWN_BATCHES, batches=len(shape.points))
    notes.append(how)
    device = device_record(cell(row, "device_name", str))
    max_batch, memory_note = fits.memory_cap(hardware, row, device) or (None, None)
    multi = hardware[hardware["accelerators"] > 1]
    own = multi[multi["config_group"] == row["config_group"]].sort_values("accelerators")
    single = hardware[hardware["accelerators"] == 1]
    family = multi[multi["family"] == row["family"]]
    slowdown, contention = slowdowns(single, (multi, family, own), row["family"])
    notes.append(contention)
    compute = replace(compute, slowdown=tuple(sorted(slowdown.items())))
    overlap = None
    if own["overlap"].notna().any():
        # its smallest count measured, the median of its runs there (a second sweep's
        # run counted as much as the first)
        timed = own.dropna(subset=["overlap"])
        overlap = float(
            timed[timed["accelerators"] == timed["accelerators"].min()]["overlap"].median()
        )
    elif multi["overlap"].notna().any():
        overlap = float(multi["overlap"].median())
        notes.append(Finding.of(K.OVERLAP_OF_OTHERS, model=model))
    measured = rows[rows["model"] == model][["accelerators", "step_ms_mean", "samples_per_s"]]
    return Benched(
        model=StepModel(name=model, spec=spec, compute=compute, fixed=fixed),
        run=Run(
            batch=int(row["batch_per_device"]),
            accum=cell(row, "accum", int, 1),
            strategy="fsdp" if row["strategy"] == "fsdp" else "ddp",
            bucket_mb=cell(row, "bucket_mb", float, 25.0),
            overlap=overlap,
        ),
        device=device,
        bench=Bench(
            bench_model=model,
            config_group=str(row["config_group"]),
            device_kind=cell(row, "device", str),
            threads=cell(row, "threads", int),
            shape=shape,
            noise=noise(own),
            comm_levels=(multi, family, own),
            max_batch=max_batch,
            memory_note=memory_note,
            measured_steps=measured.reset_index(drop=True),
            one_step_ms=float(row["step_ms_mean"]),
            one_step_own_ms=cell(row, "fsdp_overhead_ms", float, 0.0),
            notes=tuple(notes),
        ),
    )


def default_model(table: pd.DataFrame) -> str:
    """The largest model with a trustworthy N = 1 run (``CalibrationError`` when none)."""
    rows, _ = _usable(table)
    single = rows[rows["accelerators"] == 1]
    if single.empty:
        ok = table[table["status"] == "ok"]
        if ok.empty:  # nothing measured: say why the runs failed, not what is missing
            found = Finding.of(K.NOTHING_MEASURED, model=None)
            if len(table):
                first = table.iloc[0]
                error = str(first["error"]).splitlines()[0] if first["error"] else None
                model, devices, status = first["model"], first["accelerators"], first["status"]
                found = Finding.of(
                    K.NOTHING_MEASURED, model=model, devices=devices, status=status, error=error
                )
            raise CalibrationError(said(found))
        if not (ok["accelerators"] == 1).any():
            raise CalibrationError(said(Finding.of(K.NO_SINGLE_RUN)))
        raise CalibrationError(said(Finding.of(K.NO_TRUSTED_SINGLE_RUN)))
    return str(single.sort_values("params")["model"].iloc[-1])


def step_error(table: pd.DataFrame, network: Network, cal: Benched) -> StepError:
    """The 80% interval of the step at N > 1: leave-one-out over the bench's models with
    N > 1 rows of the configuration advised on (see ``step_error``)."""

    def predict(rest: pd.DataFrame, model: str, ns: list[int]) -> list[float | None]:
        try:
            other, _ = read_comm(calibrate(rest, model), rest, network)
        except (CalibrationError, ValueError):
            return [None] * len(ns)
        same_kind = other.bench.device_kind == cal.bench.device_kind
        if not same_kind or other.device.name != cal.device.name:
            return [None] * len(ns)
        return steps(other, ns)

    def steps(other: Benched, ns: list[int]) -> list[float | None]:
        run = other.run
        if run.overlap is None and other.bench.device_kind == "cpu":
            run = replace(run, overlap=0.0)  # as the advice itself does
        scaled = network.scaled(other.bench.comm_scale)
        model = other.model
        return [
            step_of(
                scaled, run, model.spec, model.compute, n, batch=run.batch, accum=run.accum
            ).step_ms
            for n in ns
        ]

    ok = trusted_runs(table)
    own = ok[(ok["config_group"] == cal.bench.config_group) & (ok["accelerators"] > 1)]
    own = own.dropna(subset=["step_ms_mean"])
    ns = [int(n) for n in own["accelerators"]]
    predicted = steps(cal, ns)  # the calibration advised on, not calibrated again
    measured = own["step_ms_mean"].astype(float).tolist()
    return with_own_runs(
        leave_one_out(table, network, predict), list(zip(measured, predicted, strict=True))
    )


def with_fixed(cal: Benched, fixed_ms: float) -> Benched:
    """``cal`` with the fixed cost entered (``--fixed-ms``): the measured forward +
    backward at the bench's batch kept, only its split into fixed cost and per-sample
    work changed (``Compute.resplit``)."""
    model, batch = cal.model, cal.run.batch
    micro = model.compute.micro_ms(model.spec, batch)
    if fixed_ms >= micro:
        found = Finding.of(K.FIXED_NOT_BELOW_STEP, model=model.name, batch=batch, step_ms=micro)
        raise BenchFieldError("fixed_ms", fixed_ms, said(found))
    resplit = replace(
        model,
        compute=model.compute.resplit(model.spec, batch, fixed_ms),
        fixed=fixed_cost.given(fixed_ms, batch),
    )
    return replace(cal, model=resplit)


def for_strategy(compute: Compute, benched: str, asked: str, model: ModelSpec) -> Compute:
    """``compute`` for predicting ``asked`` from runs of ``benched``, by one rule: the step
    model's compute is the bare module's (a DDP run's no-sync phases; an FSDP run's step,
    its own work, 0 where it is no slower than the bare module, in the fixed cost), and
    the strategy predicted adds its own work: DDP's from its prior (``ModelSpec.ddp_ms_per_mparam``)
    where the runs were FSDP's, FSDP's none (unmeasured, said) where they were DDP's (a
    walk: tf-30m benched with FSDP and advised as DDP priced DDP's own work at 0 ms)."""
    if benched == asked or asked != "ddp":
        return compute
    own = model.ddp_ms_per_mparam(DDP_WORK.point, None)
    return replace(compute, ddp_ms_per_mparam=own)


def as_asked(cal: Benched, strategy: str | None, fixed_ms: float | None) -> Benched:
    """``cal`` as the request predicts it: in the ``strategy`` asked (``for_strategy``),
    with the fixed cost entered where one was (``fixed_ms``, ``with_fixed``); the
    communication the bench measured scales the network where it is read
    (``measured.read_comm``)."""
    model, benched = cal.model, cal.run.strategy
    compute = for_strategy(model.compute, benched, strategy or benched, model.spec)
    advised = replace(cal, model=replace(model, compute=compute))
    return advised if fixed_ms is None else with_fixed(advised, fixed_ms)

"""The calibration from a bench file (:func:`from_bench`): the model advised on, on the
bench host's machine, with what its runs say as evidence: its N > 1 speedups
(:func:`measured_runs`) and its weak runs (``remeasure.weak_runs``)."""

from __future__ import annotations

import shlex
from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd

from gpuscale.advice.calibrate import fits, measured
from gpuscale.advice.calibrate.calibration import single
from gpuscale.advice.calibrate.errors import BenchFieldError
from gpuscale.advice.calibrate.other_strategy import without_fsdp_own
from gpuscale.advice.calibrate.rows import (
    HARDWARE_COLUMNS,
    Usable,
    allowed_flagged,
    chosen,
    longest,
)
from gpuscale.advice.calibration import Calibration, Machine, Run, Said, StepModel
from gpuscale.advice.model import fixed_cost
from gpuscale.advice.model.hardware import METERS, Power, Rate, device_power
from gpuscale.advice.model.network import comm_scale
from gpuscale.advice.model.priors import DDP_WORK, strategy_name
from gpuscale.advice.model.step import per_step_ms
from gpuscale.advice.remeasure import as_run, weak_runs
from gpuscale.advice.request import AdviceRequest
from gpuscale.advice.types import Finding, Measured, metered, trusted_runs
from gpuscale.advice.types import FindingKind as K
from gpuscale.analysis.bench_scaling import bench_scaling, speedups_as_predicted
from gpuscale.bench.config import STRATEGIES as BENCHED
from gpuscale.bench.support import support
from gpuscale.plausibility import FlagKind
from gpuscale.tables.bench import BATCH_PART, cell, group_and_batch, most_host_devices
from gpuscale.tables.bench import one_device as at_one_device
from gpuscale.tables.bench_runs import bench_options, runs_like

# What the advice compares of the model's runs (the device's name compared apart).
_HARDWARE = ("model", *(c for c in HARDWARE_COLUMNS if c != "device_name"))


def from_bench(
    machine: Machine,
    said: Said,
    req: AdviceRequest,
    bench: pd.DataFrame,
    found: Usable,
    cal: Calibration,
) -> tuple[Calibration, Rate]:
    """``cal`` (as benched) on ``machine``, as asked, with the step's terms the bench measured
    (``Bench``), and its rate to check against the peak."""
    table, benched = found.table, as_asked(cal, req.strategy, req.fixed_ms)
    name, strategy, timed, on = cal.model.name, cal.run.strategy, cal.run.batch, cal.bench
    own = name if isinstance(name, str) else ""  # the runs' model (a --params model has none)
    per_device, asked, device = req.batch or timed, req.strategy or strategy, cal.machine.device
    power = bench_power(table, cal, req.power_w)  # watts per device at each batch
    other = None
    if asked != strategy:
        other = Finding.of(
            K.OTHER_STRATEGY,
            model=name,
            benched=strategy,
            asked=asked,
            asked_name=strategy_name(asked),
            unbenched=None if asked in BENCHED else tuple(BENCHED),
        )
    # the batch advised above the one timed on a launch-bound floor, or over twice it
    floor = cal.model.compute.floor_ms > 0
    beyond = None
    if on.shape is None and per_device > timed and (per_device > 2 * timed or floor):
        times = per_device / timed
        beyond = Finding.of(
            K.BEYOND_BATCH, batch=per_device, times=times, timed=timed, floor=floor, model=name
        )
    # its weak runs, the bench command on its file, its N > 1 speedups like the run advised
    group, device_name = on.config_group, device.name
    hardware = runs_like(table, group, device_name, fields=_HARDWARE)
    like_runs = table[runs_like(table, group, device_name)]  # of one precision
    # the results file as a shell word (none where the table was given, not read)
    out = shlex.quote(str(req.bench)) if isinstance(req.bench, str | Path) else None
    # the runs the model rests on: its own, else (a --params model) its family's benched one
    rests_on = own or on.bench_model
    rows, benched_rows = (like_runs[like_runs["model"] == m] for m in (own, rests_on))
    run = None
    if not benched_rows.empty:
        row = benched_rows.sort_values("accelerators", kind="stable").iloc[0].copy()
        row["strategy"] = req.strategy or row.get("strategy")
        run = bench_options(row)  # the run's options, on the results file where one was read
        if out is not None:
            run += f" --out {out}"
    # its N > 1 speedups, of runs like the one advised
    like = (group, device_name, req.strategy)
    speedups = tuple(measured_runs(bench, own, req.allow_flagged, like))
    weak, evidence = weak_runs(
        longest(table[hardware]),
        rests_on,
        file=out or "FILE",
        whole=table,
        run=run,
        host_devices=most_host_devices(table),
        per_node=machine.network.per_node if machine.network.inter else None,  # the question's
    )
    multi = bench[(bench["model"] == own) & (bench["accelerators"] > 1)]
    runs = replace(
        cal.runs,
        measured=speedups,
        evidence=evidence,
        host_devices=most_host_devices(table),
        same_samples=any(FlagKind.SAME_SAMPLES in kinds for kinds in multi["flag_kinds"]),
        allowed_flags=tuple(kind for kind, _, _ in found.flags) if req.allow_flagged else (),
    )
    # the rate to check against the peak (``build``) at the run's precision: the one advised
    # (the per-sample work's), said where no peak checks it (of a GPU); and the rate its
    # latest N = 1 run recorded over its whole step (the run calibrated on), with the peak
    # the bench recorded it against
    ones = single(trusted_runs(rows))
    last = ones.iloc[-1] if len(ones) else pd.Series(dtype=float)
    rate = Rate(
        benched.model.compute.tflops,
        device,
        str(like_runs["precision"].iloc[-1]) if len(like_runs) else req.gradient_precision,
        "bench" if on.device_kind != "cpu" else "",
        said_tflops=cal.model.compute.tflops,
        recorded_tflops=cell(last, "achieved_tflops_per_device", float),
        recorded_peak_tflops=cell(last, "peak_tflops", float),
    )
    # why this model where none was asked
    passed_over, others = None, None
    if not req.model and req.params is None:
        passed_over, others = chosen(bench, own, found.broken)
    # the communication measured over predicted, read on the link advised, scales the network
    scale, read = comm_scale(machine.network, cal.bench.comm)
    on, network = benched.bench, machine.network.scaled(scale)
    # the runs it was read from (None: none measured it)
    found_comm = None if scale is None else support(table.loc[list(read)], table)
    cal = cal.at({"machine": {"network": network}})
    allowed = None
    if req.allow_flagged:
        allowed = allowed_flagged(found)
    weak_in_full = None if weak is None else weak.with_values(full=True)
    # the step: its shape, else one batch (a model given by its size: none of its steps)
    step = Finding.of(K.STEP_ONE_BATCH, batch=timed, measured=req.params is None)
    comm = None
    if found_comm is not None:
        weak_comm = found_comm.weak
        comm = Finding.of(
            K.COMM_SCALE,
            scale=network.comm_scale,
            weak=weak_comm,
            rests_on=found_comm.rests_on() if weak_comm else None,
            remedy=found_comm.remedy() if weak_comm else None,
        )
    sources = [
        Finding.of(K.CALIBRATED_ON, model=name, notes=on.notes),
        on.shape.finding() if on.shape is not None else step,
        on.memory_note,
        comm,
        weak_in_full,
    ]
    if req.strategy is None:  # the strategy predicted: the one the model was benched with
        named = on.bench_model or name
        sources.append(Finding.of(K.STRATEGY_AS_BENCHED, model=named, benched=strategy))
    slower = fits.falling(cal.model.compute.slowdown)
    said = replace(
        said,
        sources=(*said.sources, *filter(None, sources)),
        warnings=(*said.warnings, *filter(None, (allowed, weak, slower, beyond, other))),
        model_note=passed_over or "",
        chosen=others or "",
    )
    # the N = 1 steps' spread: standard deviation (n - 1) over the mean
    fixed, compute = benched.model.fixed, benched.model.compute
    jitter, mean_ms, spread = compute.jitter_ms, compute.jitter_ref_ms, None
    if len(jitter) > 1 and mean_ms > 0:
        spread = float(np.std(jitter, ddof=1)) / mean_ms
    on = replace(
        on,
        overlap_measured=cal.run.overlap is not None and req.overlap is None,
        own_ms=per_step_ms(compute.ddp_ms_per_mparam, benched.model.spec.params),
        spread=spread,
        held=compute.held_slowdown(),
    )
    model = StepModel(
        name=name,
        spec=replace(benched.model.spec, grad_bytes_per_param=req.grad_bytes),
        compute=compute,
        fixed=replace(fixed, measure=as_run(fixed.measure, runs.evidence, runs.host_devices)),
        error=measured.step_error(table, machine.network, cal),
        # the family's basis for its break-even (another strategy than benched: none)
        family=None if asked != strategy else measured.fitted(table, benched),
    )
    # gloo reduces on the cores backward uses: no overlap
    overlap = cal.run.overlap if req.overlap is None else req.overlap
    if overlap is None and on.device_kind == "cpu":
        overlap = 0.0
    # the memory measured decides the largest batch, unless one was asked for
    max_batch = None
    if on.max_batch is not None and req.batch is None:
        max_batch = max(on.max_batch, per_device)
    run = Run(
        batch=per_device,
        accum=cal.run.accum if req.batch is None else 1,  # the run's micro-steps per step
        min_batch=max(1, per_device // 8),  # the fitted fixed cost prices small batches
        max_batch=max_batch,
        strategy=strategy,
        bucket_mb=cal.run.bucket_mb,  # the one benched, the default where none is asked
        overlap=overlap,
    )
    machine = replace(machine, network=network, power=power)
    # the memory check's device: the bench's (its N = 1 run's, for a model of the family
    # too: the advice is of the bench host's machine), never assumed
    benched = cal.runs.one_step_ms is not None or cal.runs.own_model is None
    if cal.runs.own_model is not None or (benched and cal.machine.device.part is not None):
        held_on = cal.machine.device if benched else machine.device
        machine = replace(machine, memory_device=held_on, memory_device_assumed=False)
    placed = replace(cal, model=model, run=run, machine=machine, runs=runs, said=said, bench=on)
    return placed, rate


def as_asked(cal: Calibration, strategy: str | None, fixed_ms: float | None) -> Calibration:
    """``cal`` in the ``strategy`` asked (DDP's own work from its prior where the runs were
    FSDP's), with ``fixed_ms`` entered (forward + backward kept, only its split changed)."""
    model, benched, batch = cal.model, cal.run.strategy, cal.run.batch
    compute = model.compute
    if (strategy or benched) == "ddp" and benched != "ddp":
        compute = replace(
            compute, ddp_ms_per_mparam=model.spec.ddp_ms_per_mparam(DDP_WORK.point, None)
        )
        cal = without_fsdp_own(replace(cal, model=replace(model, compute=compute)))
        model, compute = cal.model, cal.model.compute
    model = replace(model, compute=compute)
    if fixed_ms is not None:
        micro = compute.micro_ms(model.spec, batch)
        if fixed_ms >= micro:
            found = Finding.of(K.FIXED_NOT_BELOW_STEP, model=model.name, batch=batch, step_ms=micro)
            raise BenchFieldError("fixed_ms", fixed_ms, found)
        model = replace(
            model,
            compute=compute.resplit(model.spec, batch, fixed_ms),
            fixed=fixed_cost.given(fixed_ms, batch),
        )
    return replace(cal, model=model)


def bench_power(table: pd.DataFrame, cal: Calibration, given_w: float | None) -> Power:
    """The latest W per device per batch at N = 1 of ``cal``'s configuration and the job's
    median per (N, batch), else the model's latest N = 1 figure; metered runs (``metered``)."""
    of, record = cal.bench, cal.machine.device
    model, group, device = of.bench_model, of.config_group, of.device_kind
    if given_w is not None or "power_w_mean" not in table:
        return device_power(device, record, given_w=given_w)
    own, left_out = metered(trusted_runs(table)[lambda t: t["model"] == model])
    config, batch = group.rsplit(BATCH_PART, 1) if BATCH_PART in group else (group, "")
    same = own[group_and_batch(own["config_group"])[0] == config]
    ones = single(same).dropna(subset=["power_w_mean"])
    at_batch = ones.groupby("batch_per_device")["power_w_mean"].last()
    if at_batch.empty:  # another configuration's figure, for every batch
        other = single(own)["power_w_mean"].dropna()
        watts = float(other.iloc[-1]) if len(other) else None
        return replace(device_power(device, record, measured_w=watts), left_out=left_out)
    reference = int(batch) if batch.isdigit() else int(ones["batch_per_device"].iloc[-1])
    watts = float(at_batch.get(reference, at_batch.iloc[-1]))
    power = device_power(device, record, measured_w=watts)
    totals = same.dropna(subset=["power_w_total"])
    totals = totals.groupby(["accelerators", "batch_per_device"])["power_w_total"].median()
    return replace(
        power,
        at_batch=tuple((int(b), float(w)) for b, w in at_batch.items()),
        total_w_at=tuple((int(n), int(b), float(w)) for (n, b), w in totals.items()),
        meter=METERS.get(device, "NVML"),
        left_out=left_out,
    )


def measured_runs(
    table: pd.DataFrame,
    model: str,
    allow_flagged: bool,
    like: tuple[str, str | None, str | None] | None = None,
) -> list[Measured]:
    """The model's N > 1 speedups; with ``like`` (group, device, strategy) only runs like it.
    Each is against the one-device step the prediction's N = 1 row models (``basis``)."""
    scaling = bench_scaling(table)
    base_batch = at_one_device(scaling, "batch_per_device")
    base_accum = at_one_device(scaling, "accum")
    bases = speedups_as_predicted(scaling)
    of = (scaling["model"] == model) & (scaling["accelerators"] > 1)
    of &= scaling.index.isin(longest(table).index)  # none outlasted by a longer run
    if like is not None and len(scaling):
        of &= runs_like(scaling, *like)
    rows = scaling[of & bases["speedup"].notna()]
    at = pd.Series(range(len(scaling)), index=scaling.index, dtype=float)
    base_at = at_one_device(scaling.assign(_at=at), "_at")

    def weak_remedy(index: object) -> str:
        both = [index] + ([scaling.index[int(base_at[index])]] if pd.notna(base_at[index]) else [])
        pair = scaling.loc[both]
        found = support(pair, table)  # the steps the file's notes ask of its model
        # weak: notes say why (a flagged run's too, graded flagged: ``bench.evidence``)
        weak = bool(pair.get("evidence_notes", pd.Series(dtype=str)).fillna("").ne("").any())
        return found.remedy() if weak and found is not None else ""

    return [
        Measured(
            devices=int(r.accelerators),
            speedup=float(bases.at[i, "speedup"]),
            basis=str(bases.at[i, "basis"]),
            flagged=bool(r.flagged),
            batch_per_device=int(r.batch_per_device),
            allowed=bool(r.flagged) and allow_flagged,
            accum=int(r.accum),
            base=(int(base_batch[i]), int(base_accum[i])),
            weak_remedy=weak_remedy(i),
            samples_per_s=float(r.samples_per_s),
            flags=str(r.flags) if bool(r.flagged) and isinstance(r.flags, str) else "",
        )
        for i, r in zip(rows.index, rows.itertuples(), strict=True)
    ]

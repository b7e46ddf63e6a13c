"""What the bench's N > 1 runs measured: the communication scale on a link
(:func:`read_comm`), the family's break-even basis (:func:`fitted`) and the step's 80%
interval (:func:`step_error`); a network on the curves a collectives sweep measured
(:func:`measured_network`) and what the advice says of that sweep (:func:`sweep_said`)."""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pandas as pd

from gpuscale.advice.calibrate.calibration import calibrate, single
from gpuscale.advice.calibrate.errors import CalibrationError
from gpuscale.advice.calibrate.fits import fit_compute, one_rank_own, slowdowns
from gpuscale.advice.calibrate.rows import HARDWARE_COLUMNS, as_step_model, longest, same_hardware
from gpuscale.advice.calibration import Calibration, FamilyBasis
from gpuscale.advice.model.fixed_cost import line
from gpuscale.advice.model.hardware import ceiling
from gpuscale.advice.model.network import comm_scale
from gpuscale.advice.model.priors import EXTRAPOLATED, StepError, phrase
from gpuscale.advice.model.step import Compute, step_table
from gpuscale.advice.types import Finding, maybe, trusted_runs
from gpuscale.advice.types import FindingKind as K
from gpuscale.bench.summary import Z80
from gpuscale.interconnect.measured import MeasuredCurves, fit_link, network_from_collectives
from gpuscale.interconnect.network import Network
from gpuscale.plausibility import BUSY_OTHER_SHARE, NOISY_P95_OVER_P50
from gpuscale.sources.bounded import skipped_lines
from gpuscale.tables.commands import quoted_path

MAX_LEFT_OUT = 10  # models left out in turn, one calibration each: the interval's cost capped
FEW_RESIDUALS = 3  # fewer leave-one-out errors than this give no spread of their own


def read_comm(cal: Calibration, network: Network) -> Calibration:
    """``cal`` on ``network`` scaled by the communication its runs measured (``comm_scale``)."""
    scale, _ = comm_scale(network, cal.bench.comm)
    return cal.at({"machine": {"network": network.scaled(scale)}})


def fitted(table: pd.DataFrame, cal: Calibration) -> FamilyBasis | None:
    """The family basis of ``cal``'s model: the latest unflagged N = 1 run of each member in
    its configuration and strategy; None with fewer than two sizes."""
    rows = trusted_runs(longest(as_step_model(table)))
    of = cal.bench
    own = rows[(rows["model"] == of.bench_model) & (rows["config_group"] == of.config_group)]
    if own.empty:
        return None
    like = own.iloc[-1]
    hardware = same_hardware(rows, like, (*HARDWARE_COLUMNS, "strategy"))
    ones = single(hardware, family=like["family"])
    ones = ones.dropna(subset=["params", "flops_per_sample", "optimizer_ms"])
    ones = ones.groupby("model", sort=False).tail(1).sort_values("params")
    mparams = (ones["params"] / 1e6).to_numpy(float)
    fit = fit_compute(ones)
    if len(np.unique(mparams)) < 2 or fit is None:
        return None
    fixed, tflops = fit
    peak, _ = ceiling(
        like["device"], like.get("threads"), like.get("peak_tflops"), like.get("precision")
    )
    tflops = min(tflops, peak)

    def per_mparam(column: str) -> tuple[float, float]:  # (ms, ms per million parameters)
        rows = ones.dropna(subset=[column])
        x = (rows["params"] / 1e6).to_numpy(float)
        if len(np.unique(x)) < 2:
            return 0.0, 0.0
        return line(list(zip(x, rows[column].to_numpy(float), strict=True)))

    fb = ones["forward_ms"] + ones["backward_ms"]
    multi = hardware[hardware["accelerators"] > 1]
    family_multi = multi[multi["family"] == like["family"]]
    slowdown, _ = slowdowns(
        single(hardware),
        (multi, family_multi, family_multi),
        str(like["family"]),
    )
    jitter: list[float] = []  # every member's N = 1 no-sync steps over their own mean, pooled
    for samples in ones["nosync_step_ms_samples"]:
        if isinstance(samples, tuple | list) and len(samples) > 1:
            mean = float(np.mean(samples))
            jitter += [float(s) / mean for s in samples if mean > 0]
    compute = Compute(
        tflops=tflops,
        fixed_ms=fixed,
        backward_share=float((ones["backward_ms"] / fb).median()),
        jitter_ms=tuple(jitter),
        jitter_ref_ms=float(bool(jitter)),  # 1: the spreads are shares of the step
        slowdown=tuple(sorted(slowdown.items())),
        # FSDP's own work one device without it does not do: the members' median
        one_rank_own_ms=float(np.median([one_rank_own(r) for _, r in ones.iterrows()])),
    )
    return FamilyBasis(
        family=str(like["family"]),
        members=tuple(str(m) for m in ones["model"]),
        flops_per_param=float((ones["flops_per_sample"] / ones["params"]).median()),
        compute=compute,
        opt_ms=per_mparam("optimizer_ms"),
        ddp_ms=per_mparam("ddp_overhead_ms"),
    )


def from_residuals(
    residuals: list[float],
    measured_n: int,
    chosen: int | None = None,
    models: int | None = None,
) -> StepError:
    """The 80% interval of the ``k`` log errors ``r`` of the measured N > 1 steps
    (``residuals``): half-width ``z_0.9 sqrt(mean r^2) sqrt(1 + 1/k)``, at least
    ``priors.EXTRAPOLATED`` under ``FEW_RESIDUALS`` (``chosen`` of the ``models`` where not
    all were left out)."""
    r = [float(e) for e in residuals if math.isfinite(e)]
    if len(r) == 0:
        return StepError()
    width = Z80 * math.sqrt(sum(e * e for e in r) / len(r)) * math.sqrt(1 + 1 / len(r))
    low, high = math.exp(min(r)) - 1, math.exp(max(r)) - 1
    few = None
    if len(r) < FEW_RESIDUALS:  # one or two errors are no spread: never narrower than none
        width = max(width, EXTRAPOLATED)
        few = len(r)
    source = Finding.of(
        K.STEP_LEFT_OUT,
        width_log=width,
        predictions=len(r),
        chosen=chosen,
        models=models,
        low=low,
        high=high,
        ends_alike=f"{low:+.0%}" == f"{high:+.0%}",  # to the percent shown: one error
        few=few,
        own=(),
    )
    return StepError(
        width_log=max(width, math.log(1.02)),
        measured_n=measured_n,
        source=source,
        residuals=tuple(r),
    )


def _log_errors(cal: Calibration, rows: pd.DataFrame) -> list[tuple[int, float]]:
    """(N, log(measured / predicted)) of each of ``rows``' steps, predicted by ``cal``."""
    run = cal.run
    if run.overlap is None and cal.bench.device_kind == "cpu":
        run = replace(run, overlap=0.0)  # as the advice itself does
    ns = [int(n) for n in rows["accelerators"]]
    candidates = [(n, run.batch, run.accum) for n in ns]
    steps = step_table(cal.machine.network, run, cal.model.spec, (cal.model.compute,), candidates)
    errors = []
    for n, measured, (step, *_) in zip(ns, rows["step_ms_mean"].astype(float), steps, strict=True):
        if step.step_ms and step.step_ms > 0 and measured > 0:
            errors.append((n, math.log(measured / step.step_ms)))
    return errors


def step_error(table: pd.DataFrame, network: Network, cal: Calibration) -> StepError:
    """Each model with N > 1 trusted rows predicted without them (at most ``MAX_LEFT_OUT``,
    spread evenly over the sizes), and how far ``cal`` is from its own N > 1 runs."""
    ok = trusted_runs(longest(table))
    multi = ok[ok["accelerators"] > 1].dropna(subset=["step_ms_mean"])
    sizes = multi.groupby("model")["params"].max().astype(float).to_dict()
    models = [str(m) for m in multi["model"].unique()]
    chosen = sorted(models, key=lambda m: (sizes.get(m, 0.0), m))
    if len(chosen) > MAX_LEFT_OUT:
        last = len(chosen) - 1
        picks = {round(i * last / (MAX_LEFT_OUT - 1)) for i in range(MAX_LEFT_OUT)}
        chosen = [chosen[i] for i in sorted(picks)]
    residuals, largest = [], 1
    for model in chosen:
        rest = ok[~((ok["model"] == model) & (ok["accelerators"] > 1))]
        # calibrated on the rest; none where it cannot be, or on another device than ``cal``
        try:
            other = read_comm(calibrate(rest, model), network)
        except (CalibrationError, ValueError):
            continue
        kind = other.bench.device_kind
        if kind != cal.bench.device_kind or other.machine.device.name != cal.machine.device.name:
            continue
        for n, error in _log_errors(other, multi[multi["model"] == model]):
            residuals.append(error)
            largest = max(largest, n)
    spread = len(chosen) < len(models)  # not all left out: how many, of how many
    of = (len(chosen), len(models)) if spread else (None, None)
    error = from_residuals(residuals, largest, *of)
    # its own runs: none for a --params model (the runs are its family's benched model's)
    own = multi[
        (multi["config_group"] == cal.bench.config_group) & (multi["model"] == cal.runs.own_model)
    ]
    r = [e for _, e in _log_errors(cal, own)]
    if not r:
        return error
    low, high = math.exp(min(r)) - 1, math.exp(max(r)) - 1
    found = Finding.of(K.STEP_OWN_RUNS, runs=len(r), low=low, high=high)
    return replace(error, source=error.source.with_values(own=(found,)))


# What a measured link's name adds by whether its curves were measured under compute load
LOADED = {True: ", under compute load", False: ""}


def measured_network(curves: MeasuredCurves, base: Network) -> Network:
    """``base`` with a sweep's curves, their link named as sentences read it."""

    def name(ranks: int) -> str:
        loaded = LOADED[curves.under_load]
        source = quoted_path(curves.source)  # as file refusals name it
        return phrase("link_measured_in", source=source, ranks=ranks, loaded=loaded)

    return network_from_collectives(curves, base, name)


def sweep_said(
    curves: MeasuredCurves, network: Network
) -> tuple[Finding, tuple[Finding | str, ...]]:
    """What the advice says of a collectives sweep it priced on ``network``
    (:func:`measured_network`): the curves and their link (:func:`_curves_read`), then its
    warnings: the widest all-reduce's noisy calls, a host busy during the sweep (by the
    bench's rule for a run: ``plausibility.BUSY_OTHER_SHARE``), and the file's lines not
    read; first, each curve whose sizes of wrong elements were left out of its fit."""
    note, noisy = _curves_read(curves, network)
    busy = None
    share = curves.other_load_share
    if share is not None and share > BUSY_OTHER_SHARE:
        busy = Finding.of(K.SWEEP_BUSY, sweep=curves.source, sweep_id=curves.sweep_id, share=share)
    wrong = [
        Finding.of(
            K.SWEEP_WRONG,
            sweep=curves.source,
            sweep_id=r.sweep_id,
            op=r.op,
            ranks=r.ranks,
            wrong=r.wrong,
            sizes=r.wrong_sizes,
            kept=r.sizes,
            fitted=r in curves.read,  # else under 4 sizes left: no curve
        )
        for r in (*curves.read, *curves.unfitted)
        if r.wrong_sizes
    ]
    return note, (*wrong, *filter(None, [noisy, busy]), *skipped_lines(curves.skipped))


def _curves_read(curves: MeasuredCurves, network: Network) -> tuple[Finding, Finding | None]:
    """What the advice says of a sweep's curves, its link fitted on ``network`` (that of
    its widest all-reduce inside a node, ``network_from_collectives``): the curves and the
    link (``LINK_CURVES``: the time per size fitted, and the sweep read where it is not the
    file's latest), and where that all-reduce's mean calls were noisy by the bench's rule
    (``SWEEP_NOISY``) the link its means would give, as nccl-tests prints them; None else."""
    inside = network.inside_curves()
    widest = max(inside, key=lambda c: c.ranks) if inside else None
    read = maybe(curves.read_of, widest)
    older = read is not None and read.sweep_id != read.latest_id
    note = Finding.of(
        K.LINK_CURVES,
        sweep=curves.source,
        ranks=tuple(sorted({c.ranks for c in network.curves})),
        busbw_gbs=network.intra.busbw_gbs,
        latency_us=network.intra.latency_us,
        times=read.times if read else "median",
        chosen=read.sweep_id if read and older else None,
        iters=read.iters if read else None,
        latest=read.latest_id if read else None,
        latest_iters=read.latest_iters if read else None,
    )
    if read is None or not read.noisy or read.means is None:
        return note, None
    means = fit_link(read.means, "means")
    noisy = Finding.of(
        K.SWEEP_NOISY,
        sweep=curves.source,
        sweep_id=read.sweep_id,
        ranks=read.ranks,
        noisy=read.noisy,
        sizes=read.sizes,
        ratio=NOISY_P95_OVER_P50,
        busbw_gbs=network.intra.busbw_gbs,
        latency_us=network.intra.latency_us,
        mean_busbw_gbs=means.busbw_gbs,
        mean_latency_us=means.latency_us,
    )
    return note, noisy

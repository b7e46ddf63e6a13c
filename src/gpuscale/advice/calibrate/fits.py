"""What the bench's N = 1 rows fit: the step against the per-device batch, a family's compute,
a model's fixed per-step cost (:func:`split`), the no-sync slowdown per N and the noise scale.
One device's forward + backward::

    t(b) = max(t_floor, t_fixed + b c)          (c: ms per sample, F / R)

(gpuscale's H100 rows, ``../shared/gpu/h100/sweep.jsonl``: tf-7m's plain step 11.8 / 14.1 /
13.6 / 42.4 ms at batch 1 / 8 / 64 / 256). Every split of the sorted batches into a flat part
and a rising one (``fixed_cost.line``) is tried, the least squared log error wins.

The fixed cost where data fix it: measured where the bench timed two batches (the plain
step's intercept less the optimizer), checked against the device's peak; FSDP's own work at
N = 1; fitted from its family's (else its configuration's) rate; else assumed
(:func:`unmeasured`): on a GPU the device prior less the optimizer step, at most the step
less its work at the peak; on a CPU none (the GPU's prior is kernel launches)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import replace

import numpy as np
import pandas as pd

from gpuscale.advice.calibrate.errors import CalibrationError
from gpuscale.advice.calibration import Shape
from gpuscale.advice.model.fixed_cost import GPU_PRIOR, FixedCost, Split, line, prior, within_peak
from gpuscale.advice.model.hardware import ceiling
from gpuscale.advice.model.step import ModelSpec, work_ms
from gpuscale.advice.types import BenchRun, Finding, Measure, Source
from gpuscale.advice.types import FindingKind as K
from gpuscale.analysis.critical_batch import NoiseScale, noise_scale
from gpuscale.tables.bench import cell
from gpuscale.tables.bench_runs import bench_options


def per_batch(points: Sequence[tuple[float, float]]) -> list[tuple[float, float]]:
    """One point per batch (the median of repeated batches), sorted by batch."""
    by_batch: dict[float, list[float]] = {}
    for batch, ms in points:
        by_batch.setdefault(float(batch), []).append(float(ms))
    return [(b, float(np.median(v))) for b, v in sorted(by_batch.items())]


def fit(points: Sequence[tuple[float, float]], fallback_ms_per_sample: float) -> Shape:
    """The shape through (batch, ms) ``points`` of two or more batches;
    ``fallback_ms_per_sample`` prices the batches beyond a curve that never rose."""
    merged = per_batch(points)
    if len(merged) < 2:
        raise CalibrationError(Finding.of(K.SHAPE_NEEDS_BATCHES))
    best: tuple[float, Shape] | None = None
    for k in range(len(merged) + 1):
        flat, rising = merged[:k], merged[k:]  # (floor, fixed, ms per sample) of this split
        floor = float(np.mean([ms for _, ms in flat])) if flat else 0.0
        fixed, per_sample = 0.0, fallback_ms_per_sample
        if len(rising) >= 2:
            fixed, per_sample = line(rising)
            if per_sample <= 0:  # flat throughout: the rate beyond comes from elsewhere
                floor, fixed, per_sample = max(floor, fixed), 0.0, fallback_ms_per_sample
        elif len(rising) == 1:
            per_sample = rising[0][1] / rising[0][0]
        shape = Shape(
            floor_ms=floor, fixed_ms=fixed, ms_per_sample=per_sample, points=tuple(merged)
        )
        error = sum(math.log(ms / shape.ms(b)) ** 2 for b, ms in merged)
        if best is None or error < best[0] - 1e-12:
            best = (error, shape)
    assert best is not None
    return best[1]


def fit_with_error(points: Sequence[tuple[float, float]], fallback_ms_per_sample: float) -> Shape:
    """``fit``, each measured batch predicted from the others (three or more)."""
    shape = fit(points, fallback_ms_per_sample)
    merged = shape.points
    errors = []
    if len(merged) >= 3:
        for i, (batch, ms) in enumerate(merged):
            other = fit(merged[:i] + merged[i + 1 :], fallback_ms_per_sample)
            errors.append((batch, other.ms(batch) / ms - 1))
    return replace(shape, left_out=tuple(errors))


def fit_compute(single: pd.DataFrame) -> tuple[float, float] | None:
    """(fixed ms, achieved TFLOP/s): ``fixed_cost.line`` through the forward + backward
    against the work (GFLOP) of N = 1 rows of one family and configuration; None without
    two distinct work sizes or a rising line."""
    rows = single.dropna(subset=["forward_ms", "backward_ms", "flops_per_sample", "params"])
    work_gflop = (rows["batch_per_device"] * rows["flops_per_sample"]).to_numpy(float) / 1e9
    if len(np.unique(work_gflop)) < 2:
        return None
    fb = (rows["forward_ms"] + rows["backward_ms"]).to_numpy(float)
    fixed, ms_per_gflop = line(list(zip(work_gflop, fb, strict=True)))
    if ms_per_gflop <= 0:
        return None
    return fixed, 1 / ms_per_gflop


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


def split(row: pd.Series, model: ModelSpec, fitted: tuple[float, float] | None) -> Split:
    """The fixed cost of ``row``'s forward and backward (its N = 1 run) and the split of the
    step it gives (``fitted``: :func:`fit_compute` over its family's N = 1 runs)."""
    fb = float(row["forward_ms"] + row["backward_ms"])
    batch = float(row["batch_per_device"])
    work_ms_per_tflop = work_ms(batch, model.flops, 1.0)
    measured = _own_fixed(row, fb)
    own = measured  # FSDP's own work at N = 1, fixed per step, where more than that
    gap = cell(row, "fsdp_overhead_ms", float, 0.0)
    if row["strategy"] == "fsdp" and gap > 0:
        accum = cell(row, "accum", int, 1)
        ms = min(gap / max(accum, 1), fb * (1 - 1e-6))  # per micro-step, as fixed_ms
        if measured is None or measured.ms < ms:
            own = FixedCost.exact(
                ms,
                source=Source.MEASURED,
                basis=Finding.of(K.FSDP_OWN_WORK, basis=fsdp_own(row)),
                at_batch=batch,
            )
    if measured is None and own is not None:  # FSDP's gap measured, not the rest: assumed
        rest = unmeasured(row, max(fb - own.ms, 1e-9), model.flops)
        if rest.high_ms > 0:
            own = replace(
                rest,
                ms=own.ms + rest.ms,
                low_ms=own.low_ms + rest.low_ms,
                high_ms=own.high_ms + rest.high_ms,
                basis=Finding.of(
                    K.WITH_UNMEASURED,
                    part=own.ms,
                    source=own.source,
                    basis=own.basis,
                    rest=rest.ms,
                    rest_low=rest.low_ms,
                    rest_high=rest.high_ms,
                    rest_basis=rest.basis,
                ),
            )
    small = cell(row, "small_batch_step_ms_mean", float)
    peak, found = ceiling(row.get("device"), row.get("threads"), row.get("peak_tflops"))
    if own is not None and small is not None:  # ``within_peak`` on the row's plain steps
        checked = within_peak(
            own,
            fb_ms=fb,
            batch=batch,
            flops_per_sample=model.flops,
            peak_tflops=float(peak),
            plain_ms=(
                (float(row["small_batch_per_device"]), small),
                (batch, float(row["plain_step_ms_mean"])),
            ),
            ceiling=found,
        )
        if checked is not None:
            return replace(
                checked, note=Finding.of(K.MODEL_NOTE, model=row["model"], note=checked.note)
            )
    if own is not None:  # an FSDP gap with the prior added is assumed, not measured
        said = Finding.of(K.FIXED_MEASURED_FOR, ms=own.ms, source=own.source, model=row["model"])
    elif fitted is not None:  # the family's rate, no faster than the device can go
        tflops = min(fitted[1], peak)
        fixed = fb - work_ms_per_tflop / tflops  # absorbs the model's own measured step
        if fixed < 0:  # faster than the family: all of the step is work at its own rate
            fixed, tflops = 0.0, work_ms_per_tflop / fb
        cost = FixedCost.exact(
            fixed,
            source=Source.FITTED,
            basis=Finding.of(K.FAMILY_RATE_FIT, family=row["family"]),
            at_batch=batch,
            measure=measure_command(row),
        )
        said = Finding.of(
            K.FAMILY_SPLIT, tflops=tflops, family=row["family"], fixed=fixed, model=row["model"]
        )
        return Split(cost, fixed, tflops, 0.0, said)
    else:  # one batch of one model: the device prior, its range in the interval
        own = unmeasured(row, fb, model.flops)
        said = Finding.of(K.ONE_BATCH, work=own.ms == 0, ms=own.ms)
    return Split(own, own.ms, work_ms_per_tflop / max(fb - own.ms, 1e-9), 0.0, said)


def fsdp_own(row: pd.Series) -> Finding:
    """How ``row``'s FSDP own work at N = 1 was read (ms): its synchronised step less its
    no-sync step where the plain step is no faster than that (``case`` ``nosync``), else less
    its plain step (``plain``), else unread."""
    columns = ("fsdp_overhead_ms", "step_ms_mean", "plain_step_ms_mean", "nosync_step_ms_mean")
    own, step, plain, nosync = (None if pd.isna(v := row.get(c)) else float(v) for c in columns)
    case = "unread"
    if step is not None and plain is not None:
        case = "plain"
    if step is not None and nosync is not None and (plain is None or plain >= nosync):
        case = "nosync"
    return Finding.of(K.FSDP_OWN, own=own, case=case, step=step, plain=plain, nosync=nosync)


def _own_fixed(row: pd.Series, fb_ms: float) -> FixedCost | None:
    """The fixed cost the bench measured (two batches at N = 1) less the optimizer's time;
    None without it."""
    point = cell(row, "fixed_ms", float)
    if point is None:
        return None
    opt = float(row["optimizer_ms"])

    def ms(value: float) -> float:
        return min(max(float(value) - opt, 0.0), fb_ms * (1 - 1e-6))

    low = ms(cell(row, "fixed_ms_low", float, point))
    high = ms(cell(row, "fixed_ms_high", float, point))
    return FixedCost(
        ms=min(max(ms(point), low), high),
        low_ms=low,
        high_ms=high,
        source=Source.MEASURED,
        basis=Finding.of(
            K.PLAIN_STEPS_INTERCEPT,
            small=int(row["small_batch_per_device"]),
            batch=int(row["batch_per_device"]),
        ),
        at_batch=float(row["batch_per_device"]),
    )


def measure_command(row: pd.Series) -> Measure:
    """The bench run that measures ``row``'s fixed cost: its N = 1 run in its own
    configuration, timed at its batch and a quarter of it."""
    batch = int(row["batch_per_device"])
    config = bench_options(row, model=False)  # the run's own configuration
    quarter = batch // 4 if batch >= 4 else batch // 2
    return Measure(
        bench=BenchRun(str(row["model"]), (1,), config=config),
        after=Finding.of(K.BENCH_TIMES_BARE, batch=batch, quarter=quarter),
    )


def unmeasured(row: pd.Series, fb_ms: float, flops_per_sample: float) -> FixedCost:
    """The fixed cost of ``row``'s forward and backward (``fb_ms``) where nothing measured
    it."""
    batch = float(row["batch_per_device"])
    measure = measure_command(row)
    if row.get("device") == "cpu":
        return FixedCost.exact(
            0.0,
            source=Source.ASSUMED,
            basis=Finding.of(K.CPU_NO_PRIOR, low=GPU_PRIOR.low, high=GPU_PRIOR.high),
            at_batch=batch,
            measure=measure,
        )
    opt = cell(row, "optimizer_ms", float, 0.0)
    base = replace(
        GPU_PRIOR,
        **{end: max(GPU_PRIOR.at(end) - opt, 0.0) for end in ("low", "point", "high")},
        said=Finding.of(K.PRIOR_LESS_OPTIMIZER, why=GPU_PRIOR.said, opt=opt),
    )
    peak = cell(row, "peak_tflops", float, 0.0)
    at_peak = work_ms(batch, flops_per_sample, peak) if peak > 0 else None
    found = prior(fb_ms, batch, work_at_peak_ms=at_peak, measure=measure, base=base)
    if at_peak is None:
        bound = Finding.of(K.NO_PEAK_UNBOUNDED)
    elif found.high_ms < base.at("high"):
        bound = Finding.of(
            K.PEAK_BOUND,
            high=found.high_ms,
            fb=fb_ms,
            batch=batch,
            at_peak=at_peak,
            peak=peak,
        )
    else:
        bound = None
    basis = Finding.of(K.UNMEASURED_FIXED, basis=found.basis, bound=bound, batch=batch)
    return replace(found, basis=basis, below_prior_ms=None)


def one_rank_own(row: pd.Series) -> float:
    """Of each micro-step of an FSDP row's N = 1 step, what the bare module's step did not
    do (0 for another strategy, or where the plain step is no faster)."""
    plain = cell(row, "plain_step_ms_mean", float)
    if row["strategy"] != "fsdp" or plain is None or not plain > 0:
        return 0.0
    whole = float(row["forward_ms"] + row["backward_ms"] + row["optimizer_ms"])
    return max(0.0, whole - plain)

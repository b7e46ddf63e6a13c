"""The predictions table: for each device count N the search tries per-device batches ``b``
(the measured one and its halves) and accumulations ``k`` (powers of two): the global batch
is ``B = N b k``, the samples to train ``E(B)`` (``analysis.critical_batch``), the
throughput ``X`` the step model's, and the time to train ``T = E(B) / X``; the fastest
(b, k) wins. Hence

    ``speedup(N) = T(1) / T(N) = [X(N) / X(1)] * [E(B_1) / E(B_N)]``
                                   throughput          convergence factor

as ``analyze --decompose`` splits MLPerf's speedups. Without a convergence model the
measured per-device batch is kept (k = 1): the search would otherwise always accumulate.

Every candidate is predicted at once (``model.step.step_table``) at the compute's point and
at the ends of its ranges (the priors', the fixed cost's). The 80% intervals span them,
``x exp(-/+ width at N)`` of the step's error; the step's lower end is never below its
compute, so the speedup's upper end is never above a step of compute alone's nor linear.
By numbers on a link given or detected, the speedup's interval is its link class's
calibrated rule (``search/intervals.py``)."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import pandas as pd

from gpuscale.advice.calibration import Calibration
from gpuscale.advice.explain.build_words import source_at
from gpuscale.advice.explain.phrasebook import said
from gpuscale.advice.model.fixed_cost import excess_ms
from gpuscale.advice.model.step import Candidate, Step, step_table
from gpuscale.advice.search import intervals
from gpuscale.advice.types import Finding, FindingKind
from gpuscale.tables.advice import ADVICE_COLUMNS

# why a predicted row cannot be true, as the search's columns: its time to train not
# positive and finite; its speedup where above linear (NaN where not)
FLAGGED = ("not_positive", "above_linear")
LINEAR = "linear_speedup"  # beside them, the linear speedup where above it (NaN where not)


def plausible(frame: pd.DataFrame) -> pd.Series:
    """The rows none of whose ``FLAGGED`` columns is set."""
    return ~frame["not_positive"].astype(bool) & frame["above_linear"].isna()


def _candidates(cal: Calibration, n: int) -> list[Candidate]:
    """(devices, per-device batch, accumulation) tried at ``n`` devices: with the global
    batch kept, the fewest micro-steps that split it into whole batches no larger than fits."""
    run = cal.run
    kept = run.kept_global_batch
    if kept is not None:
        per_device = kept / n
        for accum in range(1, run.max_accum + 1):
            batch = per_device / accum
            if batch < 1:
                break
            if batch == int(batch) and batch <= run.largest_batch:
                return [(n, int(batch), accum)]
        return []
    if cal.search.convergence is None or run.scaling == "weak":
        return [(n, run.batch, run.accum)]
    batches = [run.batch // 2**i for i in range(64)]  # the batch and its halves
    batches = [b for b in batches if b >= max(1, run.min_batch)]
    accums = [2**i for i in range(64) if 2**i <= run.max_accum]
    return [(n, b, k) for b in batches for k in accums]


def predicted(
    cals: Sequence[Calibration], rule: intervals.IntervalRule | None = None
) -> tuple[list[pd.DataFrame], Finding | None]:
    """The predictions of each of ``cals`` (a calibration, then its variants) and the
    speedup interval's rule as the first one's advice says it (None: the model's own)."""
    first, interval = _predicted(cals[0], rule)
    return [first, *(_predicted(cal, rule)[0] for cal in cals[1:])], interval


def predictions(cal: Calibration, rule: intervals.IntervalRule | None = None) -> pd.DataFrame:
    """The predictions table (``tables.advice.ADVICE_SCHEMA``), one row per count at its
    fastest candidate (none where no batch fits), with plausibility flags as data; ``rule``:
    the speedup's interval per link class (``intervals.advised``)."""
    return _predicted(cal, rule)[0]


def _predicted(
    cal: Calibration, rule: intervals.IntervalRule | None
) -> tuple[pd.DataFrame, Finding | None]:
    tried = [c for n in cal.machine.device_counts for c in _candidates(cal, n)]
    model, convergence = cal.model, cal.search.convergence
    fixed = model.fixed
    resplit = []
    if fixed is not None and fixed.uncertain:  # the ends of the fixed cost's range too
        resplit = [(fixed.at_batch, ms) for ms in (fixed.low_ms, fixed.high_ms)]
    every = [model.compute, *model.prior_range]
    table = step_table(cal.machine.network, cal.run, model.spec, every, tried, resplit)
    # each count's fastest candidate: (its steps, time to train, samples)
    best: dict[int, tuple[tuple[Step, ...], float, float]] = {}
    for (n, _, _), steps in zip(tried, table, strict=True):
        step = steps[0]
        samples = (
            cal.search.samples if convergence is None else convergence.samples(step.global_batch)
        )
        time_s = samples / step.samples_per_s
        if n not in best or time_s < best[n][1]:
            best[n] = (steps, time_s, samples)
    classes = [steps[0].link for steps, _, _ in best.values()]
    frame = pd.DataFrame(
        [
            {
                "accelerators": n,
                "batch_per_device": step.batch_per_device,
                "accum": step.accum,
                "global_batch": step.global_batch,
                "step_ms": step.step_ms,
                "compute_ms": step.compute_ms,
                "ddp_ms": step.ddp_ms,
                "wait_ms": step.wait_ms,
                "comm_ms": step.comm_ms,
                "latency_ms": min(step.latency_ms, step.comm_ms),
                "exposed_comm_ms": step.exposed_ms,
                "samples_per_s": step.samples_per_s,
                "samples_to_train": samples,
                "time_to_train_min": time_s / 60,
                "compute_measured": step.measured,
                "range_step_ms": tuple(s.step_ms for s in ranged),
                "range_compute_ms": tuple(s.compute_ms for s in ranged),
            }
            for n, ((step, *ranged), time_s, samples) in best.items()
        ]
    )
    if frame.empty or frame["accelerators"].iloc[0] != 1:
        found = Finding.of(
            FindingKind.BATCH_NOT_SPLIT,
            global_batch=cal.run.global_batch,
            largest=cal.run.largest_batch,
            accum=cal.run.max_accum,
        )
        raise ValueError(said(found))
    first = frame.iloc[0]
    ideal = frame["accelerators"] / first["accelerators"]  # linear
    frame["speedup"] = first["time_to_train_min"] / frame["time_to_train_min"]
    frame["efficiency"] = frame["speedup"] / frame["accelerators"]
    frame["throughput_efficiency"] = frame["samples_per_s"] / first["samples_per_s"] / ideal
    frame["convergence_factor"] = first["samples_to_train"] / frame["samples_to_train"]
    frame["accelerator_hours"] = frame["accelerators"] * frame["time_to_train_min"] / 60
    price = cal.search.price_per_device_hour
    frame["cost"] = frame["accelerator_hours"] * (math.nan if price is None else price)
    # a device's power follows its batch: each count is charged its own per-device batch's
    counts = list(zip(frame["accelerators"].astype(int), frame["batch_per_device"], strict=True))
    total_w = [cal.machine.power.total_w(n, b) for n, b in counts]
    frame["energy_kwh"] = [
        minutes / 60 * (math.nan if w is None else w) / 1e3
        for minutes, w in zip(frame["time_to_train_min"], total_w, strict=True)
    ]
    frame["fixed_excess_ms"] = excess_ms(frame)
    frame["unexplained_ms"] = 0.0  # a predicted step is the sum of its terms
    frame["rests_on"] = "predicted"  # ``reconcile.applied``: where a measurement governs
    memory, strategy = cal.machine.memory, cal.run.strategy  # the strategy advised
    frame["fits"] = [memory is None or memory.holds(strategy, n) for n, _ in counts]
    width = np.array([cal.model.error.width_at(int(n)) for n, _ in counts])
    ends = np.array(list(frame["range_step_ms"]), float).reshape(len(frame), -1).T
    # time to train (in a unit of its own) at each end
    times = frame["samples_to_train"].to_numpy(float) * ends / frame["global_batch"].to_numpy(float)
    steps = np.vstack([frame["step_ms"].to_numpy(float), ends])
    speedups = np.vstack([frame["speedup"].to_numpy(float), times[:, :1] / times])
    range_compute = np.array(list(frame["range_compute_ms"]), float).reshape(len(frame), -1)
    computes = np.vstack([frame["compute_ms"].to_numpy(float), range_compute.T])
    frame["step_ms_low"] = np.maximum(steps.min(axis=0) * np.exp(-width), computes.min(axis=0))
    frame["step_ms_high"] = steps.max(axis=0) * np.exp(width)
    frame["speedup_low"] = speedups.min(axis=0) * np.exp(-width)
    with np.errstate(divide="ignore", invalid="ignore"):  # no compute: no bound
        compute_alone = np.where(computes > 0, speedups * steps / computes, np.inf).max(axis=0)
    high = np.minimum(speedups.max(axis=0) * np.exp(width), compute_alone)
    frame["speedup_high"] = pd.Series(high, index=frame.index).clip(upper=ideal)
    frame["energy_source"] = [source_at(cal.machine.power, n, b) for n, b in counts]
    frame["compute_source"] = np.where(frame["compute_measured"], "measured", "modelled")
    # why a row cannot be true, as data (``Advice.predictions`` says it in ``flags``)
    not_positive, above_linear = FLAGGED
    time = frame["time_to_train_min"]
    frame[not_positive] = ~((time > 0) & np.isfinite(time))
    above = frame["speedup"] > ideal * (1 + 1e-9)
    frame[above_linear] = frame["speedup"].where(above)  # the speedup where it is, else NaN
    frame[LINEAR] = ideal.where(above)
    # the documented order (``tables.advice``), the flags as data in place of ``flags``
    frame = frame[[c for c in ADVICE_COLUMNS if c != "flags"] + [*FLAGGED, LINEAR]]
    return intervals.widened(rule, cal, frame, computes.min(axis=0), compute_alone, classes)

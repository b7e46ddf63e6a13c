"""From the step model and the convergence model to a recommendation: how many devices,
with what per-device batch and gradient accumulation, the break-even, time, cost and
energy to a trained model.

The predictions table: for each device count N the search tries per-device batches
``b`` (the measured one and its halves) and accumulation ``k`` (powers of two): the global
batch is ``B = N b k``, the samples to train ``E(B)`` (``gpuscale.analysis.critical_batch``),
the throughput ``X`` the step model's, and the time to train ``T = E(B) / X``; the fastest
(b, k) wins. Hence

    ``speedup(N) = T(1) / T(N) = [X(N) / X(1)] * [E(B_1) / E(B_N)]``
                                   throughput          convergence factor

exactly as ``analyze --decompose`` splits MLPerf's speedups. Without a convergence model
the samples do not depend on the batch (optimistic past the critical batch) and the
measured per-device batch is kept (k = 1): the search would otherwise always accumulate.

Intervals: every candidate's step is predicted at the compute's point and at the ends of
the fixed cost's range (the measured step kept: ``Compute.resplit``) and of the priors'
ranges (``advice/model/priors.py``); the chosen row's 80% intervals of the step and the
speedup span them, ``x exp(-/+ width at N)`` of the step's error, made in the same pass as
the table. The step's lower end is never below its compute term at that count (the least
over the ranges: a step computes, whatever its overheads), so the speedup's upper end is
never above the speedup of a step of compute alone (``speedup x step / compute`` at each
end) nor linear. By numbers on a link given or detected, the speedup's interval is then
its link class's calibrated rule (``search/intervals.py``), the step's ends moved by the
same factors (its lower end still no lower than its compute).

Then, in a row: the measured counts that disagree with the predictions and the rows
resting on those measurements, the decision and its readings at the ends of every assumed
term's range, the equilibrium picks and the break-even (``break_even``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from functools import cached_property

import numpy as np
import pandas as pd

from gpuscale.advice.assumptions import Assumption
from gpuscale.advice.calibration import Calibration
from gpuscale.advice.explain import caveats as words
from gpuscale.advice.explain import memory as memory_words
from gpuscale.advice.explain.findings import said
from gpuscale.advice.measured_runs import MeasuredCount
from gpuscale.advice.memory import MemoryCheck
from gpuscale.advice.model.fixed_cost import excess_ms
from gpuscale.advice.model.priors import FEW_NOISE_STEPS
from gpuscale.advice.model.step import step_of
from gpuscale.advice.records import BreakEven, Decision, Picks, Qualifiers
from gpuscale.advice.search import intervals
from gpuscale.advice.search.break_even import break_even, equilibrium
from gpuscale.advice.search.decision import (
    FLAGGED,
    applied,
    below_mlperf,
    decide,
    disagreements,
    measured_counts,
    plausible,
)
from gpuscale.advice.search.readings import read, with_readings
from gpuscale.advice.types import Disagreement, Finding, FindingKind, maybe
from gpuscale.tables.advice import ADVICE_COLUMNS
from gpuscale.tables.requests import NamedError


@dataclass(frozen=True)
class Advice:
    """The predictions, the one :class:`Decision` read off them and what qualifies it, as
    data; the words (``decision``'s warnings and what to measure first, ``caveats``,
    ``explanation``, ``str``) are rendered from them when read
    (``advice/explain/caveats.py``), never stored by the search."""

    # one row per device count (see ``predictions``), its flags as data (``FLAGGED``):
    # ``predictions`` says them
    table: pd.DataFrame
    decided: Decision  # as the search decided it (``decision``: with its words)
    picks: Picks  # the counts other rules pick
    break_even: BreakEven
    calibration: Calibration  # what it was computed from
    # strong scaling decided: the same counts keeping the per-device batch (weak), whose
    # gain rests on the samples a larger global batch needs
    weak_table: pd.DataFrame | None = None  # ``alternative``, its flags as data
    # counts whose measured runs fall outside the predicted interval: their rows rest on
    # the measurement (``decision.applied``), said first
    disagreements: tuple[Disagreement, ...] = ()
    # every count measured in a configuration predicted, its runs against the prediction
    # (``decision.measured_counts``): the one figure the views say of them
    measured_counts: tuple[MeasuredCount, ...] = ()
    # (count, predicted minutes, the fastest MLPerf system's floor, that system) of each
    # count predicted faster than MLPerf allows: an input that cannot be true
    below_mlperf: tuple[tuple[int, float, float, str], ...] = ()
    qualifiers: Qualifiers = field(default_factory=Qualifiers)
    # the input pipeline: the samples/s the largest count predicted consumes, and that
    # count (``assumptions`` says it in the input pipeline's term)
    input_rate: tuple[float, int] | None = None
    # what each device holds per count and strategy, where memory limits the counts of
    # the strategy asked (None: one device holds the model, or its memory is unknown)
    memory: MemoryCheck | None = None
    # the speedup's interval as its link class's calibrated rule (``search/intervals.py``)
    # where it applies, said (None: the model's own)
    interval: Finding | None = None

    def __str__(self) -> str:
        """The advice as ``gpuscale advise`` says it (``print(advice)``; the fields, and
        every number, are the dataclass's: ``repr``)."""
        return "\n".join(f"- {line}" for line in self.explanation)

    @cached_property
    def predictions(self) -> pd.DataFrame:
        """The predictions table (``tables.advice``): ``table`` with its flags said."""
        return words.flagged(self.table)

    @cached_property
    def alternative(self) -> pd.DataFrame | None:
        """The weak-scaling alternative (``weak_table``) with its flags said."""
        return maybe(words.flagged, self.weak_table)

    @cached_property
    def assumptions(self) -> tuple[Assumption, ...]:
        """The calibration's assumptions, the input pipeline's saying ``input_rate``."""
        return words.assumed(self)

    @cached_property
    def decision(self) -> Decision:
        """``decided`` with its words (the warnings, what to measure first)."""
        return words.render_decision(self)

    @cached_property
    def caveats(self) -> tuple[str, ...]:
        """What makes the headline less firm, and measurements beside the prediction:
        also the explanation's first lines."""
        return words.caveats(self)

    @cached_property
    def explanation(self) -> list[str]:
        return words.explanation(self)

    @property
    def recommended(self) -> int | None:
        """The count advised: the decision's ``count``, as the CLI says it and ``-f json``
        carries it (None where an assumed term's range moves it: ``decision.withheld_by``;
        ``decision.chosen.accelerators``: the count of the predictions shown)."""
        return self.decided.count

    @property
    def decision_line(self) -> int:
        """Where "Use N devices ..." stands in ``explanation``: after what qualifies it
        (``caveats``, said first) and the decision's warnings (``explain`` says them
        before it)."""
        return len(self.caveats) + len(self.decision.warnings)


def _candidates(cal: Calibration, n: int) -> list[tuple[int, int]]:
    """(per-device batch, accumulation) pairs the search tries at ``n`` devices."""
    run = cal.run
    kept = run.kept_global_batch
    if kept is not None:
        # the fewest micro-steps that split the global batch into whole per-device
        # batches no larger than the one that fits
        per_device = kept / n
        for accum in range(1, run.max_accum + 1):
            batch = per_device / accum
            if batch < 1:
                break
            if batch == int(batch) and batch <= run.largest_batch:
                return [(int(batch), accum)]
        return []
    if cal.search.convergence is None or run.scaling == "weak":
        return [(run.batch, run.accum)]
    batches = [run.batch // 2**i for i in range(64)]  # the batch and its halves
    batches = [b for b in batches if b >= max(1, run.min_batch)]
    accums = [2**i for i in range(64) if 2**i <= run.max_accum]
    return [(b, k) for b in batches for k in accums]


def _predicted(cal: Calibration, n: int) -> dict[str, object] | None:
    """The row of ``n`` devices at the fastest (batch, accumulation) of ``_candidates`` to a
    trained model (None where no batch fits), its step predicted at the compute's point and
    at the ends of the ranges (``range_*``: the module's docstring). ``latency_ms``: one
    latency per collective (``step_collectives.latency_s``), at most the communication."""
    tried = _candidates(cal, n)
    model, network, run = cal.model, cal.machine.network, cal.run
    spec, fixed = model.spec, model.fixed
    computes = [model.compute, *model.prior_range]
    if fixed is not None and fixed.uncertain:
        for value in (fixed.low_ms, fixed.high_ms):
            computes.append(model.compute.resplit(spec, fixed.at_batch, value))
    best = None
    for batch, accum in tried:
        steps = [
            step_of(network, run, spec, compute, n, batch=batch, accum=accum)
            for compute in computes
        ]
        step, convergence = steps[0], cal.search.convergence  # samples to train at its batch
        samples = (
            cal.search.samples if convergence is None else convergence.samples(step.global_batch)
        )
        time_s = samples / step.samples_per_s
        if best is None or time_s < best[1]:
            best = (steps, time_s, samples)
    if best is None:
        return None
    (step, *ends), time_s, samples = best
    return {
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
        "range_step_ms": tuple(s.step_ms for s in ends),
        "range_compute_ms": tuple(s.compute_ms for s in ends),
    }


def _known(value: float | None) -> float:
    """``value``, NaN where it is unknown (a column's missing number)."""
    if value is None:
        return math.nan
    return value


def predictions(cal: Calibration, rule: intervals.IntervalRule | None = None) -> pd.DataFrame:
    """The predictions table (columns: ``tables.advice.ADVICE_SCHEMA``), one row per
    accelerator count: the best (batch, accumulation), the step and its parts
    (ms), throughput, samples and time to train, speedup and efficiency (to a trained
    model, and split into throughput efficiency x convergence factor), device-hours, cost
    and energy per trained model, and plausibility flags. ``rule``: the speedup's interval
    calibrated per link class (None: the model's own)."""
    rows = [_predicted(cal, n) for n in cal.machine.device_counts]
    frame = pd.DataFrame([r for r in rows if r is not None])
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
    frame["cost"] = frame["accelerator_hours"] * _known(price)
    # a device's power follows its batch: each count is charged its own per-device batch's
    counts = list(zip(frame["accelerators"].astype(int), frame["batch_per_device"], strict=True))
    total_w = [cal.machine.power.total_w(n, b) for n, b in counts]
    frame["energy_kwh"] = [
        minutes / 60 * _known(w) / 1e3
        for minutes, w in zip(frame["time_to_train_min"], total_w, strict=True)
    ]
    frame["fixed_excess_ms"] = excess_ms(frame)
    frame["unexplained_ms"] = 0.0  # a predicted step is the sum of its terms
    frame["rests_on"] = "predicted"  # ``decision.applied``: where a measurement governs
    # the 80% intervals (the module's docstring): over the ranges' ends (``range_*``), then
    # widened by the step's error at N
    width = np.array([cal.model.error.width_at(int(count)) for count in frame["accelerators"]])
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
    if rule is not None:  # the link class's calibrated interval; the step's ends alike
        frame = intervals.applied(
            rule, cal.machine.network, frame, computes.min(axis=0), compute_alone
        )
    frame["energy_source"] = [cal.machine.power.source_at(n, b) for n, b in counts]
    # whether one device's forward + backward at this per-device batch was measured
    frame["compute_source"] = np.where(frame["compute_measured"], "measured", "modelled")
    # why a row cannot be true, as data (``Advice.predictions`` says it in ``flags``): a
    # time to train not positive and finite, a speedup above linear against the first
    not_positive, above_linear = FLAGGED
    time = frame["time_to_train_min"]
    frame[not_positive] = ~((time > 0) & np.isfinite(time))
    above = frame["speedup"] > ideal * (1 + 1e-9)
    frame[above_linear] = frame["speedup"].where(above)  # the speedup where it is, else NaN
    # the documented order (``tables.advice``), the flags as data in place of ``flags``
    return frame[[c for c in ADVICE_COLUMNS if c != "flags"] + list(FLAGGED)]


def recommend(
    cal: Calibration, fits_from: int = 1, rule: intervals.IntervalRule | None = None
) -> Advice:
    """Predictions and the Decision for one model on one network, with the count at each
    end of every assumed term's range (``cal.search.ends``, ``readings.read``: where one
    moves it, the count is withheld); no count below ``fits_from`` (the fewest devices
    that hold the model: ``advice.memory``) is chosen, efficient or cheapest. ``rule``: the
    speedup's interval calibrated per link class (None: the model's own)."""
    run, goal, network = cal.run, cal.search, cal.machine.network
    multi = cal.machine.max_devices >= 2 and run.global_batch is None
    weak = multi and run.kept_global_batch is not None and goal.convergence is None
    # the table; where the global batch is kept without a convergence model, the same
    # counts keeping the per-device batch too (the weak-scaling alternative)
    frame = predictions(cal, rule)
    alternative = predictions(cal.at({"run": {"scaling": "weak"}}), rule) if weak else None
    # a count the bench measured outside the predicted interval rests on the measurement
    measured = measured_counts(frame, cal.runs.measured, alternative)  # what every view says
    found = disagreements(measured)
    counts = {m.devices for m in cal.runs.measured}  # measured counts: as said
    frame = applied(frame, found, counts)
    alternative = applied(alternative, found, counts)
    below = below_mlperf(frame, goal.mlperf_floor)  # each an input that cannot be true
    refused = cal.said.implausible or bool(below)

    def decide_on(at: Calibration, table: pd.DataFrame, refused: bool) -> Decision:
        # why none above the largest predicted: the cap (``device_counts``)
        efficiency, warnings = at.search.target_efficiency, at.said.warnings
        return decide(table, efficiency, warnings, refused, at.machine.device_counts, fits_from)

    def decide_at(changes: dict[str, dict[str, object]]) -> Decision:
        at = cal.at(changes)
        return decide_on(at, applied(predictions(at, rule), found, counts), at.said.implausible)

    decision = with_readings(decide_on(cal, frame, refused), read(goal.ends, decide_at))
    trusted = frame[plausible(frame)]
    fitting = trusted[trusted["accelerators"] >= fits_from]
    trusted = fitting if len(fitting) else trusted  # none predicted holds it: ``decide``'s rule
    picks = equilibrium(trusted, goal.threshold)
    ms_per_mb, params, target = break_even(cal) if multi else (None, None, None)
    last = frame.iloc[-1]  # the input pipeline: the samples/s the largest count needs
    ok = trusted[trusted["efficiency"] >= goal.target_efficiency]
    efficient = int(ok["accelerators"].max()) if len(ok) else None
    cheapest = None
    if trusted["accelerator_hours"].notna().any():
        cheapest = int(trusted.loc[trusted["accelerator_hours"].idxmin(), "accelerators"])
    return Advice(
        table=frame,
        decided=decision,
        picks=Picks(efficient, cheapest, picks),
        break_even=BreakEven(ms_per_mb, params, target),
        calibration=cal,
        weak_table=alternative,
        disagreements=found,
        measured_counts=measured,
        below_mlperf=below,
        input_rate=(float(last.samples_per_s), int(last.accelerators)),
        interval=None if rule is None else rule.said(network, list(frame["accelerators"])),
    )


def search(cal: Calibration) -> Advice:
    """The advice on ``cal``: predictions, decision, the count at each end of every assumed
    term's range (``readings.read``; where one moves it, the count is withheld and said
    first), and what qualifies the headline, as data."""
    held_by, fits_from, memory = held(cal)
    advice = recommend(held_by, fits_from, intervals.rule_for(cal))
    few = cal.search.noise_steps
    qualifiers = Qualifiers(
        defaults=cal.search.defaults,
        noise_steps=few if few is not None and few < FEW_NOISE_STEPS else None,
        model_note=cal.said.model_note,
        model_chosen=cal.said.chosen,
    )
    return replace(advice, qualifiers=qualifiers, memory=memory)


def held(cal: Calibration) -> tuple[Calibration, int, MemoryCheck | None]:
    """(the calibration, the fewest devices that hold the model, the memory check where it
    limits the counts): the strategy asked where a count searched holds the model under
    it, else the strategy that holds it on the fewest (``MemoryCheck.fallback``); a
    ``NamedError`` where no count searched holds it under any strategy."""
    memory = cal.machine.memory
    if memory is None or not memory.limits:
        return cal, 1, None
    asked = memory.fits_from(memory.strategy)
    if asked is not None:
        return cal, asked, memory
    if memory.fallback is None:
        raise NamedError(memory_words.nothing_fits(memory))
    strategy, fewest = memory.fallback
    return cal.at({"run": {"strategy": strategy}}), fewest, memory

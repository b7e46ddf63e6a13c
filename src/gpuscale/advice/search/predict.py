"""The predictions table and its 80% intervals. At N devices the search tries per-device
batches ``b`` (the measured one and its halves; without a convergence model, it alone) and
accumulations ``k`` (powers of two): ``B = N b k``, samples to train ``E(B)``
(``analysis.critical_batch``), the step model's throughput ``X``, ``T = E(B) / X``; the
fastest (b, k) wins, so ``speedup(N) = T(1) / T(N) = [X(N) / X(1)] * [E(B_1) / E(B_N)]``
(throughput x convergence factor).

The interval spans the step at the compute's point and at the ends of its ranges (the
priors', the fixed cost's), ``x exp(-/+ width at N)`` of the step's error; the step's lower
end is never below its compute, the speedup's upper end never above linear nor a step of
compute alone's. By numbers on a link given or detected, the speedup's interval is its link
class's rule (``data/advice_intervals.json``, fitted by ``benchmarks/advice_intervals.py``):
with the model's point ``p`` and interval ``[l, h]`` at N, ``g = sqrt(log2 N)`` and a
class's widths ``a`` (low) and ``b`` (high), ``model`` ``[l, h]``; ``scale``
``[p (l/p)^a, p (h/p)^b]``; ``band`` ``[p exp(-a g), p exp(b g)]``; ``union`` the wider of
the model's and the band at each end; ``extend`` ``[l exp(-a g), h exp(b g)]``. A count's
class is ``multinode`` where it spans nodes, else its link's; a link of no class keeps the
model's interval."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from gpuscale.advice.calibration import Calibration
from gpuscale.advice.model.network import CLASSES
from gpuscale.advice.model.step import Candidate, Step, step_table
from gpuscale.advice.types import Finding, FindingKind, read_data
from gpuscale.tables import measures
from gpuscale.tables.advice import ADVICE_COLUMNS

INTERVALS_FILE = "advice_intervals.json"
KINDS = ("model", "scale", "band", "union", "extend")
# why a predicted row cannot be true, as columns: its time to train not positive and
# finite; its speedup where above linear (NaN where not), beside ``linear_speedup``
FLAGGED = ("not_positive", "above_linear")


def plausible(frame: pd.DataFrame) -> pd.Series:
    return ~frame["not_positive"].astype(bool) & frame["above_linear"].isna()


def holding(frame: pd.DataFrame, fits_from: int) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The ``plausible`` rows, and those from ``fits_from`` devices up (the fewest that hold
    the model)."""
    plain = frame[plausible(frame)]
    return plain, plain[plain["accelerators"] >= fits_from]


class Refused(ValueError):
    """The search cannot go on, for the reason ``finding`` records (``explain`` says it)."""

    def __init__(self, finding: Finding) -> None:
        super().__init__(finding.kind.value)
        self.finding = finding


@dataclass(frozen=True, slots=True)
class ClassWidths:
    """One link class's widths (a factor for ``scale``, a log width at N = 2 else)."""

    low: float
    high: float
    development_rows: int


@dataclass(frozen=True, slots=True)
class IntervalRule:
    kind: str
    classes: Mapping[str, ClassWidths]

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"interval rule {self.kind!r} is none of {', '.join(KINDS)}")
        unknown = sorted(set(self.classes) - set(CLASSES))
        if unknown:
            raise ValueError(f"link classes {unknown} are none of {', '.join(CLASSES)}")
        for name, w in self.classes.items():
            if not (w.low >= 0 and w.high >= 0 and math.isfinite(w.low + w.high)):
                raise ValueError(f"{name}: widths {w} not finite and >= 0")

    def said(self, classes: Sequence[str | None]) -> Finding | None:
        """The rule for the counts' link ``classes`` (None where none of them has one)."""
        found = {c: self.classes[c] for c in dict.fromkeys(classes) if c in self.classes}
        if not found:
            return None
        each = tuple(
            Finding.of(
                FindingKind.INTERVAL_CLASS,
                link_class=name,
                rule=self.kind,
                low=w.low,
                high=w.high,
                # a band's ends at N = 2 as shares of the point
                low_share=math.exp(-w.low) - 1,
                high_share=math.exp(w.high) - 1,
                rows=w.development_rows,
            )
            for name, w in found.items()
        )
        return Finding.of(FindingKind.INTERVAL_CALIBRATED, rule=self.kind, classes=each)


def rule_of(entry: Mapping[str, object]) -> IntervalRule:
    classes = entry["classes"]
    assert isinstance(classes, Mapping)
    widths = {
        n: ClassWidths(float(c["low"]), float(c["high"]), int(c["rows"]))
        for n, c in classes.items()
    }
    return IntervalRule(str(entry["kind"]), widths)


RULE = rule_of(read_data(INTERVALS_FILE))


def _candidates(cal: Calibration, n: int) -> list[Candidate]:
    """(devices, per-device batch, accumulation) tried at ``n`` devices: with the global
    batch kept, the fewest micro-steps that split it into whole batches no larger than fits."""
    run, kept = cal.run, cal.run.kept_global_batch
    if kept is not None:
        split = run.split(n)
        return [] if split is None else [(n, *split)]
    if len(cal.tried_batches) == 1:
        return [(n, run.batch, run.accum)]
    # none larger than the memory check's micro-batch at ``n`` (the largest that holds)
    memory = cal.machine.memory
    fitting = None if memory is None else memory.micro_batch(n)
    batches = [b for b in cal.tried_batches if fitting is None or b <= fitting]
    accums = [2**i for i in range(64) if 2**i <= run.max_accum]
    return [(n, b, k) for b in batches for k in accums]


def _fastest(cal: Calibration) -> dict[int, tuple[tuple[Step, ...], np.ndarray, float]]:
    """Each count's fastest candidate: its steps (the point, the ranges' ends), time to
    train at each (ms), samples to train; one whose global batch is at most its samples to
    train before any larger (a step of more samples than the training holds cannot be run)."""
    tried = [c for n in cal.machine.device_counts for c in _candidates(cal, n)]
    model, convergence = cal.model, cal.search.convergence
    fixed = model.fixed
    resplit = []
    if fixed is not None and fixed.uncertain:  # the ends of the fixed cost's range too
        resplit = [(fixed.at_batch, ms) for ms in (fixed.low_ms, fixed.high_ms)]
    every = [model.compute, *model.prior_range]
    table = step_table(cal.machine.network, cal.run, model.spec, every, tried, resplit)
    best: dict[int, tuple[tuple[Step, ...], np.ndarray, float]] = {}
    keys: dict[int, tuple[bool, float]] = {}
    for (n, _, _), steps in zip(tried, table, strict=True):
        batch = steps[0].global_batch
        samples = cal.search.samples
        if convergence is not None:
            samples = convergence.samples(batch)
        times_ms = whole_steps(samples, batch) * np.array([s.step_ms for s in steps], float)
        key = (batch > samples, times_ms[0])
        if n not in best or key < keys[n]:
            best[n], keys[n] = (steps, times_ms, samples), key
    return best


def whole_steps(samples: float | np.ndarray, global_batch: float | np.ndarray) -> np.ndarray:
    """The optimizer steps that train ``samples``: ``ceil(samples / global batch)``, as a
    step trains a whole global batch (63 samples at a batch of 512 still take one step)."""
    return np.ceil(np.asarray(samples, float) / global_batch * (1 - 1e-12))


def predicted(
    cal: Calibration, rule: IntervalRule | None = None
) -> tuple[pd.DataFrame, Finding | None]:
    """The predictions table (``tables.advice.ADVICE_SCHEMA``), one row per count at its
    fastest candidate (none where no batch fits), its flags as data; and the speedup
    interval's ``rule`` as the advice says it (None: the model's own interval)."""
    best = _fastest(cal)
    if next(iter(best), None) != 1:
        found = Finding.of(
            FindingKind.BATCH_NOT_SPLIT,
            global_batch=cal.run.global_batch,
            largest=cal.run.largest_batch,
            accum=cal.run.max_accum,
        )
        raise Refused(found)
    frame = pd.DataFrame(
        [
            {
                "accelerators": n,
                # the columns a step gives as they are, those its attributes name
                **{c: getattr(step, c) for c in ADVICE_COLUMNS if hasattr(step, c)},
                "latency_ms": min(step.latency_ms, step.comm_ms),
                "exposed_comm_ms": step.exposed_ms,
                "samples_to_train": samples,
                "time_to_train_min": times_ms[0] / 1e3 / 60,
                "compute_source": "measured" if step.measured else "modelled",
            }
            for n, ((step, *_), times_ms, samples) in best.items()
        ]
    )
    first, devices = frame.iloc[0], frame["accelerators"]
    reference = first["accelerators"]  # the smallest count searched
    ideal = devices / reference  # linear
    frame["speedup"] = measures.speedup(first["time_to_train_min"], frame["time_to_train_min"])
    frame["efficiency"] = measures.efficiency(frame["speedup"], devices)
    rate = measures.rate_speedup(frame["samples_per_s"], first["samples_per_s"])
    frame["throughput_efficiency"] = measures.normalized_efficiency(rate, devices, reference)
    frame["convergence_factor"] = first["samples_to_train"] / frame["samples_to_train"]
    frame["accelerator_hours"] = measures.accelerator_hours(devices, frame["time_to_train_min"])
    frame["cost"] = measures.cost(frame["accelerator_hours"], cal.search.price_per_device_hour)
    # a device's power follows its batch: each count is charged its own per-device batch's
    counts = list(zip(frame["accelerators"].astype(int), frame["batch_per_device"], strict=True))
    watts = np.array([cal.machine.power.total_w(n, b) for n, b in counts], float)  # None: NaN
    frame["energy_kwh"] = frame["time_to_train_min"] / 60 * watts / 1e3
    # the ``fixed`` term, ms: ``max(compute_N - compute_1 x samples_N / samples_1, 0)``
    # (samples per device and step)
    samples = frame["batch_per_device"] * frame["accum"]
    share = first["compute_ms"] * samples / (first["batch_per_device"] * first["accum"])
    frame["fixed_excess_ms"] = (frame["compute_ms"] - share).clip(lower=0.0)
    frame["unexplained_ms"] = 0.0  # a predicted step is the sum of its terms
    frame["rests_on"] = "predicted"  # ``decide.applied``: where a measurement governs
    memory, strategy = cal.machine.memory, cal.run.strategy  # the strategy advised
    frame["fits"] = [memory is None or memory.holds(strategy, n) for n, _ in counts]
    width = np.array([cal.model.error.width_at(int(n)) for n, _ in counts])
    # each row's step and compute (ms) at the point, then at each end of the ranges
    each = [[(s.step_ms, s.compute_ms) for s in steps] for steps, _, _ in best.values()]
    steps, computes = np.array(each, float).transpose(2, 1, 0)
    times = np.array([t for _, t, _ in best.values()], float).T[1:]  # at each end, ms
    point = frame["speedup"].to_numpy(float)
    speedups = np.vstack([point, times[:, :1] / times])
    least = computes.min(axis=0)
    step_low = np.maximum(steps.min(axis=0) * np.exp(-width), least)
    step_high = steps.max(axis=0) * np.exp(width)
    low = speedups.min(axis=0) * np.exp(-width)
    with np.errstate(divide="ignore", invalid="ignore"):  # no compute: no bound
        compute_alone = np.where(computes > 0, speedups * steps / computes, np.inf).max(axis=0)
    ceiling = np.minimum(compute_alone, ideal.to_numpy(float))
    high = np.minimum(speedups.max(axis=0) * np.exp(width), ceiling)
    said = None
    # a bench keeps its own interval, an assumed link its range of presets
    own = rule is None or rule.kind == "model" or cal.bench is not None
    if not (own or cal.machine.link_assumed):
        classes = [found[0].link for found, _, _ in best.values()]
        said = rule.said(classes)
        # a row of no class of the rule keeps the model's interval
        known = np.array([c in rule.classes for c in classes], bool)
        a = np.array([rule.classes[c].low if c in rule.classes else 0.0 for c in classes])
        b = np.array([rule.classes[c].high if c in rule.classes else 0.0 for c in classes])
        counts_n = frame["accelerators"].to_numpy(float)
        new_low, new_high = ends(rule.kind, (a, b), point, low, high, counts_n, ceiling)
        new_low, new_high = np.where(known, new_low, low), np.where(known, new_high, high)
        # the step's ends move by the same factors (its upper end by the speedup's lower
        # end's), never below the least compute over the ranges nor past the step
        step = frame["step_ms"].to_numpy(float)
        step_low = np.minimum(np.maximum(step_low * high / new_high, least), step)
        step_high = np.maximum(step_high * low / new_low, step)
        low, high = new_low, new_high
    frame["step_ms_low"], frame["step_ms_high"] = step_low, step_high
    frame["speedup_low"], frame["speedup_high"] = low, high
    time = frame["time_to_train_min"]
    frame["not_positive"] = ~((time > 0) & np.isfinite(time))
    above = frame["speedup"] > ideal * (1 + 1e-9)
    frame["above_linear"] = frame["speedup"].where(above)  # the speedup where it is, else NaN
    frame["linear_speedup"] = ideal.where(above)
    # the documented order (``tables.advice``), the flags as data in place of the columns
    # the words fill (``explain.caveats.flagged``)
    columns = [c for c in ADVICE_COLUMNS if c not in ("flags", "energy_source")]
    return frame[[*columns, *FLAGGED, "linear_speedup"]], said


def ends(
    kind: str,
    widths: tuple[np.ndarray, np.ndarray],
    point: np.ndarray,
    low: np.ndarray,
    high: np.ndarray,
    counts: np.ndarray,
    ceiling: np.ndarray,
) -> tuple[np.ndarray, np.ndarray]:
    """The interval of ``kind`` at each row: ``widths`` (low, high) per row, the model's
    ``point`` and ``[low, high]`` at ``counts`` devices, the upper end at most ``ceiling``."""
    a, b = (np.asarray(w, float) for w in widths)
    p, lo, hi = (np.asarray(v, float) for v in (point, low, high))
    g = np.sqrt(np.log2(np.maximum(np.asarray(counts, float), 1.0)))  # 0 at one device
    with np.errstate(divide="ignore", invalid="ignore"):
        band = (p * np.exp(-a * g), p * np.exp(b * g))
        new_low, new_high = {
            "model": (lo, hi),
            "scale": (p * (lo / p) ** a, p * (hi / p) ** b),
            "band": band,
            "union": (np.minimum(lo, band[0]), np.maximum(hi, band[1])),
            "extend": (lo * np.exp(-a * g), hi * np.exp(b * g)),
        }[kind]
    # the point inside, the upper end at most the ceiling (a point above it is flagged)
    return np.minimum(new_low, p), np.minimum(np.maximum(new_high, p), ceiling)

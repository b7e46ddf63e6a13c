"""A plan at one count from the fits, in plain Python (no numpy, no pandas: one
``gpuscale plan`` stays under a second of CPU).

For family ``f`` of workload ``w`` at ``N`` devices, at the level of round ``R`` (default:
the workload's newest), with ``x = log2 N``:

* the global batch ``B``: at a count the family ran, its newest results' own there
  (:func:`submitted_batch`, unrounded: a batch a submission ran is runnable); elsewhere
  the runnable one (:func:`runnable_batch`: a whole per-device batch, or for a model
  parallel workload ``m`` samples per ``k`` devices) nearest the one assumed, the
  workload's typical batch at ``N`` (``batch_curve``: the median over families of each
  one's newest choice at each count, made non-decreasing in the count
  (``planning.workload``), extended beyond the counts at the slope of the end counts'
  own medians, clipped to [0, 1]: :func:`typical_log2_batch`) times the family's own
  ratio to it, interpolated in
  ``log2`` between the counts the family ran and held beyond them: at a count it ran, its
  own newest choice; between two far-apart counts, the workload's steps (Llama2 keeps 8
  up to 64 devices), not a straight line; a family that never ran ``w`` takes the
  typical batch;
* ``log y = a_f + d_{f,R} + s(x) + u_f(x) + c log2(B / N) + anchor_f(N)``
  (``gpuscale.planning.pooled``; the anchor, :func:`anchor_at`: at a count the family ran,
  its newest round's mean residual there, interpolated in ``log2 N`` between two such
  counts and faded beyond them, so the plan never jumps to a measured count); a family
  that never ran ``w`` takes
  ``a_f + u_f(3) = speed_f + speed_w`` from the other workloads (``gpuscale.planning.fits``)
  and the shared shape;
* minutes ``T = exp(log y + e_R) C(B) / N`` with ``C(B) = E(B) / E(B_ref)``,
  ``E(B) = e_min (1 + B / b_noise)`` (the round's RCPs) and ``e_R`` its era's level;
* the class of the count: ``i`` (measured before for this family and workload), ``ii_in``
  / ``ii_out`` (not measured: inside / outside the family's measured counts), ``iii``
  (the family never ran the workload), and the 80% interval
  ``T exp(+-q_class g (1 + widen x octaves outside))`` with ``q_class`` the calibrated
  80% quantile of the absolute log error of that class (``gpuscale.planning.calibrate``)
  and ``g`` the widening for what the level rests on (:func:`evidence_factor`; between
  and beyond the counts never narrower than at them; class (iii): the workloads the
  family's speed rests on, :func:`transfer_factor`),
  widened at a count the family ran to hold its own newest results there, each at the
  plan's definition of the workload (:func:`own_results`, :func:`definition_factor`: one
  system's time at a count spreads with its CPUs, software and submitter, and the plan's
  interval never excludes a result it cites; a result of another definition is held as
  that definition moves it, not as it ran: Stable Diffusion v3.1's 20.21 min on Gaudi2 at
  64 is about 10.0 at v5.0's).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Mapping
from fractions import Fraction
from typing import TypeVar

from gpuscale.planning.intervals import (
    CLASSES,
    DEFAULT_INTERVALS,
    EVIDENCE_PRIOR,
    EVIDENCE_PRIORS,
    PRIORS_FILE,
    evidence,
    evidence_factor,
    prior_intervals,
    transfer_factor,
)
from gpuscale.planning.records import FamilyFit, Fits, PlanRow, SystemEntry, WorkloadFit
from gpuscale.planning.shape import PIN, hat_values
from gpuscale.tables.workloads import round_key

ANCHOR_PRIOR = 1.0  # an anchor of k systems is shrunk by k / (k + this)

V = TypeVar("V")  # the values by round: levels (float), era numbers, RCP records

# how wide a plan is (``intervals``), imported from here too
__all__ = [
    "CLASSES",
    "DEFAULT_INTERVALS",
    "EVIDENCE_PRIOR",
    "EVIDENCE_PRIORS",
    "PRIORS_FILE",
    "evidence",
    "evidence_factor",
    "prior_intervals",
    "transfer_factor",
]


def at_round(
    values: Mapping[str, V], round_name: str | None, default: V | float | None = 0.0
) -> V | float | None:
    """The value of ``round_name``, else of the newest round before it, else of the
    newest of all (a random walk carries the last level forward)."""
    if not values:
        return default
    ordered = sorted(values, key=round_key)
    if round_name is None:
        return values[ordered[-1]]
    before = [r for r in ordered if round_key(r) <= round_key(round_name)]
    return values[before[-1]] if before else values[ordered[0]]


def convergence(workload: WorkloadFit, batch: float, round_name: str | None) -> float:
    """``E_R(B) / E_R(B_ref)`` by the RCPs of ``round_name`` (default: the newest); 1 when
    convergence is not modelled."""
    rcp = at_round(workload["rcp"] or {}, round_name, None)
    if rcp is None:
        return 1.0
    return (1 + batch / rcp["b_noise"]) / (1 + workload["reference_batch"] / rcp["b_noise"])


def interpolate(
    xs: list[float],
    ys: list[float],
    x: float,
    *,
    extend: bool,
    end_slopes: list[float] | None = None,
) -> float:
    """Linear in ``x`` between the points; beyond them flat, or (``extend``) continued by
    the end segment's slope (``end_slopes``: the slopes below and above, where given)
    clipped to [0, 1] (a batch grows at most as fast as N)."""
    if len(xs) == 1:
        return ys[0]
    if x <= xs[0] or x >= xs[-1]:
        edge, other = (0, 1) if x <= xs[0] else (-1, -2)
        if not extend:
            return ys[edge]
        slope = (ys[edge] - ys[other]) / (xs[edge] - xs[other])
        if end_slopes is not None:
            slope = end_slopes[edge]
        return ys[edge] + min(max(slope, 0.0), 1.0) * (x - xs[edge])
    for k in range(1, len(xs)):
        if x <= xs[k]:
            t = (x - xs[k - 1]) / (xs[k] - xs[k - 1])
            return ys[k - 1] + t * (ys[k] - ys[k - 1])
    return ys[-1]


def log2_batch(workload: WorkloadFit, family: FamilyFit | None, x: float) -> float:
    """``log2`` of the global batch assumed at ``x = log2 N``: the workload's typical
    batch there plus the family's offset from it, interpolated between the counts the
    family ran and held beyond them (see the module docstring)."""
    if family is None:
        return typical_log2_batch(workload, x)
    xs, ys = family["batch"]["log2_n"], family["batch"]["log2_b"]
    offsets = [y - typical_log2_batch(workload, at) for at, y in zip(xs, ys, strict=True)]
    return typical_log2_batch(workload, x) + interpolate(xs, offsets, x, extend=False)


def typical_log2_batch(workload: WorkloadFit, x: float) -> float:
    """``log2`` of the workload's typical global batch at ``x = log2 N``: its curve
    (``planning.workload``) between the counts run, beyond them continued at the slope
    of the families' own medians at the two end counts (older fits: the curve's)."""
    curve = workload["batch_curve"]
    slopes = curve.get("end_slopes")
    return interpolate(curve["log2_n"], curve["log2_b"], x, extend=True, end_slopes=slopes)


def ran_batch(entry: SystemEntry) -> bool:
    """Whether the system's submission said the global batch it ran: its ``batch`` not NaN
    (not said) and above 0."""
    batch = float(entry[5])
    return not math.isnan(batch) and batch > 0


def fewest_per_device(workload: WorkloadFit) -> float:
    """The smallest per-device batch any system of the workload ran (BERT: 4; inf where
    none said its batch)."""
    systems = [s for family in workload["families"].values() for s in family["systems"]]
    return min((float(s[5]) / int(s[3]) for s in systems if ran_batch(s)), default=math.inf)


def floor_per_device(workload: WorkloadFit) -> float:
    """The smallest per-device batch any system of the workload ran, capped at 1 (a
    workload whose submissions never shared a sample between devices: 1)."""
    return min(1.0, fewest_per_device(workload))


def batch_grain(workload: WorkloadFit) -> int:
    """``k``: the largest power of two among the denominators of the workload's
    submissions' per-device batches ``B / N`` in lowest terms (``1152 / 1536 = 3 / 4``:
    4; Llama 3.1 405B's 3 / 16: 16); 1 where every one is whole or its denominator odd
    (data parallel: whole samples per device). A model parallel group of ``TP x PP``
    devices (a power of two) runs whole samples a step, so the global batch divides by
    the data-parallel size ``N / k``, not by ``N``."""
    grain = 1
    for family in workload["families"].values():
        for s in family["systems"]:
            if ran_batch(s):
                share = Fraction(round(float(s[5])), int(s[3]))
                grain = max(grain, share.denominator & -share.denominator)
    return grain


def runnable_batch(assumed: float, n: int, floor: float = 1.0, grain: int = 1) -> int:
    """The global batch a user can run nearest the ``assumed`` one on ``n`` devices.

    Data parallel (``grain`` 1, :func:`batch_grain`): ``n`` times the nearest whole
    per-device batch (at least 1). Model parallel (``grain`` ``k0 > 1``): ``m`` samples per
    ``k`` devices, ``k`` a power of two, at least ``k0``, and ``m`` whole, the nearest (in
    ``log``) the assumed per-device batch: ``k = max(k0, 2^j)`` for the power of two
    ``2^j`` nearest (in ``log``) the devices per sample assumed, ``n / assumed``, and ``m``
    the whole number nearest (in ``log``) ``k assumed / n`` (at least 1), so the planned
    batch is within a factor ``2^(1/2)`` of the assumed one (1.75 per device stays
    ``7 / 4``, not 2; 0.75 stays ``3 / 4``, not 1); where ``k`` does not divide ``n`` the
    batch is ``m n / k`` rounded to whole samples, its devices per sample not whole (said).
    Below one sample per device with ``grain`` 1 (a workload whose submissions' shares are
    no power of two), the same with ``k0 = 1``: ``m`` is then 1. At least ``n`` times the
    ``floor`` (the fewest samples per device any system ran) where the assumed batch is
    within float rounding of it. ``k`` follows the batch assumed, never the count's
    divisors: choosing among those made the batch, and the time, jump from count to count
    (Llama2 at 316 devices: 79 samples at 4 devices each, +50% against 312 and 320).

    Halfway (within :data:`FLOAT_SLACK`) between two runnable batches, the smaller: a whole
    per-device batch ``m + 1/2`` gives ``m``, ``1 / sqrt(2)`` times ``1 / 2^j`` per
    device gives ``2^(j+1)`` devices per sample, and ``m`` halfway in ``log`` between two
    whole numbers the fewer. The smaller batch is one
    the workload's convergence references cover (its RCPs run down to small batches, not
    always up), and one rule at every count keeps the planned per-device batch a function
    of the assumed one (a tie left to float rounding puts one assumed per-device batch in
    two cells at two counts, a batch twice the other)."""
    per = assumed / n
    if per >= 1 and grain == 1:
        return n * max(1, _nearest_whole(per, ties_up=False))
    k = max(grain, 2 ** _nearest_whole(math.log2(1 / per), ties_up=True))
    m = _nearest_in_log(k * per)
    # at the floor within float rounding: at least the floor (a batch assumed further below
    # it is refused by the plan, ``limits.refusals``, and scored as assumed by the backtest)
    lift = math.ceil(n * floor - FLOAT_SLACK) if per >= floor * (1 - FLOAT_SLACK) else 1
    return max(1, _nearest_whole(m * n / k, ties_up=False), lift)


def _nearest_in_log(value: float) -> int:
    """The whole number (at least 1) nearest ``value`` in ``log``: of ``lo = floor`` and
    ``lo + 1``, ``lo`` where ``value`` is at most their geometric mean (within
    :data:`FLOAT_SLACK`: halfway, the fewer)."""
    lo = math.floor(value)
    if lo < 1:
        return 1
    return lo if value * value <= lo * (lo + 1) * (1 + FLOAT_SLACK) else lo + 1


def _nearest_whole(value: float, *, ties_up: bool) -> int:
    """The whole number nearest ``value``; within :data:`FLOAT_SLACK` of halfway, the one
    above (``ties_up``) or below."""
    if ties_up:
        return math.floor(value + 0.5 + FLOAT_SLACK)
    return math.ceil(value - 0.5 - FLOAT_SLACK)


# Samples a step closer than this to the floor are at it (a batch interpolated in log
# gave 0.12499999 per device on Llama2 at 320 where every system ran 1 per 8: refused).
FLOAT_SLACK = 1e-6

# Beyond the family's measured counts an anchor (a count's newest results off the model's
# line) fades to none, at most this fast (log units per octave: half of what ideal scaling,
# 1/N, gives, so the fade never turns a falling time into a rising one), and over at least
# ANCHOR_FADE_MIN octaves. Carried a whole octave out, the edge's anchor made the forecasts
# beyond the counts worse (forward backtest, class ii_out: 9.1% -> 13.1% median error).
ANCHOR_FADE_SLOPE = math.log(2) / 2
ANCHOR_FADE_MIN = 1 / 16


def anchor_at(family: FamilyFit | None, n: int) -> tuple[float, list[int]]:
    """(log offset of the model's line at ``n``, the measured counts it rests on): at a
    count the family ran, that count's anchor (its newest results' mean residual, shrunk
    ``k / (k + ANCHOR_PRIOR)``); between two it ran, linear in ``log2 N`` between their
    anchors; beyond them, the edge's anchor fading linearly to 0 over
    ``max(ANCHOR_FADE_MIN, |anchor| / ANCHOR_FADE_SLOPE)`` octaves. (An anchor at its count
    alone moved the plan by up to 11% from one count to the next: Stable Diffusion 512 ->
    516 on H100.)"""
    if family is None or not family["counts"]:
        return 0.0, []
    counts = sorted(int(c) for c in family["counts"])
    value = {c: family["counts"][str(c)]["anchor"] for c in counts}
    if n in value:
        return value[n], [n]
    x = math.log2(n)
    if counts[0] < n < counts[-1]:
        hi = next(c for c in counts if c > n)
        lo = max(c for c in counts if c < n)
        t = (x - math.log2(lo)) / (math.log2(hi) - math.log2(lo))
        return (1 - t) * value[lo] + t * value[hi], [lo, hi]
    edge = _nearest(counts, n)
    width = max(ANCHOR_FADE_MIN, abs(value[edge]) / ANCHOR_FADE_SLOPE)
    fade = max(0.0, 1 - abs(x - math.log2(edge)) / width)
    return value[edge] * fade, [edge] if fade > 0 else []


def _nearest(counts: list[int], n: int) -> int:
    """Of ``counts``, the nearest ``n`` in log (outside them: the edge on its side)."""
    return min(counts, key=lambda c: abs(math.log2(n / c)))


def count_class(family: FamilyFit | None, n: int) -> tuple[str, float]:
    """(class, octaves outside the family's measured counts) of ``n``."""
    if family is None:
        return "iii", 0.0
    counts = sorted(int(c) for c in family["counts"])
    if str(n) in family["counts"]:
        return "i", 0.0
    if counts[0] < n < counts[-1]:
        return "ii_in", 0.0
    return "ii_out", abs(math.log2(n / _nearest(counts, n)))


def own_results(family: FamilyFit | None, n: int) -> list[SystemEntry]:
    """The family's systems at exactly ``n`` devices in the newest round it ran ``n`` (the
    results the count's anchor is of): ``[round, submitter, system, devices, minutes,
    batch]`` each; none where the family never ran ``n``."""
    if not family or str(n) not in family["counts"]:
        return []
    newest = family["counts"][str(n)]["round"]
    return [s for s in family["systems"] if int(s[3]) == n and s[0] == newest]


def definition_factor(
    workload: WorkloadFit, since: str, batch: float, round_name: str | None = None
) -> float:
    """How the definition of the workload at ``round_name`` (default: the fit's round, the
    plan's) moves a time at global batch ``batch`` against round ``since``'s: the era's
    level step times the samples to converge by each round's RCPs (``C(B)``); 1 where
    both rounds are of one era (one definition)."""
    r = round_name or workload["round"]
    then, now = at_round(workload["era"], since), at_round(workload["era"], r)
    if then == now:
        return 1.0
    step = math.exp(workload["era_level"][now] - workload["era_level"][then])
    return step * convergence(workload, batch, r) / convergence(workload, batch, since)


def at_definition(
    workload: WorkloadFit, entry: SystemEntry, batch: float, round_name: str | None = None
) -> float:
    """A result's minutes at the plan's definition of the workload
    (:func:`definition_factor`, at the result's own global batch where it said one, else
    ``batch``)."""
    own = float(entry[5]) if ran_batch(entry) else batch
    return float(entry[4]) * definition_factor(workload, entry[0], own, round_name)


def submitted_batch(held: list[SystemEntry]) -> int | None:
    """The global batch of the family's newest results at a count (:func:`own_results`):
    where they ran several, the most common, and among equally common ones the fastest
    result's (the first the plan leans on: ``result.leaned_on``); None without results."""
    ran = [s for s in held if ran_batch(s)]
    if not ran:
        return None
    tally = Counter(round(float(s[5])) for s in ran)
    most = max(tally.values())
    fastest = min((s for s in ran if tally[round(float(s[5]))] == most), key=lambda s: s[4])
    return round(float(fastest[5]))


def plannable(fits: Fits, workload: str, family: str) -> bool:
    """Whether ``family`` has a level on ``workload``: it ran it, or its speed is linked to
    the workload's through families that ran both (``fits.components``)."""
    if workload not in fits["workloads"]:
        return False
    if family in fits["workloads"][workload]["families"]:
        return True
    groups = fits["speed"]["component"]
    return family in groups and groups[family] == groups.get(f"workload:{workload}")


def own_shape(family: FamilyFit, x: float) -> float:
    """``u_f(x)``: the family's own departure from the shared shape (none: 0)."""
    if not family["shape"]:
        return 0.0
    return hat_values(family["shape"], x)


def _log_y(fits: Fits, workload: WorkloadFit, family_name: str, x: float, r):
    """(log y without the batch term, its shared-shape part ``s(x)``, its family-shape part
    ``u_f(x)``)."""
    family = workload["families"].get(family_name)
    shape = hat_values(workload["shape"], x)
    if family is None:
        speed = fits["speed"]
        level = speed["family"][family_name] + speed["workload"][workload["workload"]]
        return level + shape - hat_values(workload["shape"], PIN), shape, 0.0
    own = own_shape(family, x)
    level = family["level"] + at_round(family["round_level"], r)
    return level + shape + own, shape, own


def _minutes(workload: WorkloadFit, log_y: float, batch: float, n: int, round_name: str) -> float:
    """Minutes to train on ``n`` devices at global batch ``batch``: device-minutes per
    reference-batch sample ``exp(log_y)``, times ``C(B)``, over ``n``."""
    return math.exp(log_y) * convergence(workload, batch, round_name) / n


def minutes_at_batch(
    fits: Fits, workload_name: str, point: PlanRow, batch: float, round_name: str | None = None
) -> float:
    """The plan's time at ``point``'s count (a :func:`predict_point` of the same fits and
    round) had it assumed global batch ``batch``: the per-device batch's term
    ``c log2(B / N)`` and the samples to converge ``C(B)`` at ``batch``, every other term
    as planned; ``point``'s own time at its own batch."""
    workload = fits["workloads"][workload_name]
    n = point["accelerators"]
    log_y = point["log_y"] - point["log_batch"] + workload["batch_slope"] * math.log2(batch / n)
    return _minutes(workload, log_y, batch, n, round_name or workload["round"])


def predict_point(
    fits: Fits,
    workload_name: str,
    family_name: str,
    n: int,
    round_name: str | None = None,
) -> PlanRow:
    """The plan of ``n`` devices (a dict: ``accelerators``, ``time_to_train_min``,
    ``time_to_train_min_low``, ``time_to_train_min_high``, ``global_batch``,
    ``expected_to_converge``, ``batch_per_accelerator``, ``count_class``,
    ``octaves_outside``, ``half_width`` (log, calibrated), ``calibrated_low`` and
    ``calibrated_high`` (the interval before it holds ``own_results``, the family's newest
    results at ``n``: :func:`own_results`), ``convergence`` (``C(B)``), ``log_y`` and
    its parts ``log_shared`` (``s``), ``log_own`` (``u_f``), ``log_anchor``,
    ``log_batch`` (``c log2(B / N)``))."""
    workload = fits["workloads"][workload_name]
    family = workload["families"].get(family_name)
    x = math.log2(n)
    held = own_results(family, n)  # none but at a count the family ran (class i)
    ran = submitted_batch(held)
    if ran is not None:  # the submissions' own: runnable, as they ran it
        assumed, batch = float(ran), ran
    else:  # a batch a user can run: a whole per-device batch, or m samples per k devices
        assumed = 2.0 ** log2_batch(workload, family, x)
        batch = runnable_batch(assumed, n, floor_per_device(workload), batch_grain(workload))
    log_y, shared, own = _log_y(fits, workload, family_name, x, round_name)
    log_batch = workload["batch_slope"] * math.log2(batch / n)
    log_y += log_batch
    kind, octaves = count_class(family, n)
    anchor, anchored = anchor_at(family, n)
    log_y += anchor
    r = round_name or workload["round"]
    log_y += workload["era_level"][at_round(workload["era"], r)]
    rcp = at_round(workload["rcp"] or {}, r, None)
    expected = rcp["e_min"] * (1 + batch / rcp["b_noise"]) if rcp else math.nan
    minutes = _minutes(workload, log_y, batch, n, r)
    intervals = fits.get("intervals") or DEFAULT_INTERVALS
    rests_on = evidence(family)
    factor_e = evidence_factor(rests_on["pairs"], intervals.get(f"evidence_{kind}", 0.0))
    if kind == "iii":  # the transfer's evidence: the workloads the family ran
        rests_on["workloads"], factor_e = transfer_factor(fits, family_name)
    base = intervals[kind] * factor_e
    if kind in ("ii_in", "ii_out"):  # never narrower than at the counts the level rests on
        base = max(
            base,
            intervals["i"] * evidence_factor(rests_on["pairs"], intervals.get("evidence_i", 0.0)),
        )
    half = base * (1 + intervals["widen"] * octaves)
    factor = convergence(workload, batch, r)
    low, high = minutes * math.exp(-half), minutes * math.exp(half)
    # the family's own newest results here at the plan's definition of the workload
    converted = [at_definition(workload, s, batch, r) for s in held]
    return {
        "accelerators": n,
        "time_to_train_min": minutes,
        # the calibrated interval, widened to hold the family's own newest results here
        "time_to_train_min_low": min([low, *converted]),
        "time_to_train_min_high": max([high, *converted]),
        "calibrated_low": low,
        "calibrated_high": high,
        "own_results": held,
        "own_converted": converted,
        "global_batch": batch,
        "assumed_batch": assumed,  # before rounding to a runnable batch
        "expected_to_converge": expected,
        "batch_per_accelerator": batch / n,
        "count_class": kind,
        "octaves_outside": octaves,
        # outside the family's measured counts below them (class ii_out: below, not beyond)
        "below_counts": kind == "ii_out" and n < min(int(c) for c in family["counts"]),
        "half_width": half,
        "evidence": rests_on,  # the results the family's level rests on
        # the interval's widening for them (over the class's calibrated half-width)
        "evidence_factor": base / intervals[kind],
        "convergence": factor,
        # log device-minutes per (reference-batch) sample: throughput per device is exp(-y)
        "log_y": log_y,
        # its parts that move with N (``gpuscale.planning.words`` says which moved it)
        "log_shared": shared,
        "log_own": own,
        "log_anchor": anchor,
        "anchor_counts": anchored,  # the measured counts the anchor rests on
        "log_batch": log_batch,  # c log2(B / N): the per-device batch's part
    }

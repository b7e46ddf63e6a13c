"""What the data lets a plan say at a count: each reason a planned row cannot be trusted,
from the workload's measured systems (every family, every round of the data), never from
a list of workloads.

* **no time** (the row kept, its time, interval and throughput NaN): fewer accelerators
  than any system of the workload ran (no measurement below to plan from: a
  405B-parameter model was never run on under 256; whether a count holds the model is
  ``hardware.memory``'s); a per-device batch below one sample
  where no system of the workload ran one that low (the batch assumed, before rounding,
  below the count);
  more than :data:`REFUSE_OCTAVES` beyond the largest count any system ran;
* **flagged** (its time kept): more than :data:`FAR_OCTAVES` beyond that largest count (an
  extrapolation far beyond the data); throughput per accelerator, at the same per-device
  batch, above ``plausibility.SUPERLINEAR_EFFICIENCY`` of the plan's at every smaller
  count the family ran (super-linear scaling: the model's line, not a finding; a property
  of the count, whatever other counts are asked, and a rise the per-device batch explains
  is no such thing); a per-device batch planned above the largest any system of the
  workload ran (the throughput the fit credits a larger per-device batch with is its
  line continued, and the memory check counts no activations: at 2 H100s BERT's batch
  held from 4 is 479 a device, where no result ran over 256); a global batch planned
  above the largest any system of the workload ran (the samples to converge there are
  the convergence references' line continued: a family's ratio to the workload's typical
  batch, carried from the counts it ran, made Llama2 70B LoRA's 1,024 samples a step on
  1,024 A100s, where no result ran over 128); a per-device batch planned below the
  fewest any system of the workload ran (``predict.fewest_per_device``; the throughput
  per accelerator at a smaller batch is the fit's line continued below the data, where
  fixed per-step costs dominate: on 2,048 GB200s Stable Diffusion's 1 sample a device
  was planned at 16.5 ms a step, where no result ran under 2).

Each reason names no count of its own (the table holds them), so rows group by reason.
A flagged row is kept out of the Pareto front and the "stops paying" picks.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

from gpuscale.planning.predict import (
    FLOAT_SLACK,
    batch_grain,
    fewest_per_device,
    floor_per_device,
    log2_batch,
    minutes_at_batch,
    predict_point,
    ran_batch,
    runnable_batch,
)
from gpuscale.planning.records import Facts, Fits, PlanRow, WorkloadFit
from gpuscale.plausibility import SUPERLINEAR_EFFICIENCY
from gpuscale.quantities import filled, format_minutes, joined, number
from gpuscale.tables.workloads import round_key

# Octaves (doublings) beyond the largest count any system of the workload ran: past
# FAR_OCTAVES a time is flagged as far beyond the data, past REFUSE_OCTAVES none is given
# (the 80% intervals widen 25% per octave, calibrated on forecasts a few octaves out: 8x
# past the data the shape, the batch and the convergence are all a line continued).
FAR_OCTAVES = 1.0
REFUSE_OCTAVES = 3.0

NO_TIME = "no time: "  # the prefix of every reason that withholds the time


@dataclass(frozen=True, slots=True)
class Reach:
    """What the workload's measured systems span (any family, any round of the data)."""

    workload: str
    smallest: int  # fewest accelerators a scored result ran the workload on (the fits')
    largest: int  # most accelerators a scored result ran it on
    per_device_batch: float  # smallest global batch / accelerators of any system (samples)
    # the largest global batch / accelerators of any system (samples; NaN: none said its
    # batch), and the (family, round) of the newest system that ran it, and how many did
    most_per_device: float = math.nan
    most_by: tuple[str, str, int] = ("", "", 0)
    # the largest global batch of any system (samples; NaN: none said its batch), and the
    # (family, round) of the newest system that ran it, and how many did
    most_batch: float = math.nan
    most_batch_by: tuple[str, str, int] = ("", "", 0)
    # the (family, round) of the newest system that ran ``per_device_batch``, and how
    # many did (no system: none said its batch)
    least_by: tuple[str, str, int] = ("", "", 0)


def _newest(at: list[tuple[str, str]]) -> tuple[str, str, int]:
    """(family, round) of the newest of the ``(family, round)`` systems at a bound, and
    how many they are; ("", "", 0) for none."""
    family, newest = max(at, key=lambda p: (round_key(p[1]), p[0]), default=("", ""))
    return family, newest, len(at)


def reach(fit: WorkloadFit) -> Reach:
    """The :class:`Reach` of one workload's fit (``gpuscale.planning.cache``)."""
    systems = [(f, s) for f, family in fit["families"].items() for s in family["systems"]]
    counts = [int(s[3]) for _, s in systems]
    ran = [
        (float(s[5]) / int(s[3]), f, str(s[0]))
        for f, s in systems
        if isinstance(s[5], int | float) and math.isfinite(s[5]) and s[5] > 0
    ]
    least = min((per for per, _, _ in ran), default=1.0)
    most = max((per for per, _, _ in ran), default=math.nan)
    # a per-device batch a float's rounding away from the most is the most (14 of unet3d)
    at_most = [(f, r) for per, f, r in ran if per >= most * (1 - FLOAT_SLACK)]
    at_least = [(f, r) for per, f, r in ran if per <= least * (1 + FLOAT_SLACK)]
    batches = [(float(s[5]), f, str(s[0])) for f, s in systems if ran_batch(s)]
    largest = max((b for b, _, _ in batches), default=math.nan)
    # whole samples, as run (13,888, not 13,887.99999999999)
    if math.isfinite(largest) and abs(largest - round(largest)) <= largest * FLOAT_SLACK:
        largest = float(round(largest))
    at_largest = [(f, r) for b, f, r in batches if b >= largest * (1 - FLOAT_SLACK)]
    return Reach(
        fit["workload"],
        min(counts),
        max(counts),
        least,
        most,
        _newest(at_most),
        largest,
        _newest(at_largest),
        _newest(at_least),
    )


def octaves_beyond(n: int, data: Reach) -> float:
    """Octaves from the largest count any system ran to ``n`` (<= 0 inside the data)."""
    return math.log2(n / data.largest)


def below_floor(n: int, global_batch: float, data: Reach) -> bool:
    """Whether ``global_batch`` on ``n`` is under the fewest samples per device any system
    of the workload ran (within float rounding: :data:`predict.FLOAT_SLACK`)."""
    return global_batch / n < min(1.0, data.per_device_batch) * (1 - FLOAT_SLACK)


def runnable_near(fits: Fits, workload: str, family: str, n: int) -> tuple[int | None, int | None]:
    """(the largest count below ``n``, the smallest above it) where the batch assumed is
    runnable (not :func:`below_floor`), within the counts the plan gives a time at (from
    the smallest any system ran to :data:`REFUSE_OCTAVES` beyond the largest); None where
    there is none."""
    fit = fits["workloads"][workload]
    data, own = reach(fit), fit["families"].get(family)

    def ok(m: int) -> bool:  # the plan's batch assumed (``predict_point``), alone: fast
        assumed = 2.0 ** log2_batch(fit, own, math.log2(m))
        return not below_floor(m, assumed, data)

    top = math.floor(data.largest * 2**REFUSE_OCTAVES)
    return _first_count(ok, n - 1, data.smallest, -1), _first_count(ok, n + 1, top, 1)


def _first_count(ok: Callable[[int], bool], start: int, stop: int, step: int) -> int | None:
    """The first count for which ``ok`` holds from ``start`` towards ``stop`` (``step``:
    -1 down, 1 up), on a grid of 1/64 octave first, then count by count within the grid
    step that has it; None where none does."""
    if (start - stop) * step > 0:  # past ``stop`` already
        return None
    grid, k = [start], 1
    while (grid[-1] - stop) * step < 0:
        nxt = round(start * 2 ** (step * k / 64))
        grid.append(min(nxt, stop) if step > 0 else max(nxt, stop))
        k += 1
    previous = start - step
    for g in grid:
        if ok(g):
            return next(m for m in range(previous + step, g + step, step) if ok(m))
        previous = g
    return None


def refusals(
    n: int, global_batch: float, data: Reach, near: tuple[int | None, int | None] = (None, None)
) -> list[str]:
    """Why no time is given at ``n`` accelerators with ``global_batch`` samples a step
    (each reason starts with :data:`NO_TIME`); empty when a time is given. ``near``:
    :func:`runnable_near` of ``n``, said where the batch is the reason (the same for
    every count of one refused stretch, so rows still group by reason)."""
    out = []
    if n < data.smallest:
        out.append(
            f"{NO_TIME}no system of any family ran {data.workload} on fewer than "
            f"{data.smallest:,} accelerators: no measurement below to plan from"
        )
    if below_floor(n, global_batch, data):
        sides = [f"{m:,} {side}" for m, side in zip(near, ("below", "above"), strict=True) if m]
        where = filled(" (the batch assumed is runnable at {})", joined(sides))
        out.append(
            f"{NO_TIME}less than one sample per accelerator, and no system of "
            f"{data.workload} ran fewer than {_samples(data.per_device_batch)} samples per "
            f"accelerator{where}"
        )
    if octaves_beyond(n, data) > REFUSE_OCTAVES:
        out.append(
            f"{NO_TIME}more than {REFUSE_OCTAVES:g} octaves beyond the largest count a "
            f"scored result of {data.workload} ran ({data.largest:,}): the plan stops at "
            f"{round(data.largest * 2**REFUSE_OCTAVES):,}"
        )
    return out


def far_flag(n: int, data: Reach) -> str:
    """The flag of a time far beyond the data at ``n``, else ""."""
    if FAR_OCTAVES < octaves_beyond(n, data) <= REFUSE_OCTAVES:
        return (
            f"far beyond the data: more than {FAR_OCTAVES:g} octave beyond the largest count "
            f"a scored result of {data.workload} ran ({data.largest:,}), an extrapolation"
        )
    return ""


def superlinear_reference(
    fits: Fits, workload: str, family: str, n: int
) -> tuple[int, float] | None:
    """``(m, ratio)``: of the counts below ``n`` the family ran (a family that never ran
    the workload: that any family ran), the one the plan gives the most throughput per
    accelerator at the same per-device batch (the batch term ``c log2(B / N)`` taken out),
    and ``n``'s throughput per accelerator over it, likewise; None where none was run
    below ``n``. A property of ``n`` alone, never of the other counts asked."""
    fit = fits["workloads"][workload]
    own = fit["families"].get(family)
    ran = own["counts"] if own else {c for f in fit["families"].values() for c in f["counts"]}
    smaller = sorted(int(c) for c in ran if int(c) < n)
    if not smaller:
        return None

    def per_sample(m: int) -> float:  # log device-minutes per sample, batch term out
        point = predict_point(fits, workload, family, m)
        return point["log_y"] - point["log_batch"]

    at = {m: per_sample(m) for m in smaller}  # each count predicted once
    best = min(smaller, key=at.__getitem__)
    return best, math.exp(at[best] - per_sample(n))


def superlinear_flag(reference: tuple[int, float] | None, borrowed: bool) -> str:
    """The flag of a count whose :func:`superlinear_reference` ratio is above
    ``SUPERLINEAR_EFFICIENCY``, else "" (``borrowed``: the family never ran the
    workload)."""
    if reference is None or not reference[1] > SUPERLINEAR_EFFICIENCY:
        return ""
    who = "any family" if borrowed else "the family"
    return (
        f"super-linear: throughput per accelerator, at the same per-device batch, above "
        f"{SUPERLINEAR_EFFICIENCY:g}x the plan's at every smaller count {who} ran: more "
        "than linear scaling gives, so the results or the model's line at one of the counts "
        "is off, not a finding"
    )


def batch_beyond(
    fits: Fits, workload: str, point: PlanRow, data: Reach | None = None
) -> Facts | None:
    """Where ``point`` (``predict_point``) plans a per-device batch above the most any
    system of the workload ran (:class:`Reach`, beyond float rounding): its per-device
    batch, the most (``most_per_accelerator``, with the ``family`` and ``round`` of the
    newest system that ran it, and how many ``results`` did), and the plan's
    ``global_batch`` and ``time_to_train_min`` at that most, made runnable
    (``predict.runnable_batch``; :func:`predict.minutes_at_batch`); None where it is
    within what was run. ``data``: the workload's :class:`Reach`, where the caller has it."""
    fit = fits["workloads"][workload]
    data = data or reach(fit)
    n = int(point["accelerators"])
    per = point["global_batch"] / n
    if not per > data.most_per_device * (1 + FLOAT_SLACK):  # NaN: no batch was said
        return None
    batch = runnable_batch(data.most_per_device * n, n, floor_per_device(fit), batch_grain(fit))
    family, round_name, results = data.most_by
    return {
        "batch_per_accelerator": per,
        "most_per_accelerator": data.most_per_device,
        "family": family,
        "round": round_name,
        "results": results,
        "global_batch": batch,
        "time_to_train_min": minutes_at_batch(fits, workload, point, batch),
    }


def _ran_by(facts: Facts) -> str:
    """Who ran a bound: "FAMILY in ROUND" of the newest system, and how many others did."""
    others = facts["results"] - 1
    also = f", and {others:,} other result{'s' if others > 1 else ''}" if others else ""
    return f"{facts['family']} in {facts['round']}{also}"


def batch_flag(beyond: Facts | None, workload: str) -> str:
    """The flag of a count whose per-device batch is beyond the data
    (:func:`batch_beyond`), else ""."""
    if beyond is None:
        return ""
    most = _samples(beyond["most_per_accelerator"])
    # no "; " inside: the plan's flags are joined by it
    return (
        f"batch beyond the data: {_samples(beyond['batch_per_accelerator'])} samples per "
        f"accelerator assumed, more than any result of {workload} ran (at most {most}: "
        f"{_ran_by(beyond)}), where the throughput and the "
        "samples to converge are the fit's lines continued and whether it fits in memory "
        f"is not known (activations are not counted): at {most} per accelerator, a global "
        f"batch of {beyond['global_batch']:,}, the plan gives "
        f"{format_minutes(beyond['time_to_train_min'])}"
    )


def below_fewest(point: PlanRow, data: Reach) -> bool:
    """Whether ``point`` (``predict_point``) plans fewer samples per device than any result
    of the workload ran (:class:`Reach`, beyond float rounding); False where its batch is
    not known."""
    return point["global_batch"] / int(point["accelerators"]) < data.per_device_batch * (
        1 - FLOAT_SLACK
    )


def batch_below(
    fits: Fits,
    workload: str,
    family: str,
    point: PlanRow,
    data: Reach | None = None,
    holds: Callable[[int], bool] | None = None,
) -> Facts | None:
    """Where ``point`` (``predict_point`` of ``family``) plans a per-device batch below
    the fewest any system of the workload ran (:class:`Reach`,
    ``predict.fewest_per_device``, beyond float rounding): its per-device batch and that
    fewest (``least_per_accelerator``, with the ``family`` and ``round`` of the newest
    system that ran it, and how many ``results`` did), and ``instead``: the plan at the
    nearest smaller count whose own batch keeps that fewest per device (:func:`whole_batch_near`;
    None where no count does); None where it is within what was run, or where no system
    said its batch. ``data``: the workload's :class:`Reach`, where the caller has it;
    ``holds``: whether a count's devices hold the model state (the plan's memory check;
    None: every count does)."""
    data = data or reach(fits["workloads"][workload])
    by, round_name, results = data.least_by
    n = int(point["accelerators"])
    if not results or not below_fewest(point, data):
        return None
    return {
        "batch_per_accelerator": point["global_batch"] / n,
        "least_per_accelerator": data.per_device_batch,
        "family": by,
        "round": round_name,
        "results": results,
        "instead": whole_batch_near(fits, workload, family, n, data, holds),
    }


def whole_batch_near(
    fits: Fits,
    workload: str,
    family: str,
    n: int,
    data: Reach,
    holds: Callable[[int], bool] | None = None,
) -> Facts | None:
    """The plan at the largest count below ``n`` that gets a time and whose global batch
    (the plan's own there, ``predict_point``: runnable, whole samples per device) gives
    each device at least the fewest samples any result ran, neither it nor its per-device
    batch above the most any result ran (:func:`global_batch_beyond`,
    :func:`batch_beyond`): ``accelerators``,
    ``global_batch``, ``batch_per_accelerator`` and ``time_to_train_min``; None where no
    count from the smallest any system ran up to ``n`` does. Fewer devices, each with a
    batch the data ran, instead of the throughput line continued below it."""

    def ok(m: int) -> bool:
        point = predict_point(fits, workload, family, m)
        if refusals(m, point["assumed_batch"], data) or (holds and not holds(m)):
            return False
        within = not batch_beyond(fits, workload, point, data)
        within = within and not global_batch_beyond(fits, workload, point, data)
        return within and point["global_batch"] / m >= data.per_device_batch * (1 - FLOAT_SLACK)

    m = _first_count(ok, n - 1, data.smallest, -1)
    if m is None:
        return None
    point = predict_point(fits, workload, family, m)
    return {
        "accelerators": m,
        "global_batch": int(point["global_batch"]),
        "batch_per_accelerator": point["global_batch"] / m,
        "time_to_train_min": point["time_to_train_min"],
    }


def batch_below_flag(below: Facts | None, workload: str) -> str:
    """The flag of a count whose per-device batch is below the data
    (:func:`batch_below`), else "". Its own batch is the table's (global batch / count),
    not said, so the counts below the same fewest share one flag."""
    if below is None:
        return ""
    # no "; " inside: the plan's flags are joined by it
    return (
        "batch below the data: fewer samples per accelerator assumed than any result of "
        f"{workload} ran (at least {_samples(below['least_per_accelerator'])}: "
        f"{_ran_by(below)}), where the throughput per accelerator is the fit's line "
        "continued below the data, and fixed per-step costs, which dominate small "
        "batches, may make a step slower than that line gives" + _instead(below["instead"])
    )


def _instead(instead: Facts | None) -> str:
    """The plan at the nearest smaller count that keeps the data's per-device batch, in
    words (:func:`whole_batch_near`), or that none does."""
    if instead is None:
        return ": no smaller count with a time keeps that many per accelerator within the data"
    return (
        f": on {instead['accelerators']:,} accelerators, the nearest smaller count that "
        f"keeps it ({_samples(instead['batch_per_accelerator'])} per accelerator, a global "
        f"batch of {instead['global_batch']:,}), the plan gives "
        f"{format_minutes(instead['time_to_train_min'])}"
    )


def global_batch_beyond(
    fits: Fits, workload: str, point: PlanRow, data: Reach | None = None
) -> Facts | None:
    """Where ``point`` (``predict_point``) plans a global batch above the largest any
    system of the workload ran (:class:`Reach`, beyond float rounding): its batch, that
    largest (``most``, with the ``family`` and ``round`` of the newest system that ran it,
    and how many ``results`` did), and the plan's ``global_batch`` and
    ``time_to_train_min`` at a batch a user can run on the count within that largest
    (``predict.runnable_batch``, else whole samples per device under it; None where
    neither is, or where it gives each device fewer samples than any system ran,
    ``least_per_accelerator``, ``predict.fewest_per_device``: its time would be the
    per-device batch's line continued below the data, no time said); None where the
    batch is within what was run."""
    fit = fits["workloads"][workload]
    data = data or reach(fit)
    n = int(point["accelerators"])
    if not point["global_batch"] > data.most_batch * (1 + FLOAT_SLACK):  # NaN: none said
        return None
    batch: int | None = runnable_batch(data.most_batch, n, floor_per_device(fit), batch_grain(fit))
    if batch > data.most_batch * (1 + FLOAT_SLACK):  # rounded up past it: whole per device
        per = math.floor(data.most_batch / n * (1 + FLOAT_SLACK))
        batch = n * per if per >= 1 and batch_grain(fit) == 1 else None
    least = fewest_per_device(fit)  # BERT's 4, not the refusal's floor of 1
    if batch is not None and batch / n < least * (1 - FLOAT_SLACK):
        batch = None  # fewer samples per device than any system ran: no time said there
    family, round_name, results = data.most_batch_by
    return {
        "global_batch_assumed": point["global_batch"],
        "most": data.most_batch,
        "least_per_accelerator": least,
        "family": family,
        "round": round_name,
        "results": results,
        "global_batch": batch,
        "time_to_train_min": (
            minutes_at_batch(fits, workload, point, batch) if batch is not None else math.nan
        ),
    }


def _samples(batch: float) -> str:
    """A batch as the table shows it: whole samples in full (13,888, never 13,900; a
    float's rounding away from whole is whole: DLRM's 1,056 a device, 1,056.0000000000007
    as a quotient, never 1,060), else to :func:`number`'s digits."""
    whole = round(batch)
    return f"{whole:,}" if abs(batch - whole) <= abs(batch) * FLOAT_SLACK else number(batch)


def global_batch_flag(beyond: Facts | None, workload: str) -> str:
    """The flag of a count whose global batch is beyond the data
    (:func:`global_batch_beyond`), else ""."""
    if beyond is None:
        return ""
    at = (  # no batch within it runs on the count at the fewest samples per device one ran
        f": no batch within it gives each accelerator {_samples(beyond['least_per_accelerator'])}"
        " samples or more, the fewest any result ran, so no time is given at one"
    )
    if beyond["global_batch"] is not None:
        at = (
            f": at a global batch of {beyond['global_batch']:,}, the plan gives "
            f"{format_minutes(beyond['time_to_train_min'])}"
        )
    # no "; " inside: the plan's flags are joined by it
    return (
        f"global batch above the data: {_samples(beyond['global_batch_assumed'])} samples a "
        f"step assumed, more than any result of {workload} ran (at most "
        f"{_samples(beyond['most'])}: {_ran_by(beyond)}), where "
        "the samples to converge are the convergence references' line continued" + at
    )

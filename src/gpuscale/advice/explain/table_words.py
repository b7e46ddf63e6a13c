"""Sentences read off the predictions where a bare number would mislead: the N = 1 row
beside the bench's N = 1 step, the fixed per-step costs (each forward and backward's, the
optimizer step's) a count pays above its share, and the equilibrium picks."""

from __future__ import annotations

import pandas as pd

from gpuscale.advice.calibration import Calibration, OneDevice
from gpuscale.advice.explain.phrasebook import sentence
from gpuscale.advice.explain.view import AdviceView
from gpuscale.advice.types import Source, maybe
from gpuscale.quantities import format_batch, format_ms

KNEE_COUNTS = 3  # Kneedle needs this many counts to find a bend


def fixed_cost_line(cal: Calibration, opt: float) -> str:
    """The fixed cost said once: each forward and backward's and, where the bench measured
    it apart, the optimizer step beside it (``opt``, ms; together the ``fixed`` term)."""
    fixed = cal.model.fixed
    if opt <= 0:
        return f"Fixed per-step cost: {_fixed_said(cal)}."
    measure = fixed.measure if fixed.source != Source.MEASURED and fixed.measure else None
    return sentence(
        "fixed_costs_line",
        fixed=_fixed_said(cal),
        measure=maybe(str, measure),
        opt=opt,
        strategy=cal.run.strategy,
    )


def _fixed_said(cal: Calibration) -> str:
    """``16.9 ms, entered: ...``: the fixed cost, its range in the same unit where it has
    one, its source and basis."""
    fixed = cal.model.fixed
    high = fixed.high_ms
    span = f" (range {format_ms(fixed.low_ms, like=high)}-{format_ms(high, like=high)})"
    shown = span if fixed.uncertain else ""
    return f"{format_ms(fixed.ms, like=high)}{shown}, {fixed.source}: {fixed.basis}"


def fixed_costs(cal: Calibration, frame: pd.DataFrame, opt: float) -> str:
    """What the fixed per-step costs do as the global batch is split over the table's
    counts: each forward and backward's falls as the micro-steps do; the optimizer step is
    whole on every device under DDP, 1/N under FSDP."""
    accums = tuple(int(k) for k in frame["accum"])
    return sentence(
        "fixed_costs_split",
        opt=cal.run.strategy if opt > 0 else "none",
        varies=len(set(accums)) > 1,
        accum=accums[0],
        accums=accums,
    )


def one_device(advice: AdviceView) -> str:
    """What the N = 1 row's step holds beside the bench's N = 1 step, and what every
    speedup is against ("" where nothing needs saying)."""
    frame, m = advice.predictions, advice.calibration.runs.one_device
    one = frame.iloc[0]
    predicted = float(one["step_ms"])
    more = max(float(next(iter(frame[frame["accelerators"] > 1]["ddp_ms"]), 0.0)), 0.0)
    row = (int(one["batch_per_device"]), int(one["accum"]))
    same = m is not None and row == (m.batch, m.accum)
    case = "none" if more > 0 else ""
    if m is not None and m.strategy == "fsdp":
        case = "fsdp_bare" if m.own_ms > 0 else "fsdp"
    elif m is not None and m.own_ms > 0:
        case = "ddp"
    if not case:
        return ""
    # no bench run at N = 1 (m None): only what the counts above 1 add is said
    step, own = getattr(m, "step_ms", 0.0), getattr(m, "own_ms", 0.0)
    fsdp_own = getattr(m, "fsdp_own_ms", 0.0)
    detail = ""
    if case == "ddp" and m is not None:
        detail = _phases(m, predicted) if same else _like(advice, one, m)
    return sentence(
        "one_device",
        case=case,
        predicted=predicted,
        at=None if m is None or same else config(m.batch, m.accum),
        step=step,
        nosync=step - own,
        own=own,
        detail=detail,
        fsdp_own=fsdp_own,
        overstated=step / (step - fsdp_own) if 0 < fsdp_own < step else None,
        added=more or None,
    )


def _like(advice: AdviceView, one: pd.Series, m: OneDevice) -> str:
    """Where the N = 1 row trains another batch or accumulation than the bench's N = 1
    run, the step the same model predicts at the bench's: the same samples side by side."""
    cal = advice.calibration
    row = (int(one["batch_per_device"]), int(one["accum"]))
    return sentence(
        "one_device_like",
        row_samples=row[0] * row[1],
        row=config(*row),
        bench_samples=m.batch * m.accum,
        bench=config(m.batch, m.accum),
        at_bench=float(cal.model.compute.compute_ms(cal.model.spec, m.batch, m.accum)),
        nosync=m.step_ms - m.own_ms,
    )


def _phases(m: OneDevice, predicted: float) -> str:
    """Where the step predicted (its phases timed apart) is not the no-sync step timed
    whole, the difference."""
    gap = m.step_ms - m.own_ms - predicted
    if format_ms(m.step_ms - m.own_ms, like=predicted) == format_ms(predicted, like=predicted):
        return ""
    side = "under" if gap > 0 else "over"
    return sentence("one_device_phases", predicted=predicted, gap=abs(gap), side=side)


def config(batch: float, accum: int) -> str:
    """``32`` or ``32 x 4 accumulation steps``: a per-device batch and its micro-steps."""
    return format_batch(batch) + (f" x {int(accum)} accumulation steps" if accum > 1 else "")


def equilibrium_sentence(advice: AdviceView) -> str:
    """The equilibrium picks in words, each with the numbers that make it, beside the
    count the advice decided."""
    frame = advice.predictions[advice.predictions["flags"] == ""]
    eq, d = advice.picks.equilibrium, advice.decision
    rows = frame.set_index("accelerators")
    best_n = int(frame.loc[frame["efficiency"].idxmax(), "accelerators"])
    sxe, kept = eq["max_speed_x_efficiency"], eq["efficiency_threshold"]
    s, e = float(rows.at[sxe, "speedup"]), float(rows.at[sxe, "efficiency"])
    after = frame[frame["accelerators"] > (kept or 0)]
    knee = "few" if eq["knee"] is None and len(frame) < KNEE_COUNTS else eq["knee"]
    return sentence(
        "equilibrium",
        holds=d.holds,
        chosen=d.chosen.accelerators,
        target=d.target_efficiency,
        sxe=sxe,
        s=s,
        e=e,
        se=s * e,
        kept=kept,
        threshold=advice.calibration.search.threshold,
        best=float(rows.at[best_n, "efficiency"]),
        best_n=best_n,
        kept_e=maybe(float, rows["efficiency"].get(kept)),
        next_n=maybe(int, next(iter(after["accelerators"]), None)),
        next_e=maybe(float, next(iter(after["efficiency"]), None)),
        knee=knee,
        needs=KNEE_COUNTS,
        rows=len(frame),
    )

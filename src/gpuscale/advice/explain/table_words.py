"""Sentences read off the predictions where a bare number would mislead: the N = 1 row
beside the bench's N = 1 step, the fixed per-step costs a count pays above its share, the
equilibrium picks, and the break-even (the compute per gradient byte and the model size
from which 2 devices beat 1 on this link, ``search.derive``, and its family)."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import pandas as pd

from gpuscale.advice.calibration import Calibration, OneDevice
from gpuscale.advice.explain.answer import AdviceView
from gpuscale.advice.explain.phrasebook import sentence, strategy_name
from gpuscale.advice.records import BreakEven, OneDeviceRow
from gpuscale.advice.types import Source, maybe
from gpuscale.bench.support import predicted, to_test, weak
from gpuscale.quantities import format_batch, format_count, format_ms, joined, number

if TYPE_CHECKING:  # a type only: explain evaluates no model
    from gpuscale.advice.model.step import FamilyBasis

KNEE_COUNTS = 3  # Kneedle needs this many counts to find a bend


def fixed_cost_line(cal: Calibration, opt: float) -> str:
    """The fixed cost said once: each forward and backward's and, where the bench measured
    it apart, the optimizer step beside it (``opt``, ms)."""
    fixed = cal.model.fixed
    said = sentence("fixed_said", f=fixed, high=fixed.high_ms)
    if opt <= 0:
        return f"Fixed per-step cost: {said}."
    measure = fixed.measure if fixed.source != Source.MEASURED and fixed.measure else None
    return sentence(
        "fixed_costs_line",
        fixed=said,
        measure=maybe(str, measure),
        opt=opt,
        strategy=cal.run.strategy,
    )


def fixed_costs(cal: Calibration, frame: pd.DataFrame, opt: float) -> str:
    """What the fixed per-step costs do as the global batch is split over the table's
    counts: each forward and backward's falls with the micro-steps; the optimizer step's not."""
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
    frame, m, r = advice.predictions, advice.calibration.runs.one_device, advice.one_device
    one = frame.iloc[0]
    row = (int(one["batch_per_device"]), int(one["accum"]))
    same = m is not None and row == (m.batch, m.accum)
    case = "none" if r.added_ddp_ms > 0 else ""
    if m is not None and m.strategy == "fsdp":
        case = "fsdp_bare" if m.own_ms > 0 else "fsdp"
    elif m is not None and m.own_ms > 0:
        case = "ddp"
    if not case:
        return ""
    # no bench run at N = 1 (m None): only what the counts above 1 add is said
    detail = ""
    if case == "ddp" and m is not None:
        detail = _phases(r) if same else _like(r, row, m)
    return sentence(
        "one_device",
        case=case,
        predicted=r.step_ms,
        at=None if m is None or same else config(m.batch, m.accum),
        step=getattr(m, "step_ms", 0.0),
        r=r,
        own=getattr(m, "own_ms", 0.0),
        detail=detail,
        fsdp_own=getattr(m, "fsdp_own_ms", 0.0),
        added=r.added_ddp_ms or None,
    )


def _like(r: OneDeviceRow, row: tuple[int, int], m: OneDevice) -> str:
    """Where the N = 1 row trains another batch or accumulation than the bench's N = 1
    run, the step the same model predicts at the bench's: the same samples side by side."""
    return sentence(
        "one_device_like",
        r=r,
        row=config(*row),
        bench=config(m.batch, m.accum),
        nosync=r.nosync_ms,
    )


def _phases(r: OneDeviceRow) -> str:
    """Where the step predicted (its phases timed apart) is not the no-sync step timed
    whole (as said), the difference."""
    predicted, gap = r.step_ms, r.gap_ms or 0.0
    if format_ms(r.nosync_ms or 0.0, like=predicted) == format_ms(predicted, like=predicted):
        return ""
    side = "under" if gap > 0 else "over"
    return sentence("one_device_phases", predicted=predicted, gap=abs(gap), side=side)


def config(batch: float, accum: int) -> str:
    """``32`` or ``32 x 4 accumulation steps``: a per-device batch and its micro-steps."""
    return format_batch(batch) + (f" x {int(accum)} accumulation steps" if accum > 1 else "")


def equilibrium_sentence(advice: AdviceView) -> str:
    """The equilibrium picks in words, each with the numbers that make it, beside the
    count the advice decided."""
    eq, d, at = advice.picks.equilibrium, advice.decision, advice.picks.numbers
    knee = "few" if eq["knee"] is None and at.rows < KNEE_COUNTS else eq["knee"]
    return sentence(
        "equilibrium",
        d=d,
        eq=eq,
        at=at,
        threshold=advice.calibration.search.threshold,
        knee=knee,
        needs=KNEE_COUNTS,
    )


SMALLEST_SEARCHED = 1e3  # the break-even search's smallest model (recommend.break_even)


def _from_size(value: float | None) -> str:
    size = "*"
    if value is None:
        size = "none"
    elif value <= SMALLEST_SEARCHED:
        size = "every"
    return sentence("break_even_size", size=size, value=value, smallest=SMALLEST_SEARCHED)


def break_even_lines(advice: AdviceView) -> list[str]:
    """The break-even's sentences; none where none is sought (one device allowed, or a
    global batch kept)."""
    cal, found = advice.calibration, advice.break_even
    if cal.machine.max_devices < 2 or cal.run.global_batch is not None:  # none sought (recommend)
        return []
    lines, evidence, spec, run = [], cal.runs.evidence, cal.model.spec, cal.run
    per_mb = found.compute_ms_per_grad_mb
    if per_mb is not None:
        lines.append(
            sentence(
                "break_even_rate",
                network=cal.machine.network_name,
                predicted=predicted(evidence),
                found=found,
                like=max(per_mb, found.own_ms_per_grad_mb),  # both in one unit
            )
        )
    size, target = found.params, found.target_efficiency_params
    if any(v is not None and math.isnan(v) for v in (size, target)):
        return lines  # the speedup falls with size somewhere: no size from which it holds
    batch = f"per-device batch {format_count(run.batch)}"
    if run.kept_global_batch is not None:
        batch = f"global batch {format_count(run.kept_global_batch)} split over the two"
    said = family_sentence(
        cal.model.family,
        found,
        batch=batch,
        beats=f"{'the runs predict that ' * weak(evidence)}2 devices beat 1 {_from_size(size)}",
        reaches=f"reach {cal.search.target_efficiency:.0%} efficiency {_from_size(target)}",
        params=spec.params,
        benched=cal.runs.evidence is not None,
        strategy=run.strategy,
    )
    return [*lines, f"{said}{to_test(evidence)}."]


def family_sentence(
    basis: FamilyBasis | None,
    found: BreakEven,
    *,
    batch: str,
    beats: str,
    reaches: str,
    params: float,
    benched: bool = True,
    strategy: str = "ddp",
) -> str:
    """The break-even sizes of the model's family (its basis said), and where this model's
    own step says otherwise of its size, both with why."""
    said = {"basis": basis, "found": found, "strategy": strategy_name(strategy)}
    if basis is not None:
        said |= {"count": len(basis.members), "members": joined(list(basis.members))}
    # whether the family's size and this model's own speedup say the same of it
    size, own, own_speedup = found.params, found.pair_throughput_speedup, found.pair_speedup
    agrees = own is None or (size is not None and math.isnan(size))
    agrees = agrees or (size is not None and params >= size) == (own > 1)
    differs = own_speedup is not None and number(own_speedup) != number(own)
    return sentence(
        "break_even_family",
        **said,
        batch=batch,
        beats=beats,
        reaches=reaches,
        params=params,
        benched=benched,
        own=None if basis is None or agrees else own,
        table=number(own_speedup) if differs else None,
    )

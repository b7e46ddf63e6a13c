"""The break-even in sentences: the compute per gradient byte and the model size from which
2 devices beat 1 on this link (``search.break_even``), and the family they are read from."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from gpuscale.advice.explain.phrasebook import sentence as phrased
from gpuscale.advice.explain.phrasebook import strategy_words
from gpuscale.advice.explain.view import AdviceView
from gpuscale.advice.records import BreakEven
from gpuscale.advice.types import Value
from gpuscale.bench.support import predicted, to_test, weak
from gpuscale.quantities import format_count, joined, number

if TYPE_CHECKING:  # a type only: explain evaluates no model
    from gpuscale.advice.model.step import FamilyBasis

SMALLEST_SEARCHED = 1e3  # the break-even search's smallest model (recommend.break_even)


def _from_size(value: float | None) -> str:
    size = "*"
    if value is None:
        size = "none"
    elif value <= SMALLEST_SEARCHED:
        size = "every"
    return phrased("break_even_size", size=size, value=value, smallest=SMALLEST_SEARCHED)


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
            phrased(
                "break_even_rate",
                network=cal.machine.network_name,
                predicted=predicted(evidence),
                per_mb=per_mb,
                like=max(per_mb, found.own_ms_per_grad_mb),  # both in one unit
                flops_per_byte=found.flops_per_grad_byte,
                tflops=found.step_tflops,
                own=found.own_ms_per_grad_mb,
            )
        )
    size, target = found.params, found.target_efficiency_params
    if any(v is not None and math.isnan(v) for v in (size, target)):
        return lines  # the speedup falls with size somewhere: no size from which it holds
    batch = f"per-device batch {format_count(run.batch)}"
    if run.kept_global_batch is not None:
        batch = f"global batch {format_count(run.kept_global_batch)} split over the two"
    said = sentence(
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


def sentence(
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
    """``For this model's family (...), 2 devices beat 1 ... (this model: ...).``: the
    family's basis said, and where this model's own step (its throughput speedup on 2
    devices, its optimizer and DDP ms) says otherwise of its size than the family's
    (``found.params``), both with why; ``benched``: whether the step is a bench run's (else
    given); its table's speedup to a trained model said where it differs."""
    said: dict[str, Value] = {
        "family": None,
        "per_param": found.flops_per_param,
        "strategy": strategy_words(strategy)["name"],
    }
    if basis is not None:
        said = {
            "family": basis.family,
            "count": len(basis.members),
            "members": joined(list(basis.members)),
            "flops_per_param": basis.flops_per_param,
            "opt_fixed": basis.opt_ms[0],
            "opt_per": basis.opt_ms[1],
            "ddp_fixed": basis.ddp_ms[0],
            "ddp_per": basis.ddp_ms[1],
            "line_opt": found.family_optimizer_ms,
            "line_ddp": found.family_ddp_ms,
        }
    # whether the family's size and this model's own speedup say the same of it
    size, own, own_speedup = found.params, found.pair_throughput_speedup, found.pair_speedup
    agrees = own is None or (size is not None and math.isnan(size))
    agrees = agrees or (size is not None and params >= size) == (own > 1)
    differs = own_speedup is not None and number(own_speedup) != number(own)
    return phrased(
        "break_even_family",
        **said,
        batch=batch,
        beats=beats,
        reaches=reaches,
        params=params,
        benched=benched,
        own=None if basis is None or agrees else own,
        table=number(own_speedup) if differs else None,
        own_opt=found.own_optimizer_ms,
        own_ddp=found.own_ddp_ms,
    )

"""The break-even in sentences: the compute per gradient byte and the model size from which
2 devices beat 1 on this link (``search.break_even``), and the family they are read from."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import pandas as pd

from gpuscale.advice.explain.phrasebook import sentence as phrased
from gpuscale.advice.explain.phrasebook import strategy_words
from gpuscale.advice.explain.view import AdviceView
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
        # FLOPs at the rate of the whole step (fixed cost included), never the per-sample
        # work's (unbounded where the step is nearly all fixed cost)
        step_ms = cal.model.compute.compute_ms(spec, run.batch, run.accum)
        whole_tflops = run.batch * run.accum * spec.flops / (step_ms / 1e3) / 1e12
        own = step_ms / (spec.grad_bytes / 1e6)
        lines.append(
            phrased(
                "break_even_rate",
                network=cal.machine.network_name,
                predicted=predicted(evidence),
                per_mb=per_mb,
                like=max(per_mb, own),  # both in one unit
                flops_per_byte=per_mb / 1e3 * whole_tflops * 1e12 / 1e6,
                tflops=whole_tflops,
                own=own,
            )
        )
    size, target = found.params, found.target_efficiency_params
    if any(v is not None and math.isnan(v) for v in (size, target)):
        return lines  # the speedup falls with size somewhere: no size from which it holds
    batch = f"per-device batch {format_count(run.batch)}"
    if run.kept_global_batch is not None:
        batch = f"global batch {format_count(run.kept_global_batch)} split over the two"
    mparams = spec.params / 1e6
    said = sentence(
        cal.model.family,
        per_param=spec.flops / spec.params,
        batch=batch,
        beats=f"{'the runs predict that ' * weak(evidence)}2 devices beat 1 {_from_size(size)}",
        reaches=f"reach {cal.search.target_efficiency:.0%} efficiency {_from_size(target)}",
        size=size,
        params=spec.params,
        own=_own_pair(advice.predictions),
        own_speedup=_own_pair(advice.predictions, "speedup"),
        own_terms=(
            cal.model.compute.opt_ms_per_mparam * mparams,
            cal.model.compute.ddp_ms_per_mparam * mparams,
        ),
        benched=cal.runs.evidence is not None,
        strategy=run.strategy,
    )
    return [*lines, f"{said}{to_test(evidence)}."]


def _own_pair(frame: pd.DataFrame, column: str = "throughput_efficiency") -> float | None:
    """This model's throughput speedup on 2 devices, as its table predicts (``speedup``:
    its speedup to a trained model, the table's column); None: no 2-device row."""
    two = frame[frame["accelerators"] == 2]
    if not len(two):
        return None
    value = float(two[column].iloc[0])
    return value * 2 if column == "throughput_efficiency" else value


def sentence(
    basis: FamilyBasis | None,
    *,
    per_param: float,
    batch: str,
    beats: str,
    reaches: str,
    size: float | None,
    params: float,
    own: float | None,
    own_terms: tuple[float, float],
    benched: bool = True,
    strategy: str = "ddp",
    own_speedup: float | None = None,
) -> str:
    """``For this model's family (...), 2 devices beat 1 ... (this model: ...).``: the
    family's basis said, and where this model's own step (``own``: its throughput speedup
    on 2 devices; ``own_terms``: its optimizer and DDP ms) says otherwise of its size,
    both with why; ``benched``: whether the step is a bench run's (else given);
    ``own_speedup``: its table's speedup to a trained model, said where it differs."""
    said: dict[str, Value] = {
        "family": None,
        "per_param": per_param,
        "strategy": strategy_words(strategy)["name"],
    }
    if basis is not None:
        mparams = params / 1e6
        said = {
            "family": basis.family,
            "count": len(basis.members),
            "members": joined(list(basis.members)),
            "flops_per_param": basis.flops_per_param,
            "opt_fixed": basis.opt_ms[0],
            "opt_per": basis.opt_ms[1],
            "ddp_fixed": basis.ddp_ms[0],
            "ddp_per": basis.ddp_ms[1],
            "line_opt": basis.opt_ms[0] + basis.opt_ms[1] * mparams,
            "line_ddp": basis.ddp_ms[0] + basis.ddp_ms[1] * mparams,
        }
    # whether the family's size and this model's own speedup say the same of it
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
        own_opt=own_terms[0],
        own_ddp=own_terms[1],
    )

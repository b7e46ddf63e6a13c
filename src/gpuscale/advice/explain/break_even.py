"""The break-even in sentences: the compute per gradient byte and the model size from which
2 devices beat 1 on this link (``search.break_even``), and the family they are read from."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import pandas as pd

from gpuscale.advice.explain.memory import NAMES
from gpuscale.advice.explain.view import AdviceView
from gpuscale.bench.support import predicted, to_test, weak
from gpuscale.quantities import counted, filled, format_count, format_ms, joined, number

if TYPE_CHECKING:  # a type only: explain evaluates no model
    from gpuscale.advice.model.step import FamilyBasis

SMALLEST_SEARCHED = 1e3  # the break-even search's smallest model (recommend.break_even)


def break_even_lines(advice: AdviceView) -> list[str]:
    """The break-even's sentences; none where none is sought (one device allowed, or a
    global batch kept)."""
    cal = advice.calibration
    assert cal is not None
    name = cal.machine.network_name
    if cal.machine.max_devices < 2 or cal.run.global_batch is not None:  # none sought (recommend)
        return []
    lines, evidence = [], cal.runs.evidence
    if advice.break_even.compute_ms_per_grad_mb is not None:
        # FLOPs at the rate of the whole step (fixed cost included), never the per-sample
        # work's (unbounded where the step is nearly all fixed cost)
        step_ms = cal.model.compute.compute_ms(cal.model.spec, cal.run.batch, cal.run.accum)
        whole_tflops = cal.run.batch * cal.run.accum * cal.model.spec.flops / (step_ms / 1e3) / 1e12
        flops_per_byte = advice.break_even.compute_ms_per_grad_mb / 1e3 * whole_tflops * 1e12 / 1e6
        own = step_ms / (cal.model.spec.grad_bytes / 1e6)
        like = max(advice.break_even.compute_ms_per_grad_mb, own)  # both in one unit
        lines.append(
            f"Break-even on {name}{predicted(evidence)}: 2 devices beat 1 once a step computes "
            f"{format_ms(advice.break_even.compute_ms_per_grad_mb, like)} per MB of gradients "
            f"({format_count(flops_per_byte)} FLOPs per gradient byte at the "
            f"{number(whole_tflops)} TFLOP/s of the whole step); this model computes "
            f"{format_ms(own, like)} per MB."
        )
    per_param = cal.model.spec.flops / cal.model.spec.params
    size = advice.break_even.params
    target = advice.break_even.target_efficiency_params
    if any(v is not None and math.isnan(v) for v in (size, target)):
        return lines  # the speedup falls with size somewhere: no size from which it holds

    def from_size(value: float | None) -> str:
        if value is None:
            return "at no size up to 10T parameters"
        if value <= SMALLEST_SEARCHED:
            return f"at every size searched ({format_count(SMALLEST_SEARCHED)} parameters up)"
        return f"from {format_count(value)} parameters"

    run = cal.run
    batch = (
        f"global batch {format_count(run.kept_global_batch or run.batch)} split over the two"
        if run.kept_global_batch is not None
        else f"per-device batch {format_count(run.batch)}"
    )
    mparams = cal.model.spec.params / 1e6
    said = sentence(
        cal.model.family,
        per_param=per_param,
        batch=batch,
        beats=f"{'the runs predict that ' if weak(evidence) else ''}2 devices beat 1 "
        f"{from_size(size)}",
        reaches=f"reach {cal.search.target_efficiency:.0%} efficiency {from_size(target)}",
        size=size,
        params=cal.model.spec.params,
        own=_own_pair(advice.predictions),
        own_speedup=_own_pair(advice.predictions, "speedup"),
        own_terms=(
            cal.model.compute.opt_ms_per_mparam * mparams,
            cal.model.compute.ddp_ms_per_mparam * mparams,
        ),
        benched=cal.runs.evidence is not None,
        strategy=cal.run.strategy,
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


def _line(part: tuple[float, float]) -> str:
    fixed, per = part
    return f"{format_ms(fixed)} + {format_ms(per)} per million parameters"


def _agrees(size: float | None, params: float, own: float | None) -> bool:
    """Whether the family's size and this model's own speedup say the same of it."""
    if own is None or (size is not None and math.isnan(size)):
        return True
    return (size is not None and params >= size) == (own > 1)


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
    family's basis said, and where this model's own measured step gives another verdict at
    its size (``own``: its throughput speedup on 2 devices; ``own_terms``: its optimizer and
    DDP ms), both said with why; ``benched``: whether the step is a bench run's (else
    given); ``own_speedup``: its table's speedup on 2 devices to a trained model, said
    beside ``own`` where they differ."""
    if basis is None:
        alone = (
            "the only member of its family benched in this configuration"
            if benched
            else "from the step given (nothing benched)"
        )
        how = (
            f"{number(per_param)} FLOPs per parameter per sample, its optimizer and "
            f"{NAMES[strategy]} times per parameter: this model alone, {alone}"
        )
    else:
        how = (
            f"the {basis.family} family fitted over the {counted(len(basis.members), 'model')} "
            f"benched in this configuration, {joined(list(basis.members))}: "
            f"{number(basis.flops_per_param)} FLOPs per parameter per sample (their median), "
            f"the optimizer step {_line(basis.opt_ms)}, DDP's own work {_line(basis.ddp_ms)}"
        )
    said = (
        f"For this model's family ({how}; {batch}), {beats} and {reaches} (this model: "
        f"{format_count(params)})"
    )
    if basis is None or _agrees(size, params, own):
        return said
    assert own is not None
    mparams = params / 1e6
    line_opt = basis.opt_ms[0] + basis.opt_ms[1] * mparams
    line_ddp = basis.ddp_ms[0] + basis.ddp_ms[1] * mparams
    table = filled(
        ", {}x to a trained model with its convergence factor",
        own_speedup is not None and number(own_speedup) != number(own) and number(own_speedup),
    )
    return (
        f"{said}; this model's own measured step gives {number(own)}x the throughput on 2 "
        f"devices (its table{table}): its optimizer step {format_ms(own_terms[0])} and DDP's "
        "own work "
        f"{format_ms(own_terms[1])} as measured, where the family's lines give "
        f"{format_ms(line_opt)} and {format_ms(line_ddp)} at its size: the family's size "
        "is the fit over its members, this model's table its own runs"
    )

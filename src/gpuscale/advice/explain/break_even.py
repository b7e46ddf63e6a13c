"""The break-even in sentences: the model size above which more devices pay on this link
(``search.break_even``), said with the FLOPs per gradient byte it takes and this model's
own speedup on 2 devices, or that the search found none."""

from __future__ import annotations

import math

import pandas as pd

from gpuscale.advice.explain import table_words
from gpuscale.advice.explain.view import AdviceView
from gpuscale.bench.support import predicted, to_test, weak
from gpuscale.quantities import format_count, format_ms, number

SMALLEST_SEARCHED = 1e3  # the break-even search's smallest model (recommend.break_even)


def break_even_lines(advice: AdviceView) -> list[str]:
    """The break-even's sentences; none where none is sought (one device allowed, or a
    global batch kept)."""
    inputs = advice.inputs
    assert inputs is not None
    name = inputs.network_name
    if inputs.max_devices < 2 or inputs.global_batch is not None:  # none sought (recommend)
        return []
    lines, evidence = [], inputs.evidence
    if advice.break_even.compute_ms_per_grad_mb is not None:
        # FLOPs at the rate of the whole step (fixed cost included), never the per-sample
        # work's (unbounded where the step is nearly all fixed cost)
        step_ms = inputs.compute.compute_ms(inputs.model, inputs.batch, inputs.accum)
        whole_tflops = inputs.batch * inputs.accum * inputs.model.flops / (step_ms / 1e3) / 1e12
        flops_per_byte = advice.break_even.compute_ms_per_grad_mb / 1e3 * whole_tflops * 1e12 / 1e6
        own = step_ms / (inputs.model.grad_bytes / 1e6)
        like = max(advice.break_even.compute_ms_per_grad_mb, own)  # both in one unit
        lines.append(
            f"Break-even on {name}{predicted(evidence)}: 2 devices beat 1 once a step computes "
            f"{format_ms(advice.break_even.compute_ms_per_grad_mb, like)} per MB of gradients "
            f"({format_count(flops_per_byte)} FLOPs per gradient byte at the "
            f"{number(whole_tflops)} TFLOP/s of the whole step); this model computes "
            f"{format_ms(own, like)} per MB."
        )
    per_param = inputs.model.flops / inputs.model.params
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

    batch = (
        f"global batch {format_count(inputs.kept_global_batch or inputs.batch)} split over the two"
        if inputs.kept_global_batch is not None
        else f"per-device batch {format_count(inputs.batch)}"
    )
    mparams = inputs.model.params / 1e6
    said = table_words.sentence(
        getattr(inputs, "family", None),
        per_param=per_param,
        batch=batch,
        beats=f"{'the runs predict that ' if weak(evidence) else ''}2 devices beat 1 "
        f"{from_size(size)}",
        reaches=f"reach {inputs.target_efficiency:.0%} efficiency {from_size(target)}",
        size=size,
        params=inputs.model.params,
        own=_own_pair(advice.predictions),
        own_speedup=_own_pair(advice.predictions, "speedup"),
        own_terms=(
            inputs.compute.opt_ms_per_mparam * mparams,
            inputs.compute.ddp_ms_per_mparam * mparams,
        ),
        benched=inputs.evidence is not None,
        strategy=inputs.strategy,
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

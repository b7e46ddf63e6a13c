"""The advice in sentences: what to do, which term decides, what would change it, and
where every input came from."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pandas as pd

from gpuscale.formatting import number
from gpuscale.units import format_count, format_hours, format_ms

SMALLEST_SEARCHED = 1e3  # the break-even search's smallest model (recommend.break_even)

if TYPE_CHECKING:
    from gpuscale.advice.recommend import Advice

REMEDIES = {
    "compute": "more devices pay off: communication and waiting are small against compute",
    "wait": "steadier step times (equal work per device, pinned processes, no other jobs on "
    "the devices) would help most",
    "ddp": "DDP's own copies dominate: gradient_as_bucket_view=True, fewer parameters "
    "or a larger batch per device would help most",
    "bandwidth": "a faster link, bf16 gradients (half the bytes) or gradient accumulation "
    "(one all-reduce per k micro-steps) would help most",
    "latency": "larger DDP buckets (fewer messages), a larger batch or gradient "
    "accumulation would help most; a faster link would barely matter",
}


def _config(row: pd.Series) -> str:
    accum = f" x {int(row['accum'])} accumulation steps" if row["accum"] > 1 else ""
    return (
        f"{int(row['devices'])} device(s), per-device batch {format_count(row['batch_per_device'])}"
        f"{accum} (global batch {format_count(row['global_batch'])})"
    )


def _row(frame: pd.DataFrame, n: int) -> pd.Series:
    return frame[frame["devices"] == n].iloc[0]


def _recommendation(advice: Advice) -> list[str]:
    inputs = advice.inputs
    assert inputs is not None
    frame = advice.predictions
    lines = []
    if advice.recommended is not None:
        row = _row(frame, advice.recommended)
        lines.append(
            f"Use {_config(row)}: {format_hours(row['time_to_train_h'])} to a trained model, "
            f"efficiency {row['efficiency']:.0%} = throughput efficiency "
            f"{row['throughput_efficiency']:.0%} x convergence factor "
            f"{row['convergence_factor']:.0%}."
        )
    else:
        lines.append(
            f"No device count keeps efficiency >= {inputs.target_efficiency:.0%}: stay on one "
            "device unless time matters more than device-hours."
        )
    fastest = _row(frame, advice.fastest)
    if advice.fastest != advice.recommended:
        lines.append(
            f"Fastest: {_config(fastest)}, {format_hours(fastest['time_to_train_h'])} at "
            f"efficiency {fastest['efficiency']:.0%}."
        )
    if advice.cheapest is not None and advice.cheapest not in (advice.recommended, 1):
        lines.append(f"Fewest device-hours: {advice.cheapest} device(s).")
    return lines


def _break_even(advice: Advice) -> list[str]:
    inputs = advice.inputs
    assert inputs is not None
    name = inputs.network.name
    if advice.break_even_ms_per_mb is None and advice.break_even_params is None:
        return []
    lines = []
    if advice.break_even_ms_per_mb is not None:
        flops_per_byte = advice.break_even_ms_per_mb / 1e3 * inputs.compute.tflops * 1e12 / 1e6
        this = inputs.compute.compute_ms(inputs.model, inputs.batch) / (
            inputs.model.grad_bytes / 1e6
        )
        lines.append(
            f"Break-even on {name}: 2 devices beat 1 once a step computes "
            f"{format_ms(advice.break_even_ms_per_mb)} per MB of gradients "
            f"({format_count(flops_per_byte)} FLOPs per gradient byte at the "
            f"{number(inputs.compute.tflops)} TFLOP/s achieved); this model computes "
            f"{format_ms(this)} per MB."
        )
    per_param = inputs.model.flops / inputs.model.params
    size = advice.break_even_params
    target = advice.target_params

    def from_size(value: float | None) -> str:
        if value is None:
            return "at no size up to 10T parameters"
        if value <= SMALLEST_SEARCHED:
            return f"at every size searched ({format_count(SMALLEST_SEARCHED)} parameters up)"
        return f"from {format_count(value)} parameters"

    lines.append(
        f"For this model's family ({number(per_param)} FLOPs per parameter per sample, "
        f"per-device batch {format_count(inputs.batch)}), 2 devices beat 1 "
        f"{from_size(size)} and reach {inputs.target_efficiency:.0%} efficiency "
        f"{from_size(target)} (this model: {format_count(inputs.model.params)})."
    )
    return lines


def _step(advice: Advice) -> list[str]:
    from gpuscale.advice.recommend import focus_count

    frame = advice.predictions[advice.predictions["flags"] == ""]
    n = focus_count(frame, advice.fastest)
    if n < 2:
        return []
    row = _row(frame, n)
    lines = [
        f"On {n} devices a step takes {format_ms(row['step_ms'])}: compute "
        f"{format_ms(row['compute_ms'])}, DDP's own copies {format_ms(row['ddp_ms'])}, waiting "
        f"for the slowest device {format_ms(row['wait_ms'])}, communication "
        f"{format_ms(row['comm_ms'])} of which {format_ms(row['exposed_comm_ms'])} is not "
        "hidden by backward. "
        f"The {advice.dominant_term} term decides.",
        f"What would change it: {REMEDIES[advice.dominant_term]}.",
    ]
    largest = frame.iloc[-1]
    if advice.cap == "convergence":
        lines.append(
            f"At {int(largest['devices'])} devices convergence, not communication, caps the "
            f"speedup: the global batch {format_count(largest['global_batch'])} needs "
            f"{number(1 / largest['convergence_factor'])}x the samples (convergence factor "
            f"{largest['convergence_factor']:.0%} against throughput efficiency "
            f"{largest['throughput_efficiency']:.0%})."
        )
    elif advice.cap == "communication":
        lines.append(
            f"At {int(largest['devices'])} devices communication and overheads cap the "
            f"speedup (throughput efficiency {largest['throughput_efficiency']:.0%}, "
            f"convergence factor {largest['convergence_factor']:.0%})."
        )
    return lines


def _sources(advice: Advice) -> list[str]:
    inputs = advice.inputs
    assert inputs is not None
    lines = list(inputs.sources)
    if inputs.convergence is None:
        lines.append(
            f"No convergence model: {format_count(inputs.samples)} samples at any batch "
            "(optimistic past the critical batch; give --noise-scale, --workload or bench "
            "results with gradient norms)."
        )
    else:
        lines.append(
            f"Convergence: E(B) = {format_count(inputs.convergence.e_min)} x (1 + B / "
            f"{format_count(inputs.convergence.b_noise)}) samples ({inputs.convergence.source})."
        )
    lines.append(f"Power: {inputs.power.source}.")
    flagged = advice.predictions[advice.predictions["flags"] != ""]
    for row in flagged.itertuples():
        lines.append(f"Left out {row.devices} device(s): {row.flags}.")
    return lines


def explain(advice: Advice) -> list[str]:
    """Sentences: the recommendation, the break-even, the step's parts and what decides
    them, what caps the speedup, and the sources."""
    return _recommendation(advice) + _break_even(advice) + _step(advice) + _sources(advice)

"""Which count the advice details, said wherever it is named, and what would change it.

The step's parts, what caps the speedup and what would change it are read at one count,
the decision's ``focus`` (``advice/decision.py``): the next count above the one advised,
where the next step would go (the one advised where none is larger). It is neither the
advised nor the fastest count wherever the advised one is below the next count and the
fastest above it: a walk saw "Use 2 devices", the fastest at 8, then "On 4 devices a step
takes ..." with no word why 4. Every sentence naming it now says what it is
(``named``), and the step's sentence names the fastest count too where it differs
(``detailed``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from gpuscale.advice.counts import larger_counts
from gpuscale.advice.table_words import fixed_parts
from gpuscale.advice.types import TermId
from gpuscale.quantities import counted, format_ms, joined

if TYPE_CHECKING:
    from gpuscale.advice.types import Decision


def named(d: Decision) -> str:
    """The focus count and what it is: ``4 devices, the next count above the 2 advised``
    or ``the 8 devices advised``."""
    if d.focus == d.accelerators:
        return f"the {counted(d.focus, 'device')} advised"
    advised = "the 1 device advised" if d.accelerators == 1 else f"the {d.accelerators} advised"
    return f"{d.focus} devices, the next count above {advised}"


def detailed(d: Decision) -> str:
    """``named`` with the fastest count where it is another (the step's sentence)."""
    said = named(d)
    if d.fastest == d.focus:
        return f"{said} and the fastest"
    if d.fastest == d.accelerators:
        return f"{said}, itself the fastest" if d.focus == d.accelerators else f"{said} and fastest"
    return f"{said} (the fastest is {d.fastest})"


REMEDIES = {
    "compute": "little in the step itself: its overheads are under 5%; the target "
    "efficiency decides",
    TermId.CONVERGENCE: "a larger critical batch (B_noise) or a smaller per-device batch at more "
    "devices; a faster link would not help",
    "devices": "more devices pay off: allow more (--max-devices, --nodes) where the "
    "machine has them",
    "uncertain": "a measured run at the larger count (gpuscale bench) would narrow the interval",
    # of the overheads, not of the step (a walk: "dominates ... the step hardly shrinks"
    # beside a table whose step went from 40 to 13 ms at a quarter of the batch)
    TermId.FIXED: "the fixed per-step costs (each forward and backward's, the optimizer step) are "
    "the largest overhead: "
    "they do not shrink with the per-device batch, so every device pays them whole; a "
    "larger global batch (more samples per device, if convergence allows: measure the "
    "noise scale), fewer kernel "
    "launches (CUDA graphs, torch.compile) or fewer, larger layers would help most",
    TermId.WAIT: "steadier step times (equal work per device, pinned processes, no other jobs on "
    "the devices) would help most",
    TermId.DDP: "DDP's own copies are the largest overhead: gradient_as_bucket_view=True, fewer "
    "parameters or a larger batch per device would help most",
    TermId.BANDWIDTH: "a faster link, bf16 gradients (half the bytes) or gradient accumulation "
    "(one all-reduce per k micro-steps) would help most",
    TermId.LATENCY: "larger DDP buckets (fewer messages), a larger batch or gradient "
    "accumulation would help most; a faster link would barely matter",
}


def remedy(advice: Any) -> str:
    """What would help most for the decision's ``change``; for latency, only the cures
    that apply: no larger buckets where the gradients already fit in one, and more
    accumulation where the advice already accumulates (a user walk: both were offered to
    a model of one 77 kB bucket, with accumulation 8 chosen); and where the largest
    overhead gone would still miss the target, the next one that must shrink too."""
    d, inputs = advice.decision, advice.inputs
    said = REMEDIES[d.change]
    if d.change == "devices":  # below the most allowed: what would predict a larger count
        said = larger_counts(inputs, advice.predictions, d.focus) or said
    if d.change == TermId.LATENCY and inputs is not None:
        cures = ["larger DDP buckets (fewer messages)"]
        cures = cures if inputs.model.grad_bytes > inputs.bucket_mb * 2**20 else []
        cures.append("a larger batch per device")
        cures.append(
            "gradient accumulation (one all-reduce per k micro-steps)"
            if d.accum == 1
            else f"more than the {d.accum} accumulation steps chosen"
        )
        said = f"{joined(cures, 'or')} would help most; a faster link "
        said += "would barely matter"
    if d.change == TermId.FIXED and inputs is not None and inputs.strategy == "fsdp":
        said = said.replace(  # FSDP's ranks step their shards: only the rest is whole
            "the fixed per-step costs (each forward and backward's, the optimizer step) are "
            "the largest overhead: they do not shrink with the per-device batch, so every "
            "device pays them whole",
            "each forward and backward's fixed cost is the largest overhead (FSDP's "
            "optimizer step falls as 1/N, each device stepping its shard): it does not "
            "shrink with the per-device batch, so every device pays it whole",
        )
    if d.change == TermId.FIXED and inputs is not None:
        parts = fixed_parts(inputs, advice.predictions, d.focus)
        if parts["optimizer"] > parts["forward_backward"]:  # the optimizer step, mostly
            fused = "a fused optimizer (fused=True), a larger global batch"
            said = said.replace("a larger global batch", fused, 1)
    if d.short_alone() and not d.also_shrink:
        said += f"; not enough: with every overhead gone {named(d)} would still miss it"
    elif d.short_alone():
        also = [f"{k} ({format_ms(d.overheads_ms[k])})" for k in d.also_shrink]
        said += f"; alone not enough: the {joined(also)} term{'s' if len(also) > 1 else ''} "
        said += "must shrink too"
    return said

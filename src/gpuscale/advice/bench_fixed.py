"""The fixed per-step cost of a bench model that nothing measured: its N = 1 run timed at
one per-device batch, without the bench's second batch (``fixed_ms``), and no family fit
over other models' runs of its configuration.

On a GPU it is the device prior (``fixed_cost.GPU_PRIOR``, 1-20 ms, 4 ms most likely: a
plain step's, so less the optimizer step the bench timed apart), narrowed by the step
(``fixed_cost.prior``): at most the step less its work at the device's peak the bench
recorded. Its whole range enters the 80% interval, so a gain that rests on an assumed split
is not recommended. Taking none of the step as fixed cost (as was done) recommended 2 H100s
for cnn-19m at a predicted 1.53x (1.13-2x), where the prior's 4 ms gives 0.93x.

On a CPU no prior applies (the GPU's is kernel launches): the whole step is taken as
per-sample work, said so, with the command that measures it.
"""

from __future__ import annotations

import pandas as pd

from gpuscale.advice.fixed_cost import GPU_PRIOR, FixedCost, Prior, prior
from gpuscale.quantities import format_ms, number
from gpuscale.tables.bench_runs import bench_options


def measure_command(row: pd.Series) -> str:
    """The bench command that measures ``row``'s fixed cost: its N = 1 run in its own
    configuration, which this version times at its batch and at a quarter of it."""
    batch = int(row["batch_per_device"])
    model, more = bench_options(row).split(" --batch ", 1)  # the run's own configuration
    quarter = batch // 4 if batch >= 4 else batch // 2
    second = f"{quarter}" if quarter >= 1 else "a second batch"
    return (
        f"`gpuscale bench {model} --nproc 1 --batch {more}` (this version of the "
        f"bench times the bare module at N = 1 at batch {batch} and at {second}: the "
        "intercept of the two is the fixed cost)"
    )


def unmeasured(row: pd.Series, fb_ms: float, flops_per_sample: float) -> FixedCost:
    """The fixed cost of each forward and backward of ``row`` (its N = 1 run, ``fb_ms``
    forward + backward at its batch) where nothing measured it (see the module)."""
    batch = float(row["batch_per_device"])
    measure = measure_command(row)
    if row.get("device") == "cpu":
        return FixedCost(
            ms=0.0,
            low_ms=0.0,
            high_ms=0.0,
            source="assumed",
            basis="none on a CPU: the whole step taken as per-sample work (the GPU prior of "
            f"{GPU_PRIOR.low_ms:g}-{format_ms(GPU_PRIOR.high_ms)} is kernel launches; no "
            "prior holds for a CPU step)",
            at_batch=batch,
            measure=measure,
        )
    opt = float(row["optimizer_ms"]) if pd.notna(row.get("optimizer_ms")) else 0.0
    base = Prior(
        max(GPU_PRIOR.low_ms - opt, 0.0),
        max(GPU_PRIOR.ms - opt, 0.0),
        max(GPU_PRIOR.high_ms - opt, 0.0),
        f"prior: {GPU_PRIOR.why}, less the optimizer step timed apart ({format_ms(opt)})",
    )
    peak = row.get("peak_tflops")
    known = peak is not None and pd.notna(peak) and float(peak) > 0
    at_peak = batch * flops_per_sample / (float(peak) * 1e12) * 1e3 if known else None
    found = prior(fb_ms, batch, work_at_peak_ms=at_peak, measure=measure, base=base)
    if at_peak is None:
        bound = "no peak FLOP/s recorded for the device: the prior's range unbounded"
    elif found.high_ms < base.high_ms:
        bound = (
            f"at most {format_ms(found.high_ms, fb_ms)}: the {format_ms(fb_ms)} forward + "
            f"backward at batch {batch:g} less its work at the device's peak "
            f"({format_ms(at_peak, fb_ms)} at {number(float(peak))} TFLOP/s)"
        )
    else:
        bound = ""
    basis = f"{found.basis}; {bound}" if bound else found.basis
    return FixedCost(
        ms=found.ms,
        low_ms=found.low_ms,
        high_ms=found.high_ms,
        source="assumed",
        basis=f"{basis}; measured at batch {batch:g} only",
        at_batch=batch,
        measure=measure,
    )


def with_unmeasured(part: FixedCost, row: pd.Series, fb_ms: float, flops: float) -> FixedCost:
    """``part`` (a measured share of the fixed cost: an FSDP run's own work at N = 1) plus
    what nothing measured, the rest of the forward and backward's fixed cost (kernel
    launches: :func:`unmeasured` on the step less ``part``): FSDP's own work leaves the
    bare step's own fixed cost unmeasured, and taking it as none
    recommended 2 H100s for tf-30m as the prior's other models were before."""
    rest = unmeasured(row, max(fb_ms - part.ms, 1e-9), flops)
    if not rest.high_ms > 0:
        return part
    return FixedCost(
        ms=part.ms + rest.ms,
        low_ms=part.low_ms + rest.low_ms,
        high_ms=part.high_ms + rest.high_ms,
        source="assumed",
        basis=f"{format_ms(part.ms)} {part.source}: {part.basis}; plus the rest of the "
        f"forward and backward's, {format_ms(rest.ms)} ({format_ms(rest.low_ms)}-"
        f"{format_ms(rest.high_ms)}): {rest.basis}",
        at_batch=part.at_batch,
        measure=rest.measure,
    )

"""A model benched with FSDP predicted as DDP: its step without FSDP's own work.

FSDP's own work at N = 1 (its reduce-scatter and resharding, the synchronised minus no-sync
step) sits in the FSDP run's forward and backward, a fixed per-step cost. DDP does none of
it, so its step is the bare module's: that work leaves every micro-step and the fixed cost,
and the calibration's notes say the step so read.
"""

from __future__ import annotations

from dataclasses import replace

from gpuscale.advice.calibration import Calibration
from gpuscale.advice.model.fixed_cost import FixedCost
from gpuscale.advice.types import Finding
from gpuscale.advice.types import FindingKind as K


def without_fsdp_own(cal: Calibration) -> Calibration:
    """``cal``, calibrated on an FSDP run, less FSDP's own work of each micro-step
    (``runs.one_fsdp_own_ms`` over its micro-steps, below the micro-step at its batch): the
    fixed cost's rest where the split said it apart (the prior's, with its range), else the
    fixed cost less that work, said so."""
    model, runs = cal.model, cal.runs
    compute, fixed = model.compute, model.fixed
    micro = compute.micro_ms(model.spec, cal.run.batch)
    own = min(runs.one_fsdp_own_ms / max(runs.one_accum, 1), micro * (1 - 1e-6))
    if not own > 0:
        return cal

    def less(ms: float) -> float:
        return max(ms - own, 0.0)

    measured = tuple((b, max(ms - own, ms * 1e-6)) for b, ms in compute.measured_ms)
    compute = replace(
        compute,
        fixed_ms=less(compute.fixed_ms),
        floor_ms=less(compute.floor_ms),
        measured_ms=measured,
        one_rank_own_ms=0.0,  # the bare module's step, which one device runs
    )
    basis = fixed.basis
    if isinstance(basis, Finding) and basis.kind is K.WITH_UNMEASURED:
        fixed = replace(
            fixed,
            ms=float(basis["rest"]),
            low_ms=float(basis["rest_low"]),
            high_ms=float(basis["rest_high"]),
            basis=basis["rest_basis"],
        )
    else:
        fixed = replace(
            fixed,
            ms=less(fixed.ms),
            low_ms=less(fixed.low_ms),
            high_ms=less(fixed.high_ms),
            basis=Finding.of(K.LESS_FSDP_OWN, basis=basis, own=own),
        )
    notes = tuple(_as_ddp(note, fixed) for note in cal.bench.notes)
    model = replace(model, compute=compute, fixed=fixed)
    return replace(cal, model=model, bench=replace(cal.bench, notes=notes))


def _as_ddp(note: str | Finding, fixed: FixedCost) -> str | Finding:
    """A calibration note of the FSDP run as DDP's step reads it: the step less FSDP's own
    work, and the fixed cost without it."""
    if not isinstance(note, Finding):
        return note
    if note.kind is K.FSDP_NOTE:
        return Finding(K.FSDP_NOTE_AS_DDP, note.values)
    split = note["note"] if note.kind is K.COMPUTE_FROM else None
    if isinstance(split, Finding) and split.kind is K.FIXED_MEASURED_FOR:
        return note.with_values(note=split.with_values(ms=fixed.ms, source=fixed.source))
    return note

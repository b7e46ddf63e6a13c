"""Numbers read off the predictions for the words to say (``explain`` formats them and
computes none): the fixed per-step costs at the focus count in parts."""

from __future__ import annotations

import pandas as pd

from gpuscale.advice.calibration import Calibration
from gpuscale.advice.model.step import per_step_ms
from gpuscale.advice.records import FixedTerm

ROUNDING = 1e-9  # a difference this small a share of the whole is the arithmetic's


def fixed_term(cal: Calibration, frame: pd.DataFrame, n: int) -> FixedTerm:
    """The optimizer step (once per optimizer step on every device, whatever its batch;
    FSDP's ``1/n`` shard at ``n``) and the ``fixed`` term at ``n`` devices split
    (:class:`FixedTerm`); the parts 0 where ``frame`` has no row at ``n``."""
    opt = float(per_step_ms(cal.model.compute.opt_ms_per_mparam, cal.model.spec.params))
    opt_n = opt / (n if cal.run.strategy == "fsdp" else 1)
    rows = frame.set_index("accelerators")
    if n not in rows.index:
        return FixedTerm(optimizer_ms=opt, optimizer_at_focus_ms=opt_n)
    row, one = rows.loc[n], frame.iloc[0]
    share = row["batch_per_device"] * row["accum"] / (one["batch_per_device"] * one["accum"])
    excess = float(row["fixed_excess_ms"])
    part = min(max(opt_n - opt * float(share), 0.0), excess)
    rest = excess - part
    rest = rest if rest > ROUNDING * excess else 0.0
    return FixedTerm(
        optimizer_ms=opt,
        optimizer_at_focus_ms=opt_n,
        excess_ms=part + rest,
        optimizer_excess_ms=part,
        forward_backward_excess_ms=rest,
    )

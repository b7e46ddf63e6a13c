"""Numbers read off the predictions for the words to say (``explain`` formats them and
computes none): the fixed per-step costs at the focus count in parts, the N = 1 row beside
the bench's N = 1 run, the numbers that make the equilibrium picks, the intervals the rows
carry, and the counts searched against the rows."""

from __future__ import annotations

import math
from dataclasses import replace

import pandas as pd

from gpuscale.advice.calibration import Calibration
from gpuscale.advice.model.step import per_step_ms
from gpuscale.advice.records import (
    Counts,
    Equilibrium,
    FixedTerm,
    OneDeviceRow,
    RowIntervals,
    RowSpan,
)
from gpuscale.advice.search.predict import plausible
from gpuscale.advice.types import Finding, maybe

ROUNDING = 1e-9  # a difference this small a share of the whole is the arithmetic's
TOLERANCE = 0.01  # interval ends within 1% of the error's are the error's


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


def one_device_row(cal: Calibration, frame: pd.DataFrame) -> OneDeviceRow:
    """The N = 1 row of ``frame`` beside the bench's N = 1 run (:class:`OneDeviceRow`)."""
    one, m = frame.iloc[0], cal.runs.one_device
    above = frame[frame["accelerators"] > 1]["ddp_ms"]
    row = OneDeviceRow(
        step_ms=float(one["step_ms"]),
        added_ddp_ms=max(float(next(iter(above), 0.0)), 0.0),
        row_samples=int(one["batch_per_device"]) * int(one["accum"]),
    )
    if m is None:
        return row
    nosync, overstated = m.step_ms - m.own_ms, None
    if 0 < m.fsdp_own_ms < m.step_ms:
        overstated = m.step_ms / (m.step_ms - m.fsdp_own_ms)
    return replace(
        row,
        bench_samples=m.batch * m.accum,
        nosync_ms=nosync,
        gap_ms=nosync - row.step_ms,
        overstated=overstated,
        at_bench_ms=float(cal.model.compute.compute_ms(cal.model.spec, m.batch, m.accum)),
    )


def equilibrium(trusted: pd.DataFrame, picks: dict[str, int | None]) -> Equilibrium:
    """The numbers that make the equilibrium ``picks``, read off the ``trusted`` rows of the
    predictions (:class:`Equilibrium`)."""
    rows = trusted.set_index("accelerators")
    best_n = int(trusted.loc[trusted["efficiency"].idxmax(), "accelerators"])
    sxe, kept = picks["max_speed_x_efficiency"], picks["efficiency_threshold"]
    s, e = float(rows.at[sxe, "speedup"]), float(rows.at[sxe, "efficiency"])
    after = trusted[trusted["accelerators"] > (kept or 0)]
    return Equilibrium(
        best_n=best_n,
        best_efficiency=float(rows.at[best_n, "efficiency"]),
        sxe_speedup=s,
        sxe_efficiency=e,
        sxe_product=s * e,
        kept_efficiency=maybe(float, rows["efficiency"].get(kept)),
        next_n=maybe(int, next(iter(after["accelerators"]), None)),
        next_efficiency=maybe(float, next(iter(after["efficiency"]), None)),
        rows=len(trusted),
    )


def row_intervals(cal: Calibration, frame: pd.DataFrame, rule: Finding | None) -> RowIntervals:
    """The spans of ``frame``'s rows above one device and, where ``rule`` is None, why the
    predicted ones differ from the model's error alone (:class:`RowIntervals`)."""
    rows = frame[frame["accelerators"] > 1]
    spans = tuple(
        RowSpan(
            accelerators=int(r["accelerators"]),
            step_low=float(r["step_ms_low"] / r["step_ms"] - 1),
            step_high=float(r["step_ms_high"] / r["step_ms"] - 1),
            speedup_low=float(r["speedup_low"] / r["speedup"] - 1),
            speedup_high=float(r["speedup_high"] / r["speedup"] - 1),
        )
        for _, r in rows.iterrows()
    )
    predicted = rows[rows["rests_on"] == "predicted"]
    wider = _wider(cal, predicted) if rule is None and len(predicted) else ()
    return RowIntervals(rule=rule, spans=spans, wider=wider)


def _wider(cal: Calibration, rows: pd.DataFrame) -> tuple[str, ...]:
    """Why the predicted ``rows``' intervals are not the model's error alone, from the rows'
    own ends against the error's width at each count (``RowIntervals.wider``)."""
    why: list[str] = []
    error = cal.model.error
    width = {int(n): error.width_at(int(n)) for n in rows["accelerators"]}
    step = rows["step_ms"].astype(float)
    low = rows["step_ms_low"] / step
    high = rows["step_ms_high"] / step
    error_low = rows["accelerators"].map(lambda n: math.exp(-width[int(n)]))
    error_high = rows["accelerators"].map(lambda n: math.exp(width[int(n)]))
    if ((high > error_high * (1 + TOLERANCE)) | (low < error_low * (1 - TOLERANCE))).any():
        why.append("ranges")
    if (low > error_low * (1 + TOLERANCE)).any():
        why.append("floor")
    speedup = rows["speedup"].astype(float)
    if (rows["speedup_high"] / speedup < step / rows["step_ms_low"] * (1 - TOLERANCE)).any():
        why.append("linear")
    if len({round(w, 9) for w in width.values()}) > 1:
        why.append("growing")
    return tuple(why)


def counts(cal: Calibration, frame: pd.DataFrame, focus: int, stopped: bool) -> Counts:
    """The counts searched against ``frame``'s rows and, where the search ``stopped`` below
    the most allowed, those above ``focus`` (:class:`Counts`)."""
    machine, network = cal.machine, cal.machine.network
    searched, most = machine.device_counts, int(machine.max_devices)
    per_node = (network.inter is not None and network.per_node) or None  # one node: none
    off: list[int] = []
    if per_node is not None:
        proposed = [2**k for k in range(64) if 2**k < most]
        off = [n for n in [*proposed, most] if n not in searched]
    rows = set(frame["accelerators"].astype(int))
    found = Counts(
        searched=tuple(int(n) for n in searched),
        most=most,
        every=searched == list(range(1, most + 1)),
        pow2=most & (most - 1) == 0,
        per_node=per_node,
        off_nodes=tuple(off),
        missing=tuple(int(n) for n in searched if n not in rows),
    )
    if not stopped or focus >= most:
        return found
    shown = frame[frame["accelerators"] > focus]
    whole = None
    if per_node and any(n > focus for n in off):
        whole = (most // per_node + 1) * per_node
    return replace(
        found,
        unsearched_above=tuple(n for n in range(focus + 1, most + 1) if n not in searched),
        missing_above=tuple(n for n in searched if focus < n <= most and n not in rows),
        flagged_above=tuple(sorted(int(n) for n in shown[~plausible(shown)]["accelerators"])),
        whole_nodes=whole,
    )

"""Numbers read off the predictions for the words (``explain`` formats them, computes none)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import replace

import numpy as np
import pandas as pd

from gpuscale.advice.calibration import Calibration, Search
from gpuscale.advice.derived import (
    BreakEven,
    Equilibrium,
    FixedTerm,
    OneDeviceRow,
    Picks,
    RowIntervals,
    RowSpan,
)
from gpuscale.advice.model.step import (
    Compute,
    ModelSpec,
    optimizer_shards,
    per_step_ms,
    rate_tflops,
    step_table,
)
from gpuscale.advice.records import Counts
from gpuscale.advice.search.predict import holding, plausible
from gpuscale.advice.types import Finding, TermId, maybe
from gpuscale.analysis.equilibrium import knee_pick

ROUNDING = 1e-9  # a difference this small a share of the whole is the arithmetic's
TOLERANCE = 0.01  # interval ends within 1% of the error's are the error's
WIDER = ("ranges", "floor", "linear")  # why an interval is wider, as ``RowIntervals`` says
# the equilibrium's rules, as ``Picks.equilibrium`` names them
EQUILIBRIUM_RULES = ("knee", "max_speed_x_efficiency", "efficiency_threshold")
OVERHEADS = tuple(
    TermId(t) for t in ("fixed", "wait", "ddp", "bandwidth", "latency", "unexplained")
)


def _bisect_log(f, low: float, high: float, target: float) -> float | None:
    """Smallest x in [low, high] with increasing f(x) >= target, by bisection in log x."""
    if f(high) < target:
        return None
    if f(low) >= target:
        return low
    for _ in range(60):
        mid = math.sqrt(low * high)
        low, high = (mid, high) if f(mid) < target else (low, mid)
    return high


def _pair_speedup(cal: Calibration, model: ModelSpec, compute: Compute) -> float:
    """Throughput of 2 devices over 1 at the same per-device batch, or, the global batch
    kept, an even accumulation halved, else the batch split over the two."""
    run = cal.run
    batch, accum = float(run.batch), run.accum
    if run.kept_global_batch is not None and accum % 2 == 0:
        accum //= 2
    elif run.kept_global_batch is not None:
        batch /= 2
    candidates = ((2, batch, accum), (1, float(run.batch), run.accum))
    (two,), (one,) = step_table(cal.machine.network, run, model, (compute,), candidates)
    return two.samples_per_s / one.samples_per_s


def break_even(cal: Calibration, frame: pd.DataFrame) -> BreakEven:
    """From where 2 devices train faster than 1: the compute ms per gradient MB (the whole step
    scaled at fixed gradient bytes); the parameters, and those for the target efficiency
    (the model resized within its family; NaN where the speedup falls with size)."""
    spec, compute, run, family = cal.model.spec, cal.model.compute, cal.run, cal.model.family
    # the whole step's rate (fixed cost included): the per-sample work's is unbounded where
    # the step is nearly all fixed cost
    step_ms = compute.compute_ms(spec, run.batch, run.accum)
    tflops = rate_tflops(run.batch * run.accum, spec.flops, step_ms)

    def by_compute(scale: float) -> float:
        # every term scales, the measured batches too (else the speedup is flat in scale)
        terms = ("fixed_ms", "floor_ms", "opt_ms_per_mparam")
        times = {name: getattr(compute, name) * scale for name in terms}
        measured = tuple((b, ms * scale) for b, ms in compute.measured_ms)
        scaled = replace(compute, tflops=compute.tflops / scale, measured_ms=measured, **times)
        return _pair_speedup(cal, spec, scaled)

    def by_size(params: float) -> float:
        if family is not None:
            resized = spec.resized(params, family.flops_per_param)
            return _pair_speedup(cal, resized, family.at(params))
        return _pair_speedup(cal, spec.resized(params), replace(compute, measured_ms=()))

    scale = _bisect_log(by_compute, 1e-9, 1e9, 1.0)
    ms_per_mb = per_byte = None
    if scale is not None:  # FLOPs per byte: the break-even's ms per MB at the whole step's rate
        ms_per_mb = scale * step_ms / (spec.grad_bytes / 1e6)
        per_byte = ms_per_mb / 1e3 * tflops * 1e12 / 1e6
    grid = [10 ** (3 + k / 4) for k in range(41)]  # SMALLEST_SEARCHED (1e3) .. 1e13
    speedups = [by_size(p) for p in grid]

    def from_size(target: float) -> float | None:
        # the size from which the speedup stays >= ``target`` to the end of the grid: None
        # where it never reaches it; NaN where it reaches it and falls below again
        above = [v >= target for v in speedups]
        if not any(above):
            return None
        first = above.index(True)
        if not all(above[first:]):
            return math.nan
        if first == 0:
            return grid[0]
        return _bisect_log(by_size, grid[first - 1], grid[first], target)

    lines: tuple[float | None, ...] = (None, None)
    if family is not None:  # the family's lines at this model's size
        mparams = spec.params / 1e6
        lines = tuple(fixed + per * mparams for fixed, per in (family.opt_ms, family.ddp_ms))
    two = frame[frame["accelerators"] == 2]
    # DDP's own work as the table prices it (``step._step``): none under a sharded strategy
    own_ddp_ms = (
        per_step_ms(compute.ddp_ms_per_mparam, spec.params) if run.strategy == "ddp" else 0.0
    )
    return BreakEven(
        ms_per_mb,
        from_size(1.0),
        from_size(2 * cal.search.target_efficiency),
        step_tflops=tflops,
        own_ms_per_grad_mb=step_ms / (spec.grad_bytes / 1e6),
        flops_per_grad_byte=per_byte,
        flops_per_param=spec.flops / spec.params,
        own_optimizer_ms=per_step_ms(compute.opt_ms_per_mparam, spec.params),
        own_ddp_ms=own_ddp_ms,
        family_optimizer_ms=lines[0],
        family_ddp_ms=lines[1],
        pair_throughput_speedup=maybe(float, next(iter(two["throughput_efficiency"] * 2), None)),
        pair_speedup=maybe(float, next(iter(two["speedup"]), None)),
    )


def _largest(rows: pd.DataFrame) -> int | None:
    return int(rows["accelerators"].max()) if len(rows) else None


def picked(frame: pd.DataFrame, fits_from: int, goal: Search, refused: bool) -> Picks:
    """Each rule's count (``Picks``) and the numbers that make them, read off the plausible
    rows a rule may pick from: those from ``fits_from`` devices up (the fewest that hold the
    model) and, where an input cannot be true (``refused``), one device's alone (no count
    above it is sure); none where no row is left."""
    _, fits = holding(frame, fits_from)
    fits = fits[fits["accelerators"] == 1] if refused else fits
    if fits.empty:
        return Picks(None, None, None, dict.fromkeys(EQUILIBRIUM_RULES), None)
    fastest = int(fits.loc[fits["time_to_train_min"].idxmin(), "accelerators"])
    efficiency = fits["efficiency"]
    kept = _largest(fits[efficiency >= goal.threshold * efficiency.max()])
    cheapest = None
    if fits["accelerator_hours"].notna().any():
        cheapest = int(fits.loc[fits["accelerator_hours"].idxmin(), "accelerators"])
    times = fits[["accelerators", "time_to_train_min"]]
    knee = knee_pick(times.assign(system_id=fits["accelerators"].astype(str)))
    sxe = fits.loc[(fits["speedup"] * efficiency).idxmax()]
    best = fits.loc[efficiency.idxmax()]
    s, e = float(sxe["speedup"]), float(sxe["efficiency"])
    after = fits[fits["accelerators"] > (kept or 0)]
    numbers = Equilibrium(
        best_n=int(best["accelerators"]),
        best_efficiency=float(best["efficiency"]),
        sxe_speedup=s,
        sxe_efficiency=e,
        sxe_product=s * e,
        kept_efficiency=maybe(float, fits.set_index("accelerators")["efficiency"].get(kept)),
        next_n=maybe(int, next(iter(after["accelerators"]), None)),
        next_efficiency=maybe(float, next(iter(after["efficiency"]), None)),
        rows=len(fits),
    )
    picks = (int(knee["accelerators"]) if knee is not None else None, int(sxe["accelerators"]))
    equilibrium = dict(zip(EQUILIBRIUM_RULES, (*picks, kept), strict=True))
    efficient = _largest(fits[efficiency >= goal.target_efficiency])
    return Picks(fastest, efficient, cheapest, equilibrium, numbers)


def below_mlperf(
    frame: pd.DataFrame, floor: Sequence[tuple[int, float, Finding]]
) -> tuple[tuple[int, float, float, Finding], ...]:
    """(count, predicted minutes, MLPerf's, its system) of each plausible count faster than
    MLPerf's fastest system at that count: an input that cannot be true."""
    fastest = {n: (minutes, system) for n, minutes, system in floor}
    return tuple(
        (row.accelerators, row.time_to_train_min, *fastest[row.accelerators])
        for row in frame[plausible(frame)].itertuples()
        if row.accelerators in fastest and row.time_to_train_min < fastest[row.accelerators][0]
    )


def fixed_term(cal: Calibration, frame: pd.DataFrame, n: int) -> FixedTerm:
    """The optimizer step (its shard where the strategy shards it, as the step does) and the
    ``fixed`` excess at ``n`` split."""
    opt = float(per_step_ms(cal.model.compute.opt_ms_per_mparam, cal.model.spec.params))
    opt_n = opt / optimizer_shards(cal.machine.network, n, cal.run.strategy)
    row, one = frame.set_index("accelerators").loc[n], frame.iloc[0]
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
    one, runs = frame.iloc[0], cal.runs
    above = frame[frame["accelerators"] > 1]["ddp_ms"]
    row = OneDeviceRow(
        step_ms=float(one["step_ms"]),
        added_ddp_ms=max(float(next(iter(above), 0.0)), 0.0),
        row_samples=int(one["batch_per_device"]) * int(one["accum"]),
    )
    if runs.one_step_ms is None:
        return row
    nosync, overstated = runs.one_step_ms - runs.one_own_ms, None
    if runs.one_strategy == "fsdp" and cal.run.strategy == "ddp":  # FSDP's own work left out
        nosync = runs.one_step_ms - runs.one_fsdp_own_ms
    # FSDP's step whole is the row (no bare module, not predicted as DDP): it overstates
    whole = cal.run.strategy != "ddp" and cal.model.compute.one_rank_own_ms == 0
    if whole and 0 < runs.one_fsdp_own_ms < runs.one_step_ms:
        overstated = runs.one_step_ms / (runs.one_step_ms - runs.one_fsdp_own_ms)
    return replace(
        row,
        bench_samples=runs.one_batch * runs.one_accum,
        nosync_ms=nosync,
        gap_ms=nosync - row.step_ms,
        overstated=overstated,
        at_bench_ms=float(
            cal.model.compute.compute_ms(cal.model.spec, runs.one_batch, runs.one_accum)
        ),
    )


def row_intervals(cal: Calibration, frame: pd.DataFrame, rule: Finding | None) -> RowIntervals:
    """The spans of the rows above one device and, without a ``rule``, why the predicted ones
    are wider than the model's error."""
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
    rows = rows[rows["rests_on"] == "predicted"]
    if rule is not None or not len(rows):
        return RowIntervals(rule=rule, spans=spans, wider=())
    # why wider than the step's error: the ranges' ends beyond it, the compute's floor above
    # its lower end, the speedup's ceiling below its upper end; the error growing with N
    width = np.array([cal.model.error.width_at(int(n)) for n in rows["accelerators"]])
    low, high = rows["step_ms_low"] / rows["step_ms"], rows["step_ms_high"] / rows["step_ms"]
    beyond = (high > np.exp(width) * (1 + TOLERANCE)) | (low < np.exp(-width) * (1 - TOLERANCE))
    floor = low > np.exp(-width) * (1 + TOLERANCE)
    ratio = rows["step_ms"] / rows["step_ms_low"]
    capped = rows["speedup_high"] / rows["speedup"] < ratio * (1 - TOLERANCE)
    why = [w for w, seen in zip(WIDER, (beyond, floor, capped), strict=True) if seen.any()]
    growing = len({round(w, 9) for w in width}) > 1
    return RowIntervals(rule=rule, spans=spans, wider=(*why, *["growing"] * growing))


def counts(cal: Calibration, frame: pd.DataFrame, focus: int, stopped: bool) -> Counts:
    """The counts searched against ``frame``'s rows, and those above ``focus`` (to the most
    allowed where the search ``stopped``)."""
    machine, network = cal.machine, cal.machine.network
    searched, most = machine.device_counts, int(machine.max_devices)
    top = most if stopped else focus  # the counts above the focus said up to it
    per_node = (network.inter is not None and network.per_node) or None  # one node: none
    off: list[int] = []
    if per_node is not None:  # the counts the rule gives on one node, not whole nodes
        off = [n for n in replace(network, inter=None).counts_up_to(most) if n not in searched]
    whole = None
    if per_node and any(focus < n <= top for n in off):
        whole = (most // per_node + 1) * per_node
    rows = set(frame["accelerators"].astype(int))
    shown = frame[(frame["accelerators"] > focus) & (frame["accelerators"] <= top)]
    return Counts(
        searched=tuple(int(n) for n in searched),
        most=most,
        every=searched == list(range(1, most + 1)),
        pow2=most & (most - 1) == 0,
        per_node=per_node,
        off_nodes=tuple(off),
        missing=tuple(int(n) for n in searched if n not in rows),
        unsearched_above=tuple(n for n in range(focus + 1, top + 1) if n not in searched),
        missing_above=tuple(n for n in searched if focus < n <= top and n not in rows),
        flagged_above=tuple(sorted(int(n) for n in shown[~plausible(shown)]["accelerators"])),
        whole_nodes=whole,
    )


def overheads(row: pd.Series) -> dict[TermId, float]:
    """The step's overheads (ms), the exposed communication split into bandwidth and latency
    in their shares of the whole."""
    exposed = float(row["exposed_comm_ms"])
    share = float(row["latency_ms"] / row["comm_ms"]) if row["comm_ms"] > 0 else 0.0
    return {
        TermId.FIXED: float(row["fixed_excess_ms"]),
        TermId.WAIT: float(row["wait_ms"]),
        TermId.DDP: float(row["ddp_ms"]),
        TermId.BANDWIDTH: exposed * (1 - share),
        TermId.LATENCY: exposed * share,
        TermId.UNEXPLAINED: float(row["unexplained_ms"]),
    }


def shrink(
    focus: pd.Series, parts: dict[TermId, float], term: str, target: float
) -> tuple[float | None, tuple[str, ...]]:
    """The efficiency at ``focus`` without the overhead ``term`` (None: N = 1, no overhead, or
    nothing left), and the fewest other overheads, largest first, that must go with it to
    reach ``target`` (() where it alone does, or not even all of them would)."""
    if focus["accelerators"] < 2 or term not in OVERHEADS:
        return None, ()
    step = float(focus["step_ms"])

    def efficiency(gone: tuple[str, ...]) -> float | None:
        left = step - sum(parts[t] for t in gone)
        if not left > 0:
            return None
        return float(focus["speedup"]) * step / left / float(focus["accelerators"])

    alone = efficiency((term,))
    if alone is None or alone >= target:
        return alone, ()
    also: list[str] = []
    for name in sorted((k for k in parts if k != term), key=parts.__getitem__, reverse=True):
        also.append(name)
        reached = efficiency((term, *also))
        if reached is None or reached >= target:
            return alone, tuple(also)
    return alone, ()

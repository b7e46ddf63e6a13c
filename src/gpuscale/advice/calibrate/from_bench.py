"""The advice from ``gpuscale bench`` results (``from_bench``): the model calibrated on
the runs of one model, its measured overlap, DDP overhead, wait, fixed per-step cost,
power and noise scale, the step's interval from leave-one-out, and every term the runs
did not measure said as assumed (``advice/assumptions.py``). Flagged runs are left out
unless allowed; ``--fixed-ms`` replaces the measured split of the step
(``fixed_cost.resplit``). The bench table is read before (``advice/load.py``); the advice
from numbers is ``basis.from_numbers``.
"""

from __future__ import annotations

import shlex
from dataclasses import replace
from pathlib import Path
from typing import Any

import pandas as pd

from gpuscale.advice import assumptions
from gpuscale.advice.calibrate import family, link
from gpuscale.advice.calibrate import measured as measured_contention
from gpuscale.advice.calibrate.basis import Basis
from gpuscale.advice.calibrate.calibration import (
    CalibrationError,
    NamedCalibrationError,
    calibrate,
    default_model,
    step_error,
    with_comm_scale,
)
from gpuscale.advice.calibrate.measured import (
    for_strategy,
    other_strategy,
    own_work,
    strategy_taken,
)
from gpuscale.advice.calibrate.rows import (
    BenchFieldError,
    broken_note,
    check_columns,
    flagged_help,
    known_model,
    measured_runs,
    models_benched,
    same_samples,
    usable_runs,
    why_this_model,
)
from gpuscale.advice.explain.weak_first import as_run
from gpuscale.advice.inputs import OneDevice
from gpuscale.advice.model import fixed_cost
from gpuscale.advice.model.hardware import bench_power, rate_warnings, unchecked_note
from gpuscale.advice.model.network import Network
from gpuscale.advice.model.step import per_step_ms
from gpuscale.advice.request import AdviceRequest
from gpuscale.advice.types import Measure, Measured, Source, TermId
from gpuscale.bench.evidence import labels, remedy
from gpuscale.bench.support import Support, comm_scale_sentence, support
from gpuscale.bench.support import weak as too_short
from gpuscale.quantities import format_ms, joined, of_the
from gpuscale.tables.bench import most_host_devices
from gpuscale.tables.bench_runs import bench_options, runs_like
from gpuscale.tables.requests import NamedError

# What the calibration compares of the model's runs (``calibrate.HARDWARE_COLUMNS`` less
# the device's name, compared apart): the runs of it the advice reads
HARDWARE = ("model", "backend", "device", "precision", "tf32", "threads")


def from_bench(basis: Basis, req: AdviceRequest, bench: pd.DataFrame) -> Basis:
    """``basis`` with the model calibrated on the bench's runs of it, its measured
    overlap, power and noise scale, and the step's interval from leave-one-out."""
    check_columns(bench)
    family.check(req)
    if req.model is not None:
        known_model(bench, req.model, req.bench)
    # a broken model (its loss not finite) is used by nothing, --allow-flagged or not: not
    # advised on, not a family's representative, no other model's contention measured on it
    where = "the bench results" if req.bench is None else Path(req.bench).name
    table, warning, broken = usable_runs(bench, req.allow_flagged, req.model, where)
    try:
        cal = _calibrated(table, req, basis.network)
        on_host = link.on_bench_host_link(basis, req, table, cal)
        if on_host is not basis:  # the bench host's link: its communication read on it
            basis, cal = on_host, _calibrated(table, req, on_host.network)
    except CalibrationError as exc:
        more = f"{flagged_help(table)}{broken_note(broken)}"
        if not more:
            raise
        # the fields it names (``ref``) still said as the caller names them
        said = exc.text if isinstance(exc, NamedError | BenchFieldError) else str(exc)
        raise NamedCalibrationError(f"{said}{more}.") from None
    like = (cal.config_group, cal.device_name, req.strategy)
    measured = tuple(measured_runs(bench, cal.name, req.allow_flagged, like))
    fell = measured_contention.falling(cal.compute.slowdown)
    # the model's runs on the calibrated run's hardware: those the advice reads
    on_hardware = runs_like(table, cal.config_group, cal.device_name, fields=HARDWARE)
    weak, weak_in_full, evidence = _weak(table[on_hardware], cal.name, req.bench)
    if evidence is not None:  # the bench command of the advised run, on the file advised on
        evidence = replace(evidence, run=_run(table, cal, req))
    basis = replace(
        basis,
        evidence=evidence,
        warnings=(*basis.warnings, *(w for w in (warning, weak, fell) if w)),
        measured=measured,
        error=step_error(table, basis.network, cal),
        network=with_comm_scale(basis.network, cal),
    )
    if cal.device == "cpu":
        basis = link.cpu_processes(basis, req, table, cal)
    per_device = req.batch or cal.batch
    beyond = _far_beyond_the_batch_timed(cal, per_device)
    if beyond:
        basis = replace(basis, warnings=(*basis.warnings, beyond))
    overlap = cal.overlap if req.overlap is None else req.overlap
    if overlap is None and cal.device == "cpu":
        overlap = 0.0  # gloo reduces on the cores backward uses
    # the watts per device at each per-device batch (each count is charged its own)
    power = bench_power(
        table,
        cal.bench_model,
        cal.config_group,
        device=cal.device,
        device_name=cal.device_name,
        given_w=req.power_w,
    )
    sources = _bench_sources(cal) + ([weak_in_full] if weak_in_full else [])
    precision = "bf16" if req.grad_bytes == 2 else "fp32"
    note = unchecked_note(cal.compute.tflops, cal.device_name, precision, "the bench measured")
    if note and cal.device != "cpu":  # a GPU without a peak: its rate not checked, said
        sources.append(note)
    if req.fixed_ms is not None:  # entered: replaces what the bench measured or fitted
        cal = _with_fixed(cal, req.fixed_ms)
    if req.strategy and req.strategy != cal.strategy:  # the other strategy's own work
        cal = replace(cal, compute=for_strategy(cal.compute, cal.strategy, req.strategy))
    bench_model = None if req.params else cal.name  # the model a bench run would measure
    host = most_host_devices(table)
    impossible = rate_warnings(cal.compute.tflops, cal.device_name, precision, low=False)
    note = "" if req.model or req.params else why_this_model(bench, cal.name, broken)
    named = None if req.params is not None else cal.name  # as models_benched names it
    return replace(
        basis,
        spec=replace(cal.model, grad_bytes_per_param=req.grad_bytes),
        name=cal.name,
        compute=cal.compute,
        per_device=per_device,
        accum=cal.accum if req.batch is None else 1,  # the run's micro-steps per step
        # the memory measured decides the largest batch, unless one was asked for
        max_batch=max(cal.max_batch, per_device)
        if cal.max_batch is not None and req.batch is None
        else None,
        overlap=overlap,
        power=power,
        sources=(*basis.sources, *sources),
        noise=cal.noise,
        same_samples=same_samples(bench, cal.name),
        min_batch=max(1, per_device // 8),  # the fitted fixed cost prices small batches
        fixed=replace(cal.fixed, measure=as_run(cal.fixed.measure, evidence, host)),
        assumed=(*basis.assumed, *_bench_assumed(cal, req, overlap, bench_model, measured, host)),
        # a rate the bench measured is a finding however low; above the peak, impossible
        warnings=(
            *basis.warnings,
            *impossible,
            *other_strategy(cal.name, cal.strategy, req.strategy or cal.strategy),
        ),
        implausible=basis.implausible or bool(impossible),
        bench_model=None if req.params is not None else cal.name,
        model_note=note,
        chosen="" if note or req.model else models_benched(bench, named),
        host_devices=host,
        one_device=None if req.params is not None else _one_device(cal),
        strategy=cal.strategy,
        # the family's basis for its break-even (the same whichever member is advised);
        # another strategy than benched: the member's own, converted (for_strategy)
        family=None
        if req.strategy and req.strategy != cal.strategy
        else family.fitted(table, cal, basis.network),
    )


def _one_device(cal: Any) -> OneDevice | None:
    """The calibrated N = 1 run as it trained: its step, batch, strategy and DDP's own work
    in it (the N = 1 row is predicted without DDP: said beside it)."""
    if not cal.one_step_ms > 0:
        return None
    own = 0.0
    if cal.strategy == "ddp":
        own = per_step_ms(cal.compute.ddp_ms_per_mparam, cal.model.params)
    return OneDevice(
        cal.one_step_ms,
        cal.batch,
        cal.accum,
        cal.strategy,
        own,
        config_group=cal.config_group,
        device_name=cal.device_name,
    )


def _calibrated(table: pd.DataFrame, req: AdviceRequest, network: Network) -> Any:
    """The calibration advised on: the model asked for (else the largest benched), or for
    a model the bench did not measure (``req.params``), its family's representative's."""
    if req.params is not None:  # a model the bench did not measure: its family's rate
        model, named, how = family.representative(table, req)
        return family.adopt(calibrate(table, model, network), req, named, how)
    return calibrate(table, req.model or default_model(table), network)


def _with_fixed(cal: Any, fixed_ms: float) -> Any:
    """``cal`` with the fixed cost entered (``--fixed-ms``): the measured forward +
    backward at the bench's batch kept, only its split into fixed cost and per-sample
    work changed (``fixed_cost.resplit``)."""
    micro = cal.compute.micro_ms(cal.model, cal.batch)
    if fixed_ms >= micro:
        raise BenchFieldError(
            "fixed_ms",
            fixed_ms,
            f"not below the forward + backward step the bench measured for {cal.name} at "
            f"batch {cal.batch} ({format_ms(micro)}): the fixed per-step cost is the part of "
            "it that does not shrink with the batch",
        )
    return replace(
        cal,
        compute=fixed_cost.resplit(cal.compute, cal.model, cal.batch, fixed_ms),
        fixed=fixed_cost.given(fixed_ms, cal.batch),
    )


def _bench_assumed(
    cal: Any,
    req: AdviceRequest,
    overlap: float | None,
    model: str | None,
    measured: tuple[Measured, ...],
    host_devices: int | None,
) -> list:
    """The step's terms as the bench measured them, or said as assumed (``model``: the
    bench model that measures them, None for a model given by its numbers; on a host of
    ``host_devices`` GPUs)."""
    fixed = cal.fixed
    span = f" ({fixed.low_ms:.3g}-{fixed.high_ms:.3g} ms)" if fixed.uncertain else ""
    compute = cal.compute
    return [
        assumptions.Assumption(
            term=TermId.FIXED,
            value=f"{fixed.ms:.3g} ms{span}",
            source=fixed.source,
            basis=fixed.basis,
            measure=Measure() if fixed.source == Source.MEASURED else fixed.measure,
        ),
        assumptions.overlap(
            overlap,
            measured=cal.overlap is not None and req.overlap is None,
            given=req.overlap is not None,
            model=model,
            unmeasured=_overlap_unmeasured(measured),
            host_devices=host_devices,
        ),
        *strategy_taken(cal.name, cal.strategy, req.strategy),
        own_work(
            compute.ddp_ms_per_mparam,
            cal.model.params,
            cal.strategy,
            req.strategy or cal.strategy,
            model,
        ),
        assumptions.wait(
            dict(compute.slowdown),
            bool(compute.jitter_ms),
            model=model,
            held=dict(compute.held_slowdown()),
            host_devices=host_devices,
        ),
    ]


# The command that prints a bench table's evidence_notes (``-f csv`` alone leaves them out).
NOTES_COMMAND = (
    "gpuscale analyze --bench {} --columns configuration,accelerators,evidence_notes -f csv"
)


def _weak(
    table: pd.DataFrame, model: str, source: Any = None
) -> tuple[str | None, str | None, Support | None]:
    """The warning when runs of ``model`` the advice uses (``ok``, not flagged, or
    allowed) are weak evidence (``bench.evidence``: few steps timed, steps spread, busy
    share not measured): short, with the kinds of why and what to bench (the default
    view's line); then the same in full, with the steps' basis and the command that
    prints the runs' notes (on ``source``, the results file, where given: a source line
    of ``--explain``); then what they give. (None, None, support) when none is weak."""
    ok = table[(table["model"] == model) & (table["status"] == "ok")]
    rows = ok[~ok["flagged"].fillna(False).astype(bool)]
    weak = rows[rows["evidence"] == "weak"]
    found = support(rows, table)
    if weak.empty or found is None:
        return None, None, found
    kinds = labels(weak["evidence_kinds"])
    counts = [int(n) for n in sorted(weak["accelerators"].unique())]
    on = f"{joined(counts)} device{'' if counts == [1] else 's'}"
    runs = of_the(len(weak), len(rows), "bench run")
    said = (
        f"WARNING: weak evidence: {runs} of {model} the advice uses (on {on}) "
        f"{'is' if len(weak) == 1 else 'are'} weak ({', '.join(kinds)})"
    )
    # runs too short to read the step's terms from: the change line says what to bench
    # (``explain.weak_first.measure_first``), the warning only that they are weak
    short = (
        "" if too_short(found) else f": {remedy(found.fixes, found.steps_needed)} for firm numbers"
    )
    full = (
        f"Weak evidence: {runs} of {model} (on {on}): {', '.join(kinds)}; the bench "
        f"table's evidence_notes say more: `{NOTES_COMMAND.format(_file(source))}`; "
        f"{found.remedy()} for firm numbers."
    )
    return f"{said}{short}", full, found


def _run(table: pd.DataFrame, cal: Any, req: AdviceRequest) -> str:
    """The ``gpuscale bench`` options of the run advised on: the calibrated run's
    configuration in the strategy predicted, and ``--out`` the file advised on where the
    advice was given its path (``""`` where no run of it is in ``table``)."""
    like = runs_like(table, cal.config_group, cal.device_name) & (table["model"] == cal.name)
    rows = table[like]
    if rows.empty:
        return ""
    row = rows.sort_values("accelerators", kind="stable").iloc[0].copy()
    row["strategy"] = req.strategy or row.get("strategy")
    out = f" --out {_file(req.bench)}" if isinstance(req.bench, str | Path) else ""
    return f"{bench_options(row)}{out}"


def _file(source: Any) -> str:
    """The results file as a shell word (``FILE`` where the table was given, not read)."""
    return shlex.quote(str(source)) if isinstance(source, str | Path) else "FILE"


def _overlap_unmeasured(measured: tuple[Measured, ...]) -> str:
    """Why the bench did not measure the overlap: its multi-device run of the model is
    flagged (left out), timed no communication, or there is none."""
    left_out = [m.devices for m in measured if m.flagged and not m.allowed]
    if left_out:
        return (
            f"the run on {left_out[0]} devices exists but is flagged (reasons in the bench "
            "table), so it was not used"
        )
    if measured:
        return "the multi-device run timed no communication"
    return "no multi-device run"


def _far_beyond_the_batch_timed(cal: Any, per_device: int) -> str:
    """A warning when the advice runs a per-device batch the bench never came near: above
    the one batch it timed while the step sat on a launch-bound floor there (its work was
    never seen: priced at the device's peak, a lower bound), or more than twice that batch.
    Held out on an H100: ResNet-50 bf16 timed at batch 32 on a host whose CPU set its step
    took 116 ms at batch 256 on another host; modelled from batch 32, the step there was
    under half of that (docs/advice.md)."""
    floor = cal.compute.floor_ms > 0
    if (
        cal.shape is not None
        or per_device <= cal.batch
        or (per_device <= 2 * cal.batch and not floor)
    ):
        return ""
    how = (
        "on a launch-bound floor there, its work priced at the device's peak: a lower bound"
        if floor
        else "from the fixed cost and per-sample rate measured there"
    )
    return (
        f"UNMEASURED: per-device batch {per_device} is {per_device / cal.batch:.3g}x the "
        f"largest the bench timed ({cal.batch}); its step is modelled {how}, and the step's "
        "interval does not cover a batch that far from the one measured; measure it: "
        f"gpuscale bench --model {cal.name} --batch {per_device}"
    )


def _bench_sources(cal: Any) -> list[str]:
    lines = [f"Calibrated on {cal.name}: " + "; ".join(cal.notes) + "."]
    if cal.shape is not None:
        lines.append(cal.shape.sentence())
    elif cal.measured_steps.empty:
        lines.append("Step against the batch: no batch of this model measured; all modelled.")
    else:
        lines.append(
            f"Step against the batch: measured at per-device batch {cal.batch} only; other "
            "batches are modelled from its fixed cost and rate."
        )
    if cal.memory_note:
        lines.append(cal.memory_note)
    # the overlap is said once, among the assumptions (measured or why not, and how to
    # measure it): it was said here too (a user walk)
    if cal.comm_scale is not None:
        lines.append(comm_scale_sentence(cal.comm_scale, cal.comm_support))
    return lines

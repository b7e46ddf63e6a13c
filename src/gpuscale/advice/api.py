"""One call from what a user has to the advice: ``gpuscale.advise(...)``.

From numbers::

    gpuscale.advise(params=7e6, step_ms=20, batch=64, link="pcie-phb")

or from measurements (``gpuscale bench`` results, optionally a ``gpuscale collectives``
sweep and the detected topology)::

    gpuscale.advise(bench="results.jsonl", collectives="collectives.jsonl")
    gpuscale.advise(AdviceRequest(params=7e6, step_ms=20, batch=64, interconnect="nvlink4"))

Returns an :class:`~gpuscale.advice.recommend.Advice`: the recommendation, a DataFrame of
predictions per device count (``.predictions``) and the explanation. The CLI and the
report call this same function.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import pandas as pd

from gpuscale.advice.calibrate import (
    CalibrationError,
    calibrate,
    default_model,
    network_from_collectives,
    with_comm_scale,
)
from gpuscale.advice.device_power import Power, device_power
from gpuscale.advice.model import Compute, Link, ModelSpec, Network, predict_step
from gpuscale.advice.plausible import (
    implied_device,
    mlperf_floor,
    rate_warnings,
    topology_cap,
)
from gpuscale.advice.recommend import Advice, AdviceInputs, recommend
from gpuscale.advice.request import AdviceRequest
from gpuscale.advice.uncertainty import StepError, leave_one_out
from gpuscale.analysis.critical_batch import ConvergenceModel, rcp_model_for
from gpuscale.bench.results import ResultsError, bench_table, flag_summary, read_results
from gpuscale.interconnect.topology import Topology, parse_topo_matrix
from gpuscale.quantities import format_count, format_ms, number
from gpuscale.tables.workloads import Unit, convergence_unit

DEFAULT_LINK = "pcie-phb"


def choose_link(link: str | Link | None, topology: Topology | None) -> tuple[Link, str]:
    """The intra-node link and a sentence saying where it came from: given, else the
    detected topology's slowest pair (its expected bus bandwidth), else ``pcie-phb``."""
    if isinstance(link, Link):
        return link, f"Link: {link.name} as given ({number(link.busbw_gbs)} GB/s bus bandwidth)."
    if link is not None:
        chosen = Link.from_preset(link)
        return chosen, f"Link: preset {chosen.name} ({number(chosen.busbw_gbs)} GB/s) as given."
    preset = topology.preset() if topology is not None else None
    if topology is not None and preset is not None:
        chosen = Link.from_preset(preset)
        expected = topology.expected_busbw_gbs()
        if expected:
            chosen = replace(chosen, busbw_gbs=expected, name=f"{preset} (detected)")
        return chosen, (
            f"Link: {chosen.name}, the slowest GPU pair of the detected topology "
            f"({topology.slowest_link()}), expected {number(chosen.busbw_gbs)} GB/s."
        )
    chosen = Link.from_preset(DEFAULT_LINK)
    return chosen, (
        f"Link: no link given and none detected; assumed {DEFAULT_LINK} "
        f"({number(chosen.busbw_gbs)} GB/s): give --interconnect or --collectives."
    )


def convergence_for(
    *,
    noise_scale: float | None,
    workload: str | None,
    ruleset: str,
    samples: float,
    reference_batch: float,
    measured: Any = None,
) -> ConvergenceModel | None:
    """The convergence model: an MLPerf workload's RCP fit (its own samples where it
    counts samples), else a given noise scale, else the one the bench measured, with
    ``E_min`` such that ``samples`` are needed at the reference batch; None without any."""
    if workload is not None:
        fitted = rcp_model_for(workload, ruleset)
        if fitted is None:
            raise ValueError(
                f"no reference convergence points for {workload!r} in ruleset {ruleset} "
                "(mlperf-logging's rcp_checker)"
            )
        if convergence_unit(workload, "v" + ruleset.rsplit(".", 1)[0]) is Unit.SAMPLES:
            return fitted
        # RCPs in epochs: the shape (B_noise) from them, the scale from ``samples``
        e_min = samples / (1 + reference_batch / fitted.b_noise)
        return ConvergenceModel(e_min, fitted.b_noise, fitted.source + ", scaled")
    if noise_scale is not None:
        if not noise_scale > 0:
            raise ValueError(f"noise scale must be positive, got {noise_scale}")
        b_noise, source = noise_scale, "noise scale as given"
    elif measured is not None:
        b_noise = measured.b_simple
        source = (
            f"B_simple {number(measured.b_simple)} measured by the bench over "
            f"{measured.steps} steps, 95% interval {number(measured.low)}-"
            f"{number(measured.high)}; early in training it is a lower bound"
        )
    else:
        return None
    e_min = samples / (1 + reference_batch / b_noise)
    return ConvergenceModel(e_min, b_noise, source)


def advise(
    request: AdviceRequest | None = None,
    /,
    *,
    bench: str | Path | pd.DataFrame | None = None,
    link: str | Link | None = None,
    topology: Topology | None = None,
    **keywords: Any,
) -> Advice:
    """The advice for one model (see the module docstring): an :class:`AdviceRequest`
    or its fields as keywords. ``bench``: a results file (path) or its bench table
    (DataFrame); ``link``: a preset name or a :class:`Link`; ``topology``: a detected or
    parsed topology (else ``request.topo`` is read). Flagged bench runs are left out unless
    ``allow_flagged``. Raises ``ValueError`` (and its subclass ``CalibrationError``, which
    lists the flags when flagged runs were left out) with a message for the user."""
    frame = bench if isinstance(bench, pd.DataFrame) else None
    if bench is not None and frame is None:
        keywords["bench"] = str(bench)
    elif frame is not None:
        keywords["bench"] = "(table)"
    if isinstance(link, str):
        keywords["interconnect"] = link
    req = AdviceRequest.of(request, **keywords)
    if isinstance(link, Link):
        given: str | Link | None = link
    elif req.busbw_gbs is not None:
        given = Link(busbw_gbs=req.busbw_gbs, latency_us=req.latency_us, name="custom")
    else:
        given = req.interconnect
    if topology is None and req.topo is not None:
        path = Path(req.topo)
        try:
            topology = parse_topo_matrix(path.read_text(errors="replace"), req.device_name)
        except (OSError, ValueError) as exc:
            raise ValueError(f"{path}: {exc}") from None
    return _advise(req, frame, given, topology)


@dataclass
class _Basis:
    """What the advice rests on: the network, the model and its rate per device, and
    where each came from (``sources``, ``warnings``)."""

    network: Network
    max_devices: int
    sources: list[str]
    warnings: list[str] = field(default_factory=list)
    spec: ModelSpec | None = None
    compute: Compute | None = None
    per_device: int = 0
    min_batch: int = 1
    overlap: float | None = None
    power: Power | None = None
    noise: Any = None
    name: str = ""
    error: StepError = field(default_factory=StepError)
    link_assumed: bool = False  # no link given, detected or measured: DEFAULT_LINK


def _advise(
    req: AdviceRequest, frame: pd.DataFrame | None, given: str | Link | None, topology: Any
) -> Advice:
    basis = _network(req, given, topology)
    if req.bench is not None:
        _from_bench(basis, req, frame)
    else:
        _from_numbers(basis, req)
    convergence = convergence_for(
        noise_scale=req.noise_scale,
        workload=req.workload,
        ruleset=req.ruleset,
        samples=req.samples,
        reference_batch=basis.per_device,
        measured=basis.noise,
    )
    inputs = AdviceInputs(
        model=basis.spec,
        compute=basis.compute,
        network=basis.network,
        batch=basis.per_device,
        name=basis.name,
        max_devices=basis.max_devices,
        overlap=basis.overlap,
        bucket_mb=req.bucket_mb,
        strategy=req.strategy,
        convergence=convergence,
        samples=req.samples,
        global_batch=req.global_batch,
        min_batch=basis.min_batch,
        target_efficiency=req.target_efficiency,
        price_per_device_hour=req.price,
        power=basis.power,
        sources=tuple(basis.sources),
        error=basis.error,
        warnings=tuple(basis.warnings),
        mlperf_floor=mlperf_floor(req.workload, basis.max_devices) if req.workload else (),
    )
    return recommend(inputs)


def _network(req: AdviceRequest, given: str | Link | None, topology: Any) -> _Basis:
    """The network (links inside and between nodes, measured curves) and the device
    count it allows, with a sentence on where each came from."""
    intra, link_note = choose_link(given, topology)
    nodes = req.nodes
    network = Network(
        intra=intra,
        per_node=req.gpus_per_node if nodes > 1 else None,
        inter=Link.from_preset(req.inter_node) if nodes > 1 else None,
        nics_per_node=req.nics_per_node,
    )
    sources = [link_note]
    max_devices, note = topology_cap(
        topology, nodes, req.max_devices or (req.gpus_per_node * nodes)
    )
    if note:
        sources.append(note)
    if req.collectives is not None:
        network = network_from_collectives(Path(req.collectives), network)
        ranks = sorted({c.ranks for c in network.curves})
        sources[0] = (
            f"Link: the curves measured in {Path(req.collectives).name} on "
            f"{', '.join(map(str, ranks))} ranks; other counts from "
            f"{number(network.intra.busbw_gbs)} GB/s bus bandwidth, "
            f"{number(network.intra.latency_us)} us latency read off them."
        )
    if nodes > 1:
        sources.append(
            f"Between nodes: {network.inter.name} x {req.nics_per_node or req.gpus_per_node} "
            "NICs per node, NCCL's ring over all ranks through the slowest level."
        )
    assumed = given is None and req.collectives is None
    assumed = assumed and (topology is None or topology.preset() is None)
    return _Basis(network=network, max_devices=max_devices, sources=sources, link_assumed=assumed)


def _from_bench(basis: _Basis, req: AdviceRequest, frame: pd.DataFrame | None) -> None:
    """Fill ``basis`` from the bench: the model calibrated on its runs, its measured
    overlap, power and noise scale, and the step's interval from leave-one-out."""
    bench_frame, skipped = _bench_table(frame if frame is not None else req.bench)
    basis.sources += skipped
    table, warning = _with_flagged(bench_frame, req.allow_flagged)
    try:
        cal = calibrate(table, req.model or default_model(table), basis.network)
    except CalibrationError as exc:
        raise CalibrationError(f"{exc}{_flagged_help(table)}") from None
    if warning:
        basis.warnings.append(warning)
    basis.error = step_error(table, basis.network, cal)
    basis.network = with_comm_scale(basis.network, cal)
    if cal.device == "cpu":
        _cpu_processes(basis, req, cal.threads)
    basis.spec = replace(cal.model, grad_bytes_per_param=req.grad_bytes)
    basis.name = cal.name
    basis.compute, basis.per_device = cal.compute, req.batch or cal.batch
    overlap = cal.overlap if req.overlap is None else req.overlap
    if overlap is None and cal.device == "cpu":
        overlap = 0.0  # gloo reduces on the cores backward uses
    basis.overlap = overlap
    power = device_power(cal.device, cal.device_name, measured_w=cal.power_w, given_w=req.power_w)
    if req.power_w is None and cal.power_w_at:  # the job's power measured at each N
        power = replace(power, total_w_at=cal.power_w_at)
    basis.power = power
    basis.sources += _bench_sources(cal, overlap)
    basis.noise = cal.noise
    basis.min_batch = max(1, basis.per_device // 8)  # the fitted fixed cost prices small batches
    basis.warnings += rate_warnings(
        cal.compute.tflops, cal.device_name, "bf16" if req.grad_bytes == 2 else "fp32"
    )


def _cpu_processes(basis: _Basis, req: AdviceRequest, threads: int | None) -> None:
    """On CPU (gloo) the devices are processes of one host: their count is capped at
    ``os.cpu_count() // threads per process`` (at least 1; on one node), and their link is
    no GPU preset: an assumed one is named and said as such."""
    if basis.link_assumed:
        intra = basis.network.intra
        basis.network = replace(basis.network, intra=replace(intra, name="CPU processes"))
        basis.sources[0] = (
            "Link: CPU processes on one host (gloo); no preset describes their link, so it "
            f"is unknown: assumed {DEFAULT_LINK}'s host-memory figures "
            f"({number(intra.busbw_gbs)} GB/s, {number(intra.latency_us)} us): measure it "
            "with `gpuscale collectives` on gloo and give --collectives, or give --busbw-gbs."
        )
    if req.nodes > 1:
        return
    cores, per_process = os.cpu_count() or 1, max(1, threads or 1)
    host = max(1, cores // per_process)
    why = (
        f"on CPU each device is a process of this host: {cores} core(s) / {per_process} "
        "thread(s) per process as benched"
    )
    if req.max_devices is None and host < basis.max_devices:
        basis.sources.append(f"Device count capped at {host}: {why} (--max-devices to change).")
        basis.max_devices = host
    elif host < basis.max_devices:
        basis.sources.append(
            f"This host runs at most {host} such process(es) ({why}); counts above it, "
            "asked with --max-devices, are for a larger host."
        )


def _from_numbers(basis: _Basis, req: AdviceRequest) -> None:
    """Fill ``basis`` from the numbers given: the whole measured step taken as work at
    the rate it implies (``batch x FLOPs per sample / step``)."""
    per_device = req.batch or 32
    spec = ModelSpec(
        params=float(req.params),
        flops_per_sample=req.flops_per_sample,
        grad_bytes_per_param=req.grad_bytes,
    )
    tflops = per_device * spec.flops / (req.step_ms / 1e3) / 1e12
    basis.spec, basis.compute, basis.per_device = spec, Compute(tflops=tflops), per_device
    basis.min_batch = per_device  # no fixed cost known: smaller batches would look free
    basis.overlap = req.overlap
    device = req.device_name or implied_device(basis.network.intra.name)
    basis.power = device_power(None, req.device_name, given_w=req.power_w)
    basis.sources.append(
        f"Compute: {format_ms(req.step_ms)} per step of {per_device:,} samples "
        f"-> {number(tflops)} TFLOP/s at "
        + ("the FLOPs given." if req.flops_per_sample else "6 x parameters FLOPs per sample.")
    )
    basis.warnings += rate_warnings(tflops, device, "bf16" if req.grad_bytes == 2 else "fp32")
    basis.name = f"a {format_count(spec.params)}-parameter model"


def step_error(table: pd.DataFrame, network: Network, cal: Any) -> StepError:
    """The 80% interval of the step at N > 1: leave-one-out over the bench's models with
    N > 1 rows of the configuration advised on (see ``uncertainty``)."""

    def predict(rest: pd.DataFrame, model: str, n: int) -> float | None:
        try:
            other = calibrate(rest, model, network)
        except (CalibrationError, ValueError):
            return None
        if other.device != cal.device or other.device_name != cal.device_name:
            return None
        overlap = other.overlap
        if overlap is None and other.device == "cpu":
            overlap = 0.0  # as the advice itself does
        step = predict_step(
            other.model,
            other.compute,
            with_comm_scale(network, other),
            n,
            batch=other.batch,
            overlap=overlap,
            bucket_mb=other.bucket_mb,
            strategy=other.strategy,
        )
        return step.step_ms

    return leave_one_out(table, network, predict)


def _bench_table(bench: str | Path | pd.DataFrame) -> tuple[pd.DataFrame, list[str]]:
    """The bench table of a DataFrame or a results file (JSONL), and a note on the lines
    of the file that were skipped (:class:`ValueError` when none is usable)."""
    if isinstance(bench, pd.DataFrame):
        return bench, []
    path = Path(bench)
    records, problems = read_results(path)  # ResultsError (a ValueError): unreadable
    example = f", e.g. {problems[0]}" if problems else ""
    if not records:
        raise ResultsError(
            f"{path}: no gpuscale bench results in it ({len(problems)} line(s) skipped{example})"
        )
    notes = [f"{len(problems)} line(s) of {path.name} skipped{example}."] if problems else []
    return bench_table(records), notes


def _flag_lines(table: pd.DataFrame) -> str:
    return "; ".join(f"{kind} ({n} run(s), e.g. {why})" for kind, n, why in flag_summary(table))


def _with_flagged(table: pd.DataFrame, allow: bool) -> tuple[pd.DataFrame, str | None]:
    """The table, with flagged runs made usable when ``allow`` (and the warning)."""
    flagged = table["flagged"].fillna(False).astype(bool) & (table["status"] == "ok")
    if not allow or not flagged.any():
        return table, None
    warning = (
        f"WARNING: {int(flagged.sum())} flagged run(s) used (--allow-flagged): "
        f"{_flag_lines(table)}. The figures they give are less certain."
    )
    return table.assign(flagged=False), warning


def _flagged_help(table: pd.DataFrame) -> str:
    flagged = table["flagged"].fillna(False).astype(bool) & (table["status"] == "ok")
    if not (flagged & (table["accelerators"] == 1)).any():
        return ""  # allowing flagged runs would not give the N = 1 run that is missing
    return (
        f". {int(flagged.sum())} run(s) were left out as flagged: {_flag_lines(table)}. "
        "Re-run on a quieter machine (gpuscale bench --repeat 3 keeps the median), or "
        "allow flagged runs (--allow-flagged, or allow_flagged=True) to use them with a warning"
    )


def _bench_sources(cal: Any, overlap: float | None) -> list[str]:
    lines = [f"Calibrated on {cal.name}: " + "; ".join(cal.notes) + "."]
    if cal.overlap is not None:
        lines.append(f"Overlap {cal.overlap:.2f} measured by the bench (1 - exposed / comm).")
    elif overlap is not None:
        lines.append(f"Overlap {overlap:.2f}: not measured (no multi-device run).")
    else:
        lines.append("Overlap not measured: half the communication, never the last bucket.")
    if cal.comm_scale is not None:
        lines.append(
            f"Communication inside DDP measured at {number(cal.comm_scale)}x the network's "
            "prediction; applied to every prediction."
        )
    return lines

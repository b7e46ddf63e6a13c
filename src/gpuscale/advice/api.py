"""One call from what a user has to the advice: ``gpuscale.advise(...)``.

From numbers::

    gpuscale.advise(params=7e6, step_ms=20, batch=64, link="pcie-phb")

or from measurements (``gpuscale bench`` results, optionally a ``gpuscale collectives``
sweep and the detected topology)::

    gpuscale.advise(bench="results.jsonl", collectives="collectives.jsonl")

Returns an :class:`~gpuscale.advice.recommend.Advice`: the recommendation, a DataFrame of
predictions per device count (``.predictions``) and the explanation. The CLI and the
report call this same function.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gpuscale.advice.calibrate import (
    CalibrationError,
    calibrate,
    default_model,
    network_from_collectives,
    with_comm_scale,
)
from gpuscale.advice.energy import device_power
from gpuscale.advice.model import DEFAULT_BUCKET_MB, Compute, Link, ModelSpec, Network
from gpuscale.advice.recommend import Advice, AdviceInputs
from gpuscale.advice.recommend import advise as recommend
from gpuscale.analysis.convergence import ConvergenceModel, rcp_model_for
from gpuscale.formatting import number
from gpuscale.units import format_count, format_ms

if TYPE_CHECKING:
    import pandas as pd

    from gpuscale.interconnect.topology import Topology

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
        from gpuscale.tables.workloads import counts_samples

        fitted = rcp_model_for(workload, ruleset)
        if fitted is None:
            raise ValueError(
                f"no reference convergence points for {workload!r} in ruleset {ruleset} "
                "(mlperf-logging's rcp_checker)"
            )
        if counts_samples(workload):
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
    *,
    bench: str | Path | pd.DataFrame | None = None,
    model: str | None = None,
    params: float | None = None,
    step_ms: float | None = None,
    batch: int | None = None,
    flops_per_sample: float | None = None,
    link: str | Link | None = None,
    collectives: str | Path | None = None,
    topology: Topology | None = None,
    nodes: int = 1,
    gpus_per_node: int = 8,
    inter_node: str = "ib-ndr400",
    nics_per_node: int | None = None,
    max_devices: int | None = None,
    overlap: float | None = None,
    grad_bytes: int = 4,
    bucket_mb: float = DEFAULT_BUCKET_MB,
    strategy: str = "ddp",
    noise_scale: float | None = None,
    workload: str | None = None,
    ruleset: str = "5.0.0",
    samples: float = 1e7,
    global_batch: int | None = None,
    target_efficiency: float = 0.7,
    price: float | None = None,
    power_w: float | None = None,
    device_name: str | None = None,
    allow_flagged: bool = False,
) -> Advice:
    """The advice for one model (see the module docstring). ``bench``: a results file
    (path) or its bench table (DataFrame). Flagged bench runs (a busy host, noisy steps)
    are left out unless ``allow_flagged``, which uses them and says so in the sources.
    Raises ``ValueError`` (and its subclass ``CalibrationError``, which lists the flags
    when flagged runs were left out) with a message for the user on bad input."""
    for what, value in (
        ("batch", batch),
        ("global_batch", global_batch),
        ("nodes", nodes),
        ("gpus_per_node", gpus_per_node),
        ("max_devices", max_devices),
    ):
        if value is not None and (
            isinstance(value, bool) or not isinstance(value, int) or value < 1
        ):
            raise ValueError(f"{what} must be a positive whole number, not {value!r}")
    intra, link_note = choose_link(link, topology)
    network = Network(
        intra=intra,
        per_node=gpus_per_node if nodes > 1 else None,
        inter=Link.from_preset(inter_node) if nodes > 1 else None,
        nics_per_node=nics_per_node,
    )
    sources = [link_note]
    if collectives is not None:
        network = network_from_collectives(Path(collectives), network)
        ranks = sorted({c.ranks for c in network.curves})
        sources[0] = (
            f"Link: the curves measured in {Path(collectives).name} on "
            f"{', '.join(map(str, ranks))} ranks; other counts from "
            f"{number(network.intra.busbw_gbs)} GB/s bus bandwidth, "
            f"{number(network.intra.latency_us)} us latency read off them."
        )
    if nodes > 1:
        sources.append(
            f"Between nodes: {network.inter.name} x {nics_per_node or gpus_per_node} NICs per "
            "node, NCCL's ring over all ranks through the slowest level."
        )
    if bench is not None:
        bench_frame, skipped = _bench_table(bench)
        sources += skipped
        table, warning = _with_flagged(bench_frame, allow_flagged)
        try:
            chosen = model or default_model(table)
            cal = calibrate(table, chosen, network)
        except CalibrationError as exc:
            raise CalibrationError(f"{exc}{_flagged_help(table)}") from None
        if warning:
            sources.append(warning)
        network = with_comm_scale(network, cal)
        spec = replace(cal.model, grad_bytes_per_param=grad_bytes)
        name = cal.name
        compute, per_device = cal.compute, batch or cal.batch
        measured_overlap = cal.overlap if overlap is None else overlap
        if measured_overlap is None and cal.device == "cpu":
            measured_overlap = 0.0  # gloo reduces on the cores backward uses
        power = device_power(cal.device, cal.device_name, measured_w=cal.power_w, given_w=power_w)
        if power_w is None and cal.power_w_at:  # the job's power measured at each N
            power = replace(power, total_w_at=cal.power_w_at)
        sources += _bench_sources(cal, measured_overlap)
        noise = cal.noise
        min_batch = max(1, per_device // 8)  # the fitted fixed cost prices small batches
    else:
        if params is None or step_ms is None:
            raise ValueError("give bench results, or params and step_ms (and batch)")
        per_device = batch or 32
        spec = ModelSpec(
            params=float(params), flops_per_sample=flops_per_sample, grad_bytes_per_param=grad_bytes
        )
        if not step_ms > 0:
            raise ValueError(f"step time must be positive, got {step_ms} ms")
        # the whole measured step taken as work at the rate it implies
        tflops = per_device * spec.flops / (step_ms / 1e3) / 1e12
        compute = Compute(tflops=tflops)
        min_batch = per_device  # no fixed cost known: smaller batches would look free
        measured_overlap = overlap
        power = device_power(None, device_name, given_w=power_w)
        sources.append(
            f"Compute: {format_ms(step_ms)} per step of {per_device:,} samples "
            f"-> {number(tflops)} TFLOP/s at "
            + ("the FLOPs given." if flops_per_sample else "6 x parameters FLOPs per sample.")
        )
        noise = None
        name = f"a {format_count(spec.params)}-parameter model"
    convergence = convergence_for(
        noise_scale=noise_scale,
        workload=workload,
        ruleset=ruleset,
        samples=samples,
        reference_batch=per_device,
        measured=noise,
    )
    inputs = AdviceInputs(
        model=spec,
        compute=compute,
        network=network,
        batch=per_device,
        name=name,
        max_devices=max_devices or (nodes * gpus_per_node if nodes > 1 else gpus_per_node),
        overlap=measured_overlap,
        bucket_mb=bucket_mb,
        strategy=strategy,
        convergence=convergence,
        samples=samples,
        global_batch=global_batch,
        min_batch=min_batch,
        target_efficiency=target_efficiency,
        price_per_device_hour=price,
        power=power,
        sources=tuple(sources),
    )
    return recommend(inputs)


def _bench_table(bench: str | Path | pd.DataFrame) -> tuple[pd.DataFrame, list[str]]:
    """The bench table of a DataFrame or a results file (JSONL), and a note on the lines
    of the file that were skipped (:class:`ValueError` when none is usable)."""
    import pandas as pd

    if isinstance(bench, pd.DataFrame):
        return bench, []
    from gpuscale.bench.results import ResultsError, bench_table, read_results

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
    from gpuscale.bench.results import flag_summary

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
    if not flagged.any():
        return ""
    return (
        f". {int(flagged.sum())} run(s) were left out as flagged: {_flag_lines(table)}. "
        "Re-run on a quieter machine (gpuscale bench --repeat 3 keeps the median), or "
        "pass --allow-flagged to use them with a warning"
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

"""One call from what a user has to the advice: ``gpuscale.advise(...)``.

From numbers::

    gpuscale.advise(params=7e6, step_ms=2, batch=64, link="pcie-phb")

or from measurements (``gpuscale bench`` results, optionally a ``gpuscale collectives``
sweep and the detected topology)::

    gpuscale.advise(bench="results.jsonl", collectives="collectives.jsonl")
    gpuscale.advise(AdviceRequest(params=7e6, step_ms=2, batch=64, interconnect="nvlink4"))

Returns an :class:`~gpuscale.advice.recommend.Advice`: the recommendation, a DataFrame of
predictions per device count (``.predictions``) and the explanation. The CLI and the
report call this same function.
"""

from __future__ import annotations

import math
import os
from dataclasses import replace
from pathlib import Path
from typing import Any

import pandas as pd

from gpuscale.advice import assumptions, caveats
from gpuscale.advice.basis import DEFAULT_LINK, Basis, from_numbers
from gpuscale.advice.calibrate import network_from_collectives
from gpuscale.advice.from_bench import from_bench
from gpuscale.advice.model import Link, Network
from gpuscale.advice.plausible import mlperf_floor, topology_cap
from gpuscale.advice.recommend import Advice, AdviceInputs, recommend
from gpuscale.advice.request import AdviceRequest
from gpuscale.analysis.critical_batch import ConvergenceModel, rcp_model_for, rcp_rulesets_for
from gpuscale.interconnect.topology import Topology, read_topo_file
from gpuscale.quantities import number
from gpuscale.tables.workloads import Unit, convergence_unit, display_name


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
            raise ValueError(no_rcps(workload, ruleset))
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
            + (
                f"{number(measured.high)}"
                if math.isfinite(measured.high)
                else "unbounded (too few steps to bound it above)"
            )
            + "; early in training it is a lower bound"
        )
    else:
        return None
    e_min = samples / (1 + reference_batch / b_noise)
    return ConvergenceModel(e_min, b_noise, source)


def no_rcps(workload: str, ruleset: str) -> str:
    """Why a workload has no convergence model in ``ruleset``, and the rulesets that
    have its reference convergence points (the newest to give instead)."""
    others = rcp_rulesets_for(workload)
    where = (
        f"{display_name(workload)} has them in ruleset(s) {', '.join(others)}: give "
        f"--ruleset {others[-1]}"
        if others
        else "no ruleset of the installed mlperf-logging has them"
    )
    return (
        f"no reference convergence points for {display_name(workload)} ({workload!r}) in "
        f"ruleset {ruleset} (mlperf-logging's rcp_checker); {where}"
    )


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
    if bench is not None and not isinstance(bench, str | os.PathLike | pd.DataFrame):
        raise TypeError(f"bench must be a results file's path or a bench table, not {bench!r}")
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
        topology = read_topo_file(Path(req.topo), req.device_name)
    return _advise(req, frame, given, topology)


def _advise(
    req: AdviceRequest, frame: pd.DataFrame | None, given: str | Link | None, topology: Any
) -> Advice:
    basis = _network(req, given, topology)
    if req.bench is not None:
        from_bench(basis, req, frame)
    else:
        from_numbers(basis, req)
    convergence = convergence_for(
        noise_scale=req.noise_scale,
        workload=req.workload,
        ruleset=req.ruleset,
        samples=req.samples_to_train,
        reference_batch=basis.per_device,
        measured=basis.noise,
    )
    # the bench model whose runs measure a term (none for a model given by its numbers)
    bench_model = basis.name if req.bench is not None and req.params is None else None
    basis.assumed += [
        assumptions.convergence(
            convergence.source if convergence else None,
            model=bench_model,
            same_samples=basis.same_samples,
        ),
        assumptions.input_pipeline(),
    ]
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
        samples=req.samples_to_train,
        global_batch=req.global_batch,
        scaling=_scaling(req.scaling, convergence),
        fixed=basis.fixed,
        prior_range=basis.prior_range,
        assumptions=tuple(basis.assumed),
        min_batch=basis.min_batch,
        max_batch=basis.max_batch,
        target_efficiency=req.target_efficiency,
        price_per_device_hour=req.price,
        power=basis.power,
        sources=tuple(basis.sources),
        error=basis.error,
        warnings=tuple(basis.warnings),
        mlperf_floor=mlperf_floor(req.workload, basis.max_devices) if req.workload else (),
    )
    return caveats.qualify(
        recommend(inputs),
        req,
        noise=basis.noise,
        error=basis.error,
        measured=basis.measured,
        link_assumed=basis.link_assumed,
    )


def _scaling(asked: str, convergence: ConvergenceModel | None) -> str:
    """The request's scaling as the search takes it: ``auto`` keeps the global batch
    unless a convergence model prices larger ones (then the search decides)."""
    if asked == "auto":
        return "search" if convergence is not None else "strong"
    return asked


def _network(req: AdviceRequest, given: str | Link | None, topology: Any) -> Basis:
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
    return Basis(network=network, max_devices=max_devices, sources=sources, link_assumed=assumed)

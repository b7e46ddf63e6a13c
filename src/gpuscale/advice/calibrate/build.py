"""The calibration, built once from the request and the data: ``build(request, bench=,
topology=, collectives=, notes=)`` -> :class:`~gpuscale.advice.inputs.Calibrated`.

In a row, one module a step: the link (``link.network_basis``), the model from bench rows
(``bench_basis.from_bench``) or from numbers (``basis.from_numbers``), then here the inputs
at each end of every assumed term's range (a model given by numbers: its FLOPs per sample
and fixed cost; an assumed link: its slowest and fastest preset), the convergence model
(``convergence.resolved``) and the search's inputs; no step calls back into this module."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

import pandas as pd

from gpuscale.advice import assumptions
from gpuscale.advice.calibrate.basis import from_numbers
from gpuscale.advice.calibrate.bench_basis import from_bench
from gpuscale.advice.calibrate.link import network_basis
from gpuscale.advice.inputs import AdviceInputs, Calibrated
from gpuscale.advice.model.convergence import resolved
from gpuscale.advice.model.network import Link, MeasuredCurves
from gpuscale.advice.request import DEFAULT_RULESET, AdviceRequest
from gpuscale.analysis.critical_batch import rcps
from gpuscale.hardware.links import PRESETS
from gpuscale.interconnect.topology import Topology

# An assumed link's range: across CPU sockets (its slowest) to PCIe 4.0 P2P through a switch.
LINK_ENDS = (("low", "pcie-sys"), ("high", "pcie4-x16"))


def build(
    request: AdviceRequest,
    *,
    bench: pd.DataFrame | None = None,
    topology: Topology | None = None,
    collectives: MeasuredCurves | None = None,
    notes: Sequence[str] = (),
) -> Calibrated:
    """The calibration of ``request`` on ``bench`` (else on its numbers): the search's
    inputs and their ends. ``notes``: sentences on reading the data, said among the
    sources."""
    basis = network_basis(request, topology, collectives)
    basis = replace(basis, sources=(*basis.sources, *notes))
    # the model: calibrated on the bench's rows, else from the numbers given
    basis = from_bench(basis, request, bench) if bench is not None else from_numbers(basis, request)
    other = _other_device(collectives, bench)
    basis = replace(basis, warnings=(*basis.warnings, other)) if other else basis
    # an assumed link (none given, detected or measured): the network at each end of its
    # range (``LINK_ENDS``)
    link_ends = tuple(
        (
            "link",
            end,
            PRESETS[name].busbw_gbs,
            "GB/s",
            {"network": replace(basis.network, intra=Link.from_preset(name))},
        )
        for end, name in (LINK_ENDS if basis.link_assumed else ())
    )
    # the convergence: the workload's RCPs in the ruleset asked, then the model they, a
    # noise scale given or the bench's give, and MLPerf's least time to train at each count
    ruleset = request.ruleset or DEFAULT_RULESET
    found = rcps(request.workload, ruleset) if request.workload is not None else None
    converging = resolved(
        found,
        workload=request.workload,
        noise_scale=request.noise_scale,
        samples=request.samples_to_train,
        samples_given=request.samples is not None,
        reference_batch=basis.per_device * basis.accum,
        measured=basis.noise,
        max_devices=basis.max_devices,
    )
    # the search's inputs: the basis (its model and per-device batch, the fields it
    # carries unchanged), the request's choices and the convergence resolved; ``auto``
    # scaling keeps the global batch unless a convergence model prices larger ones
    convergence = converging.model
    scaling = request.scaling
    if scaling == "auto":
        scaling = "search" if convergence is not None else "strong"
    evidence, host = basis.evidence, basis.host_devices
    said = assumptions.convergence(
        convergence.source if convergence else None,
        model=basis.bench_model,
        same_samples=basis.same_samples,
        host_devices=host,
        thin=converging.thin,
        found=evidence,
        given=request.workload is not None or request.noise_scale is not None,
    )
    # every assumption's bench run said once, as the file advised on runs it
    assumed = assumptions.not_held((*basis.assumed, said), evidence, host)
    inputs = AdviceInputs(
        model=basis.spec,
        batch=basis.per_device,
        **{name: getattr(basis, name) for name in _CARRIED},
        bucket_mb=request.bucket_mb,
        strategy=request.strategy or basis.strategy or "ddp",  # default: as benched
        convergence=convergence,
        samples=request.samples_to_train,
        global_batch=request.global_batch,
        scaling=scaling,
        assumptions=(*assumed, assumptions.input_pipeline()),
        target_efficiency=request.target_efficiency,
        price_per_device_hour=request.price,
        mlperf_floor=converging.floor,
    )
    return Calibrated(
        ends=(*basis.ends, *link_ends),
        inputs=inputs,
        samples_used=converging.samples_used,
        noise_steps=converging.noise_steps,
        link_assumed=basis.link_assumed,
        from_bench=bench is not None,
        model_note=basis.model_note,
        chosen=basis.chosen,
    )


def _other_device(curves: MeasuredCurves | None, bench: pd.DataFrame | None) -> str:
    """A warning where the sweep timed CPU processes and the model is a GPU's (given by
    numbers, or benched on a GPU): a gloo curve is no GPU link's (a user walk: applied
    without a word)."""
    on_cpu = bench is not None and bool((bench["device"] == "cpu").all())
    if curves is None or curves.device != "cpu" or on_cpu:
        return ""
    return (
        f"WARNING: other hardware: {curves.source} timed CPU processes (gloo), not the GPUs "
        "the model runs on: its link is not theirs; sweep the GPU host (gpuscale "
        "collectives there) or give --interconnect"
    )


# What the search takes from the basis as it is: the same name and meaning in both.
_CARRIED = (
    *("compute", "network", "overlap", "fixed", "prior_range", "power"),  # the step's terms
    *("max_devices", "min_batch", "max_batch", "accum"),  # the bounds of the search
    *("name", "sources", "error", "warnings", "host_devices", "evidence", "one_device"),  # said
    "family",  # the family's break-even basis
    "implausible",  # an input cannot be true: no count above 1
    "measured",  # the bench's N > 1 runs: a count they disagree with rests on them
)

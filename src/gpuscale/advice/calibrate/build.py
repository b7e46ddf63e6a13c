"""The calibration, built once from the request and the data: ``build(request, bench=,
topology=, collectives=, notes=)`` -> :class:`~gpuscale.advice.inputs.Calibrated`.

In a row: the link (``network_basis``), the model from bench rows (``from_bench``) or
from numbers (``basis.from_numbers``), the convergence model, then the search's inputs
and the inputs at each end of every assumed term's range (a model given by numbers: its
FLOPs per sample and fixed cost; an assumed link: its slowest and fastest preset)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

import pandas as pd

from gpuscale.advice import assumptions
from gpuscale.advice.calibrate.basis import Basis, from_numbers
from gpuscale.advice.calibrate.from_bench import from_bench
from gpuscale.advice.calibrate.link import network_basis
from gpuscale.advice.explain.weak_first import again, not_held
from gpuscale.advice.inputs import AdviceInputs, Calibrated
from gpuscale.advice.model.convergence import convergence_for, thin_noise
from gpuscale.advice.model.hardware import mlperf_floor
from gpuscale.advice.model.network import Link, MeasuredCurves
from gpuscale.advice.model.priors import FEW_NOISE_STEPS
from gpuscale.advice.request import DEFAULT_RULESET, AdviceRequest
from gpuscale.advice.types import End
from gpuscale.analysis.critical_batch import ConvergenceModel
from gpuscale.bench.evidence import FIRM_STEPS
from gpuscale.hardware.links import PRESETS
from gpuscale.interconnect.topology import Topology


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
    # a noise scale from a few steps prices no batch (said, with what to measure)
    given = request.noise_scale is not None or request.workload is not None
    thin = "" if given else thin_noise(basis.noise, FEW_NOISE_STEPS)
    basis = replace(basis, noise=None) if thin else basis
    ruleset = request.ruleset or DEFAULT_RULESET
    convergence, samples_used = convergence_for(
        noise_scale=request.noise_scale,
        workload=request.workload,
        ruleset=ruleset,
        samples=request.samples_to_train,
        reference_batch=basis.per_device * basis.accum,
        measured=basis.noise,
        samples_given=request.samples is not None,
    )
    measured_noise = basis.noise is not None and request.noise_scale is None
    return Calibrated(
        ends=(*basis.ends, *_link_ends(basis)),
        inputs=_inputs(basis, request, convergence, thin),
        samples_used=samples_used,
        noise_steps=basis.noise.steps if measured_noise and not request.workload else None,
        link_assumed=basis.link_assumed,
        from_bench=bench is not None,
        model_note=basis.model_note,
        chosen=basis.chosen,
    )


# An assumed link's range: across CPU sockets (its slowest) to PCIe 4.0 P2P through a switch.
LINK_ENDS = (("low", "pcie-sys"), ("high", "pcie4-x16"))


def _link_ends(basis: Basis) -> tuple[End, ...]:
    """The network with an assumed link at each end of its range (none where the link
    was given, detected or measured)."""
    if not basis.link_assumed:
        return ()
    network = basis.network
    return tuple(
        (
            "link",
            end,
            PRESETS[name].busbw_gbs,
            "GB/s",
            {"network": replace(network, intra=Link.from_preset(name))},
        )
        for end, name in LINK_ENDS
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


def _inputs(
    basis: Basis, req: AdviceRequest, convergence: ConvergenceModel | None, thin: str = ""
) -> AdviceInputs:
    """The search's inputs: the basis (its model and per-device batch, and the fields
    it carries unchanged), the request's choices and the convergence (``thin``: why the
    bench's noise scale is not used)."""
    return AdviceInputs(
        model=basis.spec,
        batch=basis.per_device,
        **{name: getattr(basis, name) for name in _CARRIED},
        bucket_mb=req.bucket_mb,
        strategy=req.strategy or basis.strategy or "ddp",  # default: as benched
        convergence=convergence,
        samples=req.samples_to_train,
        global_batch=req.global_batch,
        scaling=_scaling(req.scaling, convergence),
        assumptions=(
            *not_held(
                (
                    *basis.assumed,
                    assumptions.convergence(
                        convergence.source if convergence else None,
                        model=basis.bench_model,
                        same_samples=basis.same_samples,
                        host_devices=basis.host_devices,
                        thin=thin,
                        steps=basis.evidence.steps_needed if basis.evidence else FIRM_STEPS,
                        again=again(basis.evidence, (1, 2), basis.host_devices),
                        given=req.workload is not None or req.noise_scale is not None,
                    ),
                ),
                basis.evidence,
                basis.host_devices,
            ),
            assumptions.input_pipeline(),
        ),
        target_efficiency=req.target_efficiency,
        price_per_device_hour=req.price,
        mlperf_floor=mlperf_floor(req.workload, basis.max_devices) if req.workload else (),
    )


def _scaling(asked: str, convergence: ConvergenceModel | None) -> str:
    """The request's scaling as the search takes it: ``auto`` keeps the global batch
    unless a convergence model prices larger ones (then the search decides)."""
    if asked == "auto":
        return "search" if convergence is not None else "strong"
    return asked

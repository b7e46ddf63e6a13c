"""The advice for one model: ``advise(request, bench=, topology=, collectives=)``.

Strictly typed: the request says what was asked, the other arguments are what was
measured, already read (``advice.load.load_advice_data`` reads the files a request names;
the CLI and the report call it first). The steps, each a pure function returning a frozen
:class:`~gpuscale.advice.calibrate.basis.Basis`: the network (``network_basis``), then the model
from bench rows (``from_bench``) or from numbers (``basis.from_numbers``), then the
convergence model, then the search (``recommend``) and what qualifies it (``caveats``).
``gpuscale.advise(...)`` (``advice/load.py``) is the same call by keywords for
Python users, reading the files itself.

Returns an :class:`~gpuscale.advice.search.recommend.Advice`: the recommendation, a DataFrame of
predictions per accelerator count (``.predictions``, schema ``tables.advice``) and the
explanation.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

import pandas as pd

from gpuscale.advice import assumptions
from gpuscale.advice.calibrate.basis import Basis, assumed_ends, from_numbers
from gpuscale.advice.calibrate.from_bench import from_bench
from gpuscale.advice.calibrate.link import network_basis
from gpuscale.advice.calibrate.rows import models_benched
from gpuscale.advice.conflicts import check_with_data
from gpuscale.advice.explain.weak_first import again, not_held
from gpuscale.advice.inputs import AdviceInputs
from gpuscale.advice.model.convergence import convergence_for, scales_from_samples, thin_noise
from gpuscale.advice.model.hardware import mlperf_floor
from gpuscale.advice.model.network import MeasuredCurves
from gpuscale.advice.request import DEFAULT_RULESET, ONE_BATCH_WITH_BENCH, AdviceRequest
from gpuscale.advice.search import caveats
from gpuscale.advice.search import decision as readings
from gpuscale.advice.search.decision import decide
from gpuscale.advice.search.derive import applied
from gpuscale.advice.search.recommend import Advice, predictions, recommend
from gpuscale.advice.types import Decision
from gpuscale.analysis.critical_batch import ConvergenceModel
from gpuscale.bench.evidence import FIRM_STEPS
from gpuscale.interconnect.topology import Topology
from gpuscale.tables.requests import NamedError, ref


def advise(
    request: AdviceRequest,
    *,
    bench: pd.DataFrame | None = None,
    topology: Topology | None = None,
    collectives: MeasuredCurves | None = None,
    notes: Sequence[str] = (),
) -> Advice:
    """The advice for ``request``: from ``bench`` (a bench table) when given, else from
    the request's numbers. ``topology`` chooses the link when none is given and caps the
    device count; ``collectives``: measured curves; ``notes``: sentences on reading them
    (lines skipped), said among the sources. Flagged bench runs are left out unless
    ``request.allow_flagged``. Raises ``ValueError`` (and its subclass
    ``CalibrationError``, which lists the flags when flagged runs were left out) with a
    message for the user."""
    _check_given(request, bench)
    basis = network_basis(request, topology, collectives)
    basis = replace(basis, sources=(*basis.sources, *notes))
    # the model: calibrated on the bench's rows, else from the numbers given
    basis = from_bench(basis, request, bench) if bench is not None else from_numbers(basis, request)
    other = _other_device(collectives, bench)
    basis = replace(basis, warnings=(*basis.warnings, other)) if other else basis
    # a noise scale from a few steps prices no batch (said, with what to measure)
    given = request.noise_scale is not None or request.workload is not None
    thin = "" if given else thin_noise(basis.noise, caveats.FEW_NOISE_STEPS)
    basis = replace(basis, noise=None) if thin else basis
    convergence = convergence_for(
        noise_scale=request.noise_scale,
        workload=request.workload,
        ruleset=request.ruleset or DEFAULT_RULESET,
        samples=request.samples_to_train,
        reference_batch=basis.per_device * basis.accum,
        measured=basis.noise,
    )
    scaled = scales_from_samples(request.workload, request.ruleset or DEFAULT_RULESET)
    if request.samples is not None and request.workload and not scaled:
        raise NamedError(
            f"{ref('samples')} with {ref('workload', request.workload)}: its reference "
            "convergence points count the samples to train themselves; give one or the other"
        )
    advice = caveats.qualify(
        recommend(_inputs(basis, request, convergence, thin)),
        request,
        noise=basis.noise,
        error=basis.error,
        measured=list(basis.measured),
        link_assumed=basis.link_assumed,
        from_bench=bench is not None,
    )
    advice = _read_ends(advice, basis, request, convergence, thin, bench is None)
    if not basis.model_note:
        chosen = "" if request.model or bench is None else models_benched(bench, basis.bench_model)
        if not chosen:
            return advice
        lines, at = advice.explanation, advice.decision_line  # said after the decision
        return replace(advice, explanation=[*lines[: at + 1], chosen, *lines[at + 1 :]])
    # another model than the largest advised on: said first, with why the others were not
    note = basis.model_note
    return replace(advice, caveats=(note, *advice.caveats), explanation=[note, *advice.explanation])


def _read_ends(
    advice: Advice,
    basis: Basis,
    request: AdviceRequest,
    convergence: ConvergenceModel | None,
    thin: str,
    by_numbers: bool,
) -> Advice:
    """``advice`` with the count at each end of every assumed term's range
    (``advice.readings``); where one moves it, the count is withheld and said first."""
    ends = [*(assumed_ends(basis, request) if by_numbers else []), *readings.link_ends(basis)]

    def decide_at(other: Basis) -> Decision:
        inputs = _inputs(other, request, convergence, thin)
        counts = {m.devices for m in inputs.measured}  # measured counts: as said
        frame = applied(predictions(inputs), advice.disagreements, counts)
        return decide(frame, inputs.target_efficiency, inputs.warnings, inputs.implausible)

    decision = readings.with_readings(advice.decision, readings.read(ends, decide_at))
    said = readings.withheld(decision)
    advice = replace(advice, decision=decision)
    if not said:
        return advice
    return replace(advice, caveats=(said, *advice.caveats), explanation=[said, *advice.explanation])


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


def _check_given(request: AdviceRequest, bench: pd.DataFrame | None) -> None:
    """Something to advise from: a bench table, or the model's numbers."""
    if not isinstance(request, AdviceRequest):
        raise TypeError(f"request must be an AdviceRequest, not {request!r}")
    if bench is not None and not isinstance(bench, pd.DataFrame):
        raise TypeError(f"bench must be a bench table (read it with advice.load), not {bench!r}")
    if bench is None and (request.params is None or request.step_ms is None):
        raise NamedError(
            f"nothing to advise from: give bench results (a file as {ref('bench')}), or the "
            f"model's parameters and step time ({ref('params')} and {ref('step_ms')})"
        )
    if bench is not None and isinstance(request.batch, tuple):
        raise NamedError(ONE_BATCH_WITH_BENCH)
    check_with_data(request, bench=bench is not None)  # options for the other kind


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

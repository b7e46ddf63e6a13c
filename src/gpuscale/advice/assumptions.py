"""The step's terms as assumptions (``assumed.Assumption``): the value used, where it came
from (measured, given, fitted or assumed) and the command or option that would measure it;
the words are the phrasebook's ``model`` rows (``assumed_*``). :func:`of_calibration`
says every term of a calibration, once, where ``calibrate.build`` ends."""

from __future__ import annotations

import shlex
from typing import TYPE_CHECKING

from gpuscale.advice.assumed import Assumption, BenchTerms, Quantity
from gpuscale.advice.model.priors import PRIORS, phrase, strategy_name
from gpuscale.advice.remeasure import not_held
from gpuscale.advice.types import BenchRun, Measure, Source, TermId, maybe
from gpuscale.bench.config import STRATEGIES as BENCHED
from gpuscale.bench.evidence import FIRM_STEPS
from gpuscale.bench.support import Support
from gpuscale.hardware.links import ASSUMED_CLASS_SAID, PRESETS
from gpuscale.quantities import filled, format_ms, joined

if TYPE_CHECKING:
    from gpuscale.advice.calibration import Calibration
    from gpuscale.advice.measured_runs import Measured
    from gpuscale.advice.model.convergence import Convergence
    from gpuscale.advice.model.fixed_cost import FixedCost
    from gpuscale.advice.request import AdviceRequest

PER_STEP = "ms per step"
SAME_SAMPLES = "factor: samples to converge at a larger global batch over those at the batch given"

STEP_SPREAD = "share of the step: the N = 1 steps' standard deviation over their mean"
NOISE_SCALE = "samples: the noise scale B_noise of E(B) = E_min (1 + B / B_noise)"


def of_calibration(
    cal: Calibration,
    req: AdviceRequest,
    converging: Convergence,
    benched: BenchTerms | None,
) -> tuple[Assumption, ...]:
    """Every term of ``cal`` (before the request's run is applied) as an assumption, in
    the order said: the machine's, the fixed cost, the bench's terms (``benched``; None: a
    model by numbers), the link class, the numbers' N > 1 terms, the convergence
    (``converging``), each measure as the bench file advised on runs it, the input
    pipeline last."""
    runs, model, host = cal.runs, cal.model, cal.runs.host_devices
    # the fixed cost's measure is the bench file's run already (``bench_basis``)
    fixed_cost = () if model.fixed is None else (fixed(model.fixed, benched is not None),)
    link_class = tuple(filter(None, [link_class_assumed(cal.machine.network.intra.name)]))
    if benched is not None:
        terms = (*_bench_terms(cal, req, benched), *link_class)
    else:  # what numbers leave unmeasured at N > 1: the overlap, the priors
        given = req.overlap is not None
        unmeasured = overlap(req.overlap, measured=False, given=given, model=None)
        terms = (*link_class, unmeasured, *cal.said.priors_said)
    model_of = converging.model
    said_convergence = convergence(
        getattr(model_of, "source", None),
        model=runs.own_model,
        same_samples=runs.same_samples,
        host_devices=host,
        thin=converging.thin,
        found=runs.evidence,
        given=req.workload is not None or req.noise_scale is not None,
        noise_scale=getattr(model_of, "b_noise", None),
    )
    machine = not_held(cal.said.assumptions, runs.evidence, host)
    assumed = not_held((*terms, said_convergence), runs.evidence, host)
    return (*machine, *fixed_cost, *assumed, input_pipeline())


def _bench_terms(
    cal: Calibration, req: AdviceRequest, benched: BenchTerms
) -> tuple[Assumption, ...]:
    """The overlap, the strategy taken, its own work and the wait, as the bench measured
    them or said as assumed (``calibration.as_asked``'s rule)."""
    compute, strategy, bench_model = cal.model.compute, cal.run.strategy, cal.runs.own_model
    host, name = cal.runs.host_devices, cal.model.name
    measured_on = cal.bench.bench_model if cal.bench is not None else ""
    return (
        overlap(
            cal.run.overlap,
            measured=benched.overlap_measured,
            given=req.overlap is not None,
            model=bench_model,
            unmeasured=_overlap_unmeasured(cal.runs.measured),
            host_devices=host,
        ),
        *strategy_taken(measured_on or name, strategy, req.strategy),
        own_work(
            benched.own_ms,
            strategy,
            req.strategy or strategy,
            bench_model,
            (PRIORS["ddp_work"].point, PRIORS["ddp_work"].said),
            of=measured_on if req.params is not None else "",
        ),
        wait(
            dict(compute.slowdown),
            bool(compute.jitter_ms),
            model=bench_model,
            spread=benched.spread,
            held=dict(benched.held),
            host_devices=host,
        ),
    )


def _overlap_unmeasured(measured: tuple[Measured, ...]) -> str:
    """Why the bench did not measure the overlap: the model's multi-device run is flagged,
    timed no communication, or there is none."""
    left_out = [m.devices for m in measured if m.flagged and not m.allowed]
    if left_out:
        return phrase("assumed_overlap_flagged", devices=left_out[0])
    if measured:
        return phrase("assumed_overlap_no_communication")
    return "no multi-device run"


def fixed(cost: FixedCost, from_bench: bool) -> Assumption:
    """The fixed per-step cost, with its range where it is uncertain (``from_bench``: to
    three digits, else as ``format_ms`` writes it)."""
    quantity = Quantity(cost.ms, PER_STEP)
    if cost.uncertain:
        quantity = Quantity(cost.ms, PER_STEP, cost.low_ms, cost.high_ms)
    value = format_ms(cost.ms, cost.high_ms)
    if cost.uncertain:
        value += f" ({format_ms(cost.low_ms, cost.high_ms)}-{format_ms(cost.high_ms)})"
    if from_bench:
        span = f" ({cost.low_ms:.3g}-{cost.high_ms:.3g} ms)" if cost.uncertain else ""
        value = f"{cost.ms:.3g} ms{span}"
    return Assumption(
        term=TermId.FIXED,
        value=value,
        quantity=quantity,
        source=cost.source,
        basis=cost.basis,
        measure=Measure() if cost.source == Source.MEASURED else cost.measure,
    )


def overlap(
    value: float | None,
    *,
    measured: bool,
    given: bool,
    model: str | None,
    unmeasured: str = "nothing measured it",
    host_devices: int | None = None,
) -> Assumption:
    """The share of communication backward hides (``unmeasured``: why nothing measured it);
    no value: the prior's, all but the last bucket."""
    shown, share = "0.5, all but the last bucket", PRIORS["overlap"].point
    run = Measure(bench=BenchRun(model, (1, 2), host_devices=host_devices))
    why = phrase("assumed_overlap_prior")
    if value is not None:
        shown, share, why = f"{value:.2f}", value, unmeasured
    if given:
        source, basis = Source.GIVEN, "--overlap"
    elif measured:
        source, basis = Source.MEASURED, phrase("assumed_overlap_measured")
    else:
        source, basis = Source.ASSUMED, why
    return Assumption(
        term=TermId.OVERLAP,
        value=shown,
        quantity=Quantity(share, "share of communication hidden behind backward"),
        source=source,
        basis=basis,
        measure=Measure() if measured or given else run,
    )


def link_class_assumed(link_name: str) -> Assumption | None:
    """The link class (``advice.model.network.CLASSES``) a preset is taken as where no
    published row was judged on it (an xGMI mesh: ``nvlink``), as an assumption: the class
    the step's fitted terms and the speedup's interval read; None for a preset whose name
    says its class, or a link of no preset (custom, measured)."""
    preset = PRESETS.get(link_name.split(" ")[0].lower())
    if preset is None or preset.assumed_class is None:
        return None
    said = ASSUMED_CLASS_SAID[preset.name]
    return Assumption(
        term=TermId.LINK_CLASS,
        value=f"{preset.assumed_class} for {preset.name}, the class the step's fitted terms "
        "and the speedup's 80% interval read",
        source=Source.ASSUMED,
        basis=f"{said['source']}; {said['note']}",
        measure=Measure(
            "`gpuscale collectives` on the node, then --collectives (a measured "
            "link takes no class: the terms every class shares)"
        ),
    )


def strategy_taken(model: str, benched: str, asked: str | None) -> tuple[Assumption, ...]:
    """The strategy predicted where none was asked for: the one ``model`` was benched with."""
    if asked is not None:
        return ()
    other = "ddp" if benched == "fsdp" else "fsdp"
    basis = phrase(
        "assumed_strategy", model=model, benched=benched, other=other, other_upper=other.upper()
    )
    said = Assumption(
        term=TermId.STRATEGY, value=benched.upper(), source=Source.MEASURED, basis=basis
    )
    return (said,)


def own_work(
    ms: float, benched: str, asked: str, model: str | None, prior: tuple[float, str], of: str = ""
) -> Assumption:
    """The strategy's own work per step (``ms``), by ``calibration.as_asked``'s rule:
    measured where the runs were the strategy predicted (fitted where carried from the
    family member ``of``), else DDP's ``prior``, FSDP's none."""
    spec = shlex.quote(model or "MODEL")
    command = Measure(phrase("assumed_bench_strategy", model=spec, asked=asked))
    if asked not in BENCHED:  # a command bench would refuse is no way to measure it
        command = Measure(phrase("assumed_no_bench_strategy", benched=joined(BENCHED, "or")))
    value, source, measure = f"{ms:.3g} ms per step", Source.ASSUMED, command
    quantity: Quantity | None = Quantity(ms, PER_STEP)
    if benched == asked == "ddp":
        source, measure = (Source.FITTED, command) if of else (Source.MEASURED, Measure())
        carried = phrase("assumed_own_carried", of=of) if of else ""
        basis = phrase("assumed_own_measured", carried=carried)
    elif asked == "ddp":
        basis = phrase("assumed_own_prior", point=prior[0], source=prior[1])
    elif benched == asked:
        value, source, measure = "in the fixed per-step cost", Source.MEASURED, Measure()
        quantity = None  # a part of the fixed cost, not a term of its own
        basis = phrase("assumed_own_fsdp")
    else:
        value, quantity = "0 ms per step", Quantity(0.0, PER_STEP)
        names = {"benched": strategy_name(benched), "asked": strategy_name(asked)}
        basis = phrase("assumed_own_other", **names)
    return Assumption(
        term=TermId.DDP,
        strategy=asked,
        value=value,
        quantity=quantity,
        source=source,
        basis=basis,
        measure=measure,
    )


def wait(
    slowdown: dict[int, float],
    jitter: bool,
    *,
    model: str | None,
    held: dict[int, float] | None = None,
    host_devices: int | None = None,
    spread: float | None = None,
) -> Assumption:
    """The wait for the slowest device (and contention) at N > 1; ``held``: the slowdowns
    as the step takes them (no lower than at fewer devices); ``spread``: the N = 1 steps'
    standard deviation as a share of the step, where ``jitter``."""
    measure = Measure(bench=BenchRun(model, (1, 2), host_devices=host_devices))
    if slowdown:
        held = held or {}

        def one(n: int, f: float) -> str:
            taken = held.get(n, f)
            more = phrase("assumed_wait_held", taken=taken) if taken > f + 5e-3 else ""
            return f"x{f:.2f} at N = {n}{more}"

        shown = ", ".join(one(n, f) for n, f in sorted(slowdown.items()))
        at = tuple(sorted(slowdown.items()))
        return Assumption(
            term=TermId.WAIT,
            value=f"no-sync step {shown}",
            quantity=Quantity(slowdown[max(slowdown)], phrase("assumed_wait_factor"), at=at),
            source=Source.MEASURED,
            basis=phrase("assumed_wait_measured"),
        )
    if jitter:
        return Assumption(
            term=TermId.WAIT,
            value="E[max of N] - mean of the N = 1 step times",
            quantity=maybe(Quantity, spread, STEP_SPREAD),
            source=Source.FITTED,
            basis=phrase("assumed_wait_fitted"),
            measure=measure,
        )
    return Assumption(  # nothing measured it: taken as 0 ms, said
        term=TermId.WAIT,
        value="0 ms",
        quantity=Quantity(0.0, PER_STEP),
        source=Source.ASSUMED,
        basis="nothing measured the steps' spread",
        measure=measure,
    )


def input_pipeline(rate: str | None = None, samples_per_s: float | None = None) -> Assumption:
    """The data loader: never modelled; ``rate`` says what it must deliver
    (``samples_per_s`` in all, at the largest count predicted)."""
    return Assumption(
        term=TermId.INPUT,
        value="never the bottleneck" + filled(" while it delivers {}", rate),
        quantity=maybe(Quantity, samples_per_s, "samples/s needed"),
        source=Source.ASSUMED,
        basis=phrase("assumed_input_basis"),
        measure=Measure(phrase("assumed_input_measure")),
    )


def convergence(
    source: str | None,
    *,
    model: str | None,
    same_samples: bool = False,
    host_devices: int | None = None,
    thin: str = "",
    found: Support | None = None,
    given: bool = False,
    noise_scale: float | None = None,
) -> Assumption:
    """The samples to converge at a larger global batch: the model's (``source``; ``given``
    as options, else measured), else assumed the same as at the batch given, with what
    would measure it (``same_samples``: the bench's N > 1 runs saw the same samples on
    every rank; ``thin``: why the bench's noise scale is not used; ``found``: what the
    runs advised on rest on, whose steps the rerun times)."""
    if source is not None:
        return Assumption(
            term=TermId.CONVERGENCE,
            value="E(B) = E_min (1 + B / B_noise)",
            quantity=maybe(Quantity, noise_scale, NOISE_SCALE),
            source=Source.GIVEN if given else Source.MEASURED,
            basis=source,
        )
    why = thin or phrase("assumed_convergence_none")
    before, after = "--noise-scale, --workload, or ", " (B_simple from the gradient norms)"
    if same_samples:
        why, before = phrase("assumed_convergence_same"), phrase("assumed_convergence_draw")
        after = ""
    steps = getattr(found, "steps_needed", FIRM_STEPS)  # what firms a thin noise scale
    more = f"--steps {steps}" if thin and steps else ""
    run = BenchRun(model, (1, 2), more=more, host_devices=host_devices)
    return Assumption(  # runs the file holds at 1 and 2: ``remeasure.as_run`` says them
        term=TermId.CONVERGENCE,
        value="the same as at the batch given",
        quantity=Quantity(1.0, SAME_SAMPLES),
        source=Source.ASSUMED,
        basis=phrase("assumed_convergence_basis", why=why),
        measure=Measure(before, run, after),
    )

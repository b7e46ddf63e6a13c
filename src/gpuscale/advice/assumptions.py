"""Every term of a calibration as an ``Assumption``, and the one measurement that settles a
count held back."""

from __future__ import annotations

import shlex
from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

from gpuscale.advice.calibration import Bench, Calibration, Machine
from gpuscale.advice.model.network import count_class, fitted_class
from gpuscale.advice.model.priors import (
    FEW_NOISE_STEPS,
    PRIORS,
    assumed_overlap,
    phrase,
    strategy_name,
)
from gpuscale.advice.records import Assumption, Quantity
from gpuscale.advice.types import BenchRun, Measure, Source, TermId, as_run, maybe
from gpuscale.bench.config import STRATEGIES as BENCHED
from gpuscale.bench.evidence import FIRM_STEPS
from gpuscale.hardware.links import ASSUMED_CLASS_SAID, PRESETS
from gpuscale.quantities import filled, format_ms, joined, number

if TYPE_CHECKING:
    from gpuscale.advice.model.convergence import Convergence
    from gpuscale.advice.request import AdviceRequest

# The kinds of term whose measurement settles a held-back count, most decisive first.
_SETTLES = (TermId.FIXED, TermId.WAIT, TermId.OVERLAP, TermId.DDP, TermId.CONVERGENCE)


def settle(
    assumed: Sequence[Assumption],
    *,
    strong: bool,
    held_back: int | None,
    refused: bool,
    host_devices: int | None = None,
    again: str = "",
) -> str | None:
    """The one measurement that settles a count ``held_back`` (its interval includes no
    gain) or ``refused``: the most decisive term not measured (the samples to converge not
    under ``strong`` scaling), else ``again``, else a run at 1 and the held-back count."""
    if held_back is None and not refused:
        return None
    by_kind = {a.term: a for a in assumed if a.source != Source.MEASURED and a.measure}
    if strong:
        by_kind.pop(TermId.CONVERGENCE, None)
    term = next((t for t in _SETTLES if t in by_kind), None)
    why = "an input is flagged IMPLAUSIBLE (above); " if refused else ""
    if term is None:
        if again:
            return f"{why}{again}"
        run = BenchRun(None, (1, held_back or 2), run="...", host_devices=host_devices)
        return f"{why}a measured run at the larger count: {run.command()}"
    found = by_kind[term]
    named = found.name if term == TermId.DDP else found.name[0].lower() + found.name[1:]
    # the command alone: how the bench reads it is the assumption's own, in --explain
    return f"{why}the {named} is {found.source}; measure it: {found.measure.short()}"


PER_STEP = "ms per step"
SAME_SAMPLES = "factor: samples to converge at a larger global batch over those at the batch given"


def of_calibration(
    cal: Calibration, req: AdviceRequest, converging: Convergence
) -> tuple[Assumption, ...]:
    """Every term of ``cal`` as an assumption, in the order said: the machine's, the fixed
    cost, the bench's terms (``cal.bench``; None: by numbers) or the numbers' N > 1 terms, the
    link class, the convergence, the input pipeline; each measure as the bench file runs it."""
    link_class = tuple(filter(None, [_link_class(cal.machine.network.intra.name)]))
    if cal.bench is not None:
        terms = (*_bench_terms(cal, req, cal.bench), *link_class)
    else:  # what numbers leave unmeasured at N > 1: the overlap, the priors
        given = req.overlap is not None
        overlap = _overlap(req.overlap, given, given, None, cal.machine)
        terms = (*link_class, overlap, *cal.said.priors_said)
    terms += (_convergence(cal, req, converging),)
    # the fixed cost, its range where uncertain; its measure is the bench file's run already
    fixed: tuple[Assumption, ...] = ()
    cost = cal.model.fixed
    if cost is not None:
        low, high = (cost.low_ms, cost.high_ms) if cost.uncertain else (None, None)
        span = f" ({format_ms(cost.low_ms, cost.high_ms)}-{format_ms(cost.high_ms)})"
        value = format_ms(cost.ms, cost.high_ms) + (span if cost.uncertain else "")
        measured = cost.source == Source.MEASURED
        fixed = (
            Assumption(
                term=TermId.FIXED,
                value=value,
                quantity=Quantity(cost.ms, PER_STEP, low, high),
                source=cost.source,
                basis=cost.basis,
                measure=Measure() if measured else cost.measure,
            ),
        )
    machine, found, host = len(cal.said.assumptions), cal.runs.evidence, cal.runs.host_devices
    # the convergence's run: at counts the file holds, whatever model or steps it names
    said = [
        replace(a, measure=as_run(a.measure, found, host, a.term == TermId.CONVERGENCE))
        for a in (*cal.said.assumptions, *terms)
    ]
    return (*said[:machine], *fixed, *said[machine:], input_pipeline())


def _bench_terms(cal: Calibration, req: AdviceRequest, benched: Bench) -> tuple[Assumption, ...]:
    """The overlap, the strategy's own work and the wait, as the bench measured them or
    assumed."""
    model, host = cal.runs.own_model, cal.runs.host_devices
    given = req.overlap is not None
    measured = given or benched.overlap_measured
    overlap = _overlap(cal.run.overlap, given, measured, model, cal.machine, host)
    if not given and not benched.overlap_measured and cal.run.overlap is not None:
        # why nothing measured it: the multi-device run flagged, no communication, none
        left_out = [m.devices for m in cal.runs.measured if m.flagged and not m.allowed]
        why = "no multi-device run"
        if left_out:
            why = phrase("assumed_overlap_flagged", devices=left_out[0])
        elif cal.runs.measured:
            why = phrase("assumed_overlap_no_communication")
        overlap = replace(overlap, basis=why)
    return (overlap, _own_work(cal, req, benched.own_ms), _wait(cal, benched))


def _overlap(
    value: float | None,
    given: bool,
    measured: bool,
    model: str | None,
    machine: Machine,
    host: int | None = None,
) -> Assumption:
    """The share of communication backward hides: ``value``, else the prior's for the link
    classes of the machine's network (within a node; across nodes where it has them; each
    count's in ``at`` where they differ), all but the last bucket; ``measured`` by the bench
    or ``given`` as an option."""
    network = machine.network
    within = assumed_overlap(count_class(network, 1))
    across = assumed_overlap(fitted_class(network))  # multinode where it has nodes
    at = tuple((n, assumed_overlap(count_class(network, n))) for n in machine.device_counts)
    said = f"{within:g}" if within == across else f"{within:g} within a node, {across:g} across"
    source, basis = Source.ASSUMED, phrase("assumed_overlap_prior")
    if given:
        source, basis = Source.GIVEN, "--overlap"
    elif measured:
        source, basis = Source.MEASURED, phrase("assumed_overlap_measured")
    run = Measure(bench=BenchRun(model, (1, 2), host_devices=host))
    return Assumption(
        term=TermId.OVERLAP,
        value=f"{said}, all but the last bucket" if value is None else f"{value:.2f}",
        quantity=Quantity(
            across if value is None else value,
            "share of communication hidden behind backward",
            at=at if value is None and within != across else (),
        ),
        source=source,
        basis=basis,
        measure=Measure() if measured else run,
    )


def _link_class(link_name: str) -> Assumption | None:
    """The link class a preset is taken as where no published row was judged on it (an xGMI
    mesh: ``nvlink``); None for a preset whose name says its class, or no preset."""
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


def _own_work(cal: Calibration, req: AdviceRequest, ms: float) -> Assumption:
    """The strategy's own work per step (``ms``): measured where the runs were the strategy
    predicted (fitted where carried from the family member ``of`` of a --params model;
    FSDP's inside the fixed cost), else DDP's prior, FSDP's none."""
    benched, model = cal.run.strategy, cal.runs.own_model
    asked = req.strategy or benched
    of = cal.bench.bench_model if cal.bench is not None and req.params is not None else ""
    command = Measure(
        phrase("assumed_bench_strategy", model=shlex.quote(model or "MODEL"), asked=asked)
    )
    if asked not in BENCHED:  # a command bench would refuse is no way to measure it
        command = Measure(phrase("assumed_no_bench_strategy", benched=joined(BENCHED, "or")))
    value, source, measure = f"{ms:.3g} ms per step", Source.ASSUMED, command
    quantity: Quantity | None = Quantity(ms, PER_STEP)
    if benched == asked == "ddp":
        source, measure = (Source.FITTED, command) if of else (Source.MEASURED, Measure())
        carried = phrase("assumed_own_carried", of=of) if of else ""
        basis = phrase("assumed_own_measured", carried=carried)
    elif asked == "ddp":
        prior = PRIORS["ddp_work"]
        basis = phrase("assumed_own_prior", point=prior.point, source=prior.said)
    elif benched == asked:  # a part of the fixed cost, not a term of its own: its ms
        value, source, measure = "in the fixed per-step cost", Source.MEASURED, Measure()
        quantity = Quantity(cal.runs.one_fsdp_own_ms, PER_STEP)
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


def for_strategy(found: tuple[Assumption, ...], strategy: str) -> tuple[Assumption, ...]:
    """``found`` with DDP's own work as ``strategy`` prices it: a sharded strategy's none."""
    if strategy == "ddp":
        return found
    sharded = Assumption(
        term=TermId.DDP,
        strategy=strategy,
        value="0 ms per step",
        quantity=Quantity(0.0, PER_STEP),
        source=Source.ASSUMED,
        basis=phrase("assumed_own_sharded", asked=strategy_name(strategy)),
    )
    return tuple(sharded if a.term == TermId.DDP and a.strategy == "ddp" else a for a in found)


def _wait(cal: Calibration, benched: Bench) -> Assumption:
    """The wait for the slowest device at N > 1: the no-sync step's slowdowns measured (no
    lower than at fewer devices), else fitted to the N = 1 steps' spread, else 0 ms."""
    compute, held = cal.model.compute, dict(benched.held)
    slowdown = dict(compute.slowdown)
    value, source, basis = "0 ms", Source.ASSUMED, "nothing measured the steps' spread"
    quantity: Quantity | None = Quantity(0.0, PER_STEP)
    measure = Measure(
        bench=BenchRun(cal.runs.own_model, (1, 2), host_devices=cal.runs.host_devices)
    )
    if slowdown:

        def one(n: int, f: float) -> str:
            taken = held.get(n, f)
            more = phrase("assumed_wait_held", taken=taken) if taken > f + 5e-3 else ""
            return f"x{f:.2f} at N = {n}{more}"

        at = tuple(sorted(slowdown.items()))
        value = "no-sync step " + ", ".join(one(n, f) for n, f in at)
        quantity = Quantity(slowdown[max(slowdown)], phrase("assumed_wait_factor"), at=at)
        source, basis, measure = Source.MEASURED, phrase("assumed_wait_measured"), Measure()
    elif compute.jitter_ms:
        spread = "share of the step: the N = 1 steps' standard deviation over their mean"
        value = "E[max of N] - mean of the N = 1 step times"
        quantity = maybe(Quantity, benched.spread, spread)
        source, basis = Source.FITTED, phrase("assumed_wait_fitted")
    return Assumption(
        term=TermId.WAIT,
        value=value,
        quantity=quantity,
        source=source,
        basis=basis,
        measure=measure,
    )


def input_pipeline(rate: str | None = None, samples_per_s: float | None = None) -> Assumption:
    """The data loader: never modelled; ``rate`` says what it must deliver."""
    return Assumption(
        term=TermId.INPUT,
        value="never the bottleneck" + filled(" while it delivers {}", rate),
        quantity=maybe(Quantity, samples_per_s, "samples/s needed"),
        source=Source.ASSUMED,
        basis=phrase("assumed_input_basis"),
        measure=Measure(phrase("assumed_input_measure")),
    )


def _convergence(cal: Calibration, req: AdviceRequest, converging: Convergence) -> Assumption:
    """The samples to converge at a larger global batch: the model's (given or measured),
    else the same as at the batch given, with what would measure it."""
    model = converging.model
    if model is not None:
        given = req.workload is not None or req.noise_scale is not None
        noise_scale = "samples: the noise scale B_noise of E(B) = E_min (1 + B / B_noise)"
        return Assumption(
            term=TermId.CONVERGENCE,
            value="E(B) = E_min (1 + B / B_noise)",
            quantity=maybe(Quantity, model.b_noise, noise_scale),
            source=Source.GIVEN if given else Source.MEASURED,
            basis=model.source,
        )
    thin, found = converging.thin, cal.runs.evidence
    why = phrase("assumed_convergence_none")
    if thin is not None:  # why the bench's noise scale prices no larger batch
        b_simple = number(thin.b_simple)
        why = phrase("thin_noise", b_simple=b_simple, steps=thin.steps, fewest=FEW_NOISE_STEPS)
    before, after = "--noise-scale, --workload, or ", " (B_simple from the gradient norms)"
    if cal.runs.same_samples:
        why, before = phrase("assumed_convergence_same"), phrase("assumed_convergence_draw")
        after = ""
    steps = found.steps_needed if found is not None else FIRM_STEPS  # what firms a thin one
    more = f"--steps {steps}" if thin is not None and steps else ""
    run = BenchRun(cal.runs.own_model, (1, 2), more=more, host_devices=cal.runs.host_devices)
    return Assumption(
        term=TermId.CONVERGENCE,
        value="the same as at the batch given",
        quantity=Quantity(1.0, SAME_SAMPLES),
        source=Source.ASSUMED,
        basis=phrase("assumed_convergence_basis", why=why),
        measure=Measure(before, run, after),
    )

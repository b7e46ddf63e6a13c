"""Every term of a calibration as an ``Assumption``, each bench run that measures one said as
the file holds it (``remeasure.as_run``), and the one measurement that settles a count held
back."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

from gpuscale.advice.calibration import Bench, Calibration
from gpuscale.advice.model.hardware import PowerKind
from gpuscale.advice.model.network import CLASSES, current
from gpuscale.advice.model.priors import FEW_NOISE_STEPS, PRIORS, assumed_overlap
from gpuscale.advice.records import Assumption, Quantity
from gpuscale.advice.remeasure import as_run
from gpuscale.advice.types import BenchRun, Finding, Measure, Source, TermId
from gpuscale.advice.types import FindingKind as K
from gpuscale.bench.config import STRATEGIES as BENCHED
from gpuscale.bench.evidence import FIRM_STEPS
from gpuscale.hardware.links import ASSUMED_CLASS_SAID, PRESETS

if TYPE_CHECKING:
    from gpuscale.advice.model.convergence import Convergence

# The kinds of term whose measurement settles a held-back count, most decisive first.
_SETTLES = (TermId.FIXED, TermId.WAIT, TermId.OVERLAP, TermId.DDP, TermId.CONVERGENCE)


def settle(
    assumed: Sequence[Assumption],
    *,
    strong: bool,
    held_back: int | None,
    refused: bool,
    host_devices: int | None = None,
    again: Finding | None = None,
) -> Finding | None:
    """The one measurement that settles a count ``held_back`` (its interval includes no
    gain) or ``refused``: the most decisive term not measured (the samples to converge not
    under ``strong`` scaling), else ``again``, else a run at 1 and the held-back count."""
    if held_back is None and not refused:
        return None
    by_kind = {a.term: a for a in assumed if a.source != Source.MEASURED and a.measure}
    if strong:
        by_kind.pop(TermId.CONVERGENCE, None)
    term = next((t for t in _SETTLES if t in by_kind), None)
    if term is None:
        run = BenchRun(None, (1, held_back or 2), run="...", host_devices=host_devices)
        case, command = ("run", run.command()) if again is None else ("again", again)
        return Finding.of(K.SETTLE_BY, refused=refused, case=case, command=command)
    found = by_kind[term]
    return Finding.of(
        K.SETTLE_BY,
        refused=refused,
        case="term",
        term=term.value,
        name=found.name,
        source=found.source.value,
        # the command alone: how the bench reads it is the assumption's own, in --explain
        measure=found.measure.parts(short=True),
    )


PER_STEP = "ms per step"
SAME_SAMPLES = "factor: samples to converge at a larger global batch over those at the batch given"
SLOWDOWN = "factor: the no-sync step at N over N = 1, at the largest N measured"
# the overlap's basis where the prior gives it (``explain`` names the strategy's pipeline)
OVERLAP_PRIOR = Finding.of(K.OVERLAP_BASIS, case="prior")


def of_calibration(cal: Calibration, converging: Convergence) -> tuple[Assumption, ...]:
    """Every term of ``cal`` as an assumption, in the order said: the machine's, the fixed
    cost, the bench's terms (``cal.bench``; None: by numbers) or the numbers' N > 1 terms, the
    link class, the convergence, the input pipeline; each measure as the bench file runs it
    (the fixed cost's is the bench file's run already)."""
    link_class = _link_class(cal.machine.network.intra.name)
    if cal.bench is not None:
        own = _own_work(cal, cal.bench)
        terms = (_overlap(cal), own, _wait(cal, cal.bench), link_class)
    else:  # what numbers leave unmeasured at N > 1: the overlap, the priors
        terms = (link_class, _overlap(cal), *cal.said.priors_said)
    convergence, fixed, pipeline = _convergence(cal, converging), _fixed(cal), input_pipeline()
    power = _power(cal)
    # on nodes given every count takes the multi-node class's terms: none reads the link's
    read = cal.machine.one_device_class != "multinode"
    kept = [a for a in (*terms, convergence) if a and (read or a.term != TermId.LINK_CLASS)]
    found, host = cal.runs.evidence, cal.runs.host_devices
    # the convergence's run: at counts the file holds, whatever model or steps it names
    said = [
        replace(a, measure=as_run(a.measure, found, host, a.term == TermId.CONVERGENCE))
        for a in kept
    ]
    machine = [replace(a, measure=as_run(a.measure, found, host)) for a in cal.said.assumptions]
    return (*machine, *power, *fixed, *said, pipeline)


def _power(cal: Calibration) -> tuple[Assumption, ...]:
    """The power per device where it is the board power of the device assumed, none named
    (``Machine.assumed_device``, the one the memory check reads); () where it is not."""
    power, device = cal.machine.power, cal.machine.assumed_device
    if power.kind is not PowerKind.ASSUMED or power.watts is None or device is None:
        return ()
    form = getattr(device.part, "form_factor", None)
    assumed = Assumption(
        term=TermId.POWER,
        value=Finding.of(K.ASSUMED_POWER, watts=power.watts, device=power.device),
        quantity=Quantity(power.watts, "W per device"),
        source=Source.ASSUMED,
        basis=Finding.of(K.POWER_BASIS, device=power.device, form=form),
        measure=Measure(Finding.of(K.MEASURE_POWER)),
    )
    return (assumed,)


def _fixed(cal: Calibration) -> tuple[Assumption, ...]:
    """The fixed cost (none where the step is not split), its range where uncertain."""
    cost = cal.model.fixed
    if cost is None:
        return ()
    low, high = (cost.low_ms, cost.high_ms) if cost.uncertain else (None, None)
    ends = {"low_ms": cost.low_ms, "high_ms": cost.high_ms, "uncertain": cost.uncertain}
    assumed = Assumption(
        term=TermId.FIXED,
        value=Finding.of(K.ASSUMED_FIXED, ms=cost.ms, **ends),
        quantity=Quantity(cost.ms, PER_STEP, low, high),
        source=cost.source,
        basis=cost.basis,
        measure=Measure() if cost.source == Source.MEASURED else cost.measure,
    )
    return (assumed,)


def _overlap(cal: Calibration) -> Assumption:
    """The share of communication backward hides: ``cal.run.overlap``, else the prior's for
    the link classes of the machine's network (within a node; across nodes where it has them;
    each count's in ``at`` where they differ), all but the last bucket; given as an option or
    measured by the bench, else why nothing measured it (the multi-device run flagged, no
    communication, none)."""
    value = cal.run.overlap
    given = cal.asked.overlap_given
    measured = given or (cal.bench is not None and cal.bench.overlap_measured)
    classes = dict(cal.machine.count_classes)  # each count's link class, as built
    within = assumed_overlap(classes.get(1))  # the node's ring's (one device: the node's link)
    # multinode where it has nodes, at most the in-node leg's (``network.count_overlap``)
    held = {c: assumed_overlap(c) for c in (*classes.values(), cal.machine.network_class)}
    held["multinode"] = min(assumed_overlap("multinode"), within)
    across = held[cal.machine.network_class]
    at = tuple((n, held[c]) for n, c in cal.machine.count_classes)
    # counts of one node on another ring than the whole node's (a topology's first GPUs)
    rings = tuple((n, o) for n, o in at if n > 1 and o != within and classes[n] != "multinode")
    case = "given" if value is not None else ("same" if within == across else "apart")
    case = "rings" if case == "same" and rings else case
    said = Finding.of(
        K.ASSUMED_OVERLAP,
        case=case,
        overlap=value,
        within=within,
        across=across,
        ring_counts=tuple(n for n, _ in rings),
        ring_overlaps=tuple(o for _, o in rings),
        bucket_mb=cal.run.bucket_mb,
    )
    source, basis = Source.ASSUMED, OVERLAP_PRIOR
    if given:
        source, basis = Source.GIVEN, Finding.of(K.GIVEN_AS, field="overlap")
    elif measured:
        source, basis = Source.MEASURED, Finding.of(K.OVERLAP_BASIS, case="measured")
    elif value is not None:  # the bench's value no multi-device run measured
        left_out = [m.devices for m in cal.runs.measured if m.flagged and not m.allowed]
        why = "flagged" if left_out else ("quiet" if cal.runs.measured else "no_run")
        devices = left_out[0] if left_out else None
        basis = Finding.of(K.OVERLAP_BASIS, case=why, devices=devices)
    return Assumption(
        term=TermId.OVERLAP,
        value=said,
        quantity=Quantity(
            across if value is None else value,
            "share of communication hidden behind backward",
            at=at if value is None and any(o != across for _, o in at) else (),
        ),
        source=source,
        basis=basis,
        measure=Measure() if measured else Measure(bench=_at_two(cal)),
    )


CONTENTION_UNIT = "share of overlapped communication lost"


def _link_class(link_name: str) -> Assumption | None:
    """The link class a preset is taken as where no published row was judged on it (an xGMI
    mesh: ``nvlink``); None for a preset whose name says its class, or no preset."""
    preset = PRESETS.get(link_name.split(" ")[0].lower())
    if preset is None or preset.assumed_class is None:
        return None
    said = ASSUMED_CLASS_SAID[preset.name]
    # within a node the classes differ by the contention (the rank spread is every class's)
    kappa = {c: current().contention(c) for c in CLASSES if c != "multinode"}
    ends = (min(kappa.values()), max(kappa.values()))
    return Assumption(
        term=TermId.LINK_CLASS,
        value=Finding.of(K.ASSUMED_LINK_CLASS, link_class=preset.assumed_class, preset=preset.name),
        quantity=Quantity(kappa[preset.assumed_class], CONTENTION_UNIT, *ends),
        source=Source.ASSUMED,
        basis=Finding.of(K.LINK_CLASS_BASIS, source=said["source"], note=said["note"]),
        measure=Measure(Finding.of(K.MEASURE_LINK_CLASS)),
    )


def _own_work(cal: Calibration, bench: Bench) -> Assumption:
    """The strategy's own work per step (``bench.own_ms``): measured where the runs were the
    strategy predicted (fitted where carried from the family member ``of`` of a --params
    model; FSDP's inside the fixed cost), else DDP's prior, another strategy's none."""
    benched, model = cal.run.strategy, cal.runs.own_model
    asked = cal.asked.strategy or benched
    of = bench.bench_model if cal.asked.params_given else ""
    # a command bench would refuse is no way to measure it: the strategies it runs instead
    runs = {"runs": asked in BENCHED, "benched": BENCHED}
    command = Measure(Finding.of(K.MEASURE_OWN_WORK, model=model or "MODEL", asked=asked, **runs))
    if asked not in ("ddp", benched):
        basis = Finding.of(K.OWN_WORK_BASIS, case="other", benched=benched, asked=asked)
        return replace(_no_own_work(asked, basis), measure=command)
    value = Finding.of(K.ASSUMED_OWN_WORK, case="ms", ms=bench.own_ms)
    quantity, source, measure = Quantity(bench.own_ms, PER_STEP), Source.ASSUMED, command
    if benched == asked == "ddp":
        source, measure = (Source.FITTED, command) if of else (Source.MEASURED, Measure())
        basis = Finding.of(K.OWN_WORK_BASIS, case="measured", of=of or None)
    elif asked == "ddp":
        prior = PRIORS["ddp_work"]
        basis = Finding.of(K.OWN_WORK_BASIS, case="prior", point=prior.point, source=prior.said)
    else:  # FSDP's as benched: a part of the fixed cost, not a term of its own: its ms
        value = Finding.of(K.ASSUMED_OWN_WORK, case="fixed")
        source, measure = Source.MEASURED, Measure()
        quantity = Quantity(cal.runs.one_fsdp_own_ms, PER_STEP)
        basis = Finding.of(K.OWN_WORK_BASIS, case="fsdp")
    return Assumption(
        term=TermId.DDP,
        strategy=asked,
        value=value,
        quantity=quantity,
        source=source,
        basis=basis,
        measure=measure,
    )


def _no_own_work(strategy: str, basis: Finding) -> Assumption:
    """``strategy``'s own work priced at 0 ms (a sharded one's, or one no run measured)."""
    return Assumption(
        term=TermId.DDP,
        strategy=strategy,
        value=Finding.of(K.ASSUMED_OWN_WORK, case="ms", ms=0.0),
        quantity=Quantity(0.0, PER_STEP),
        source=Source.ASSUMED,
        basis=basis,
    )


def for_strategy(found: tuple[Assumption, ...], strategy: str) -> tuple[Assumption, ...]:
    """``found`` with DDP's own work as ``strategy`` prices it: a sharded strategy's none."""
    if strategy == "ddp":
        return found
    sharded = _no_own_work(strategy, Finding.of(K.OWN_WORK_BASIS, case="sharded", asked=strategy))
    return tuple(sharded if a.term == TermId.DDP and a.strategy == "ddp" else a for a in found)


def _wait(cal: Calibration, benched: Bench) -> Assumption:
    """The wait for the slowest device at N > 1: the no-sync step's slowdowns measured (no
    lower than at fewer devices), else fitted to the N = 1 steps' spread, else 0 ms."""
    compute, slowdown = cal.model.compute, dict(cal.model.compute.slowdown)
    case, source, at_counts = "none", Source.ASSUMED, ()
    quantity: Quantity | None = Quantity(0.0, PER_STEP)
    measure = Measure(bench=_at_two(cal))
    if slowdown:
        at = tuple(sorted(slowdown.items()))
        # a count's slowdown held at fewer devices' where that is larger
        above = {n: f for n, f in benched.held if n in slowdown and f > slowdown[n] + 5e-3}
        at_counts = tuple(
            Finding.of(K.WAIT_AT, devices=n, slowdown=f, held=above.get(n)) for n, f in at
        )
        quantity = Quantity(slowdown[max(slowdown)], SLOWDOWN, at=at)
        case, source, measure = "measured", Source.MEASURED, Measure()
    elif compute.jitter_ms:
        spread = "share of the step: the N = 1 steps' standard deviation over their mean"
        quantity = None if benched.spread is None else Quantity(benched.spread, spread)
        case, source = "fitted", Source.FITTED
    return Assumption(
        term=TermId.WAIT,
        value=Finding.of(K.ASSUMED_WAIT, case=case, at=at_counts),
        quantity=quantity,
        source=source,
        basis=Finding.of(K.WAIT_BASIS, case=case),
        measure=measure,
    )


def input_pipeline(rate: str | None = None, samples_per_s: float | None = None) -> Assumption:
    """The data loader: never modelled; ``rate`` says what it must deliver."""
    return Assumption(
        term=TermId.INPUT,
        value=Finding.of(K.ASSUMED_INPUT, rate=rate),
        quantity=None if samples_per_s is None else Quantity(samples_per_s, "samples/s needed"),
        source=Source.ASSUMED,
        basis=Finding.of(K.INPUT_BASIS),
        measure=Measure(Finding.of(K.MEASURE_INPUT)),
    )


def _convergence(cal: Calibration, converging: Convergence) -> Assumption:
    """The samples to converge at a larger global batch: the model's (given or measured),
    else the same as at the batch given, with what would measure it."""
    model = converging.model
    if model is not None:
        given = cal.asked.convergence_given
        noise_scale = "samples: the noise scale B_noise of E(B) = E_min (1 + B / B_noise)"
        return Assumption(
            term=TermId.CONVERGENCE,
            value=Finding.of(K.ASSUMED_CONVERGENCE, case="model"),
            quantity=Quantity(model.b_noise, noise_scale, e_min=model.e_min),
            source=Source.GIVEN if given else Source.MEASURED,
            basis=model.source,
        )
    thin, found, same = converging.thin, cal.runs.evidence, cal.runs.same_samples
    # why the bench's noise scale prices no larger batch
    why = "same" if same else ("none" if thin is None else "thin")
    noise = {} if thin is None else {"b_simple": thin.b_simple, "steps": thin.steps}
    steps = found.steps_needed if found is not None else FIRM_STEPS  # what firms a thin one
    more = f"--steps {steps}" if thin is not None and steps else ""
    before = Finding.of(K.MEASURE_CONVERGENCE, same_samples=same)
    after = "" if same else Finding.of(K.MEASURE_GRADIENT_NORMS)
    return Assumption(
        term=TermId.CONVERGENCE,
        value=Finding.of(K.ASSUMED_CONVERGENCE, case="same"),
        quantity=Quantity(1.0, SAME_SAMPLES),
        source=Source.ASSUMED,
        basis=Finding.of(K.CONVERGENCE_BASIS, case=why, fewest=FEW_NOISE_STEPS, **noise),
        measure=Measure(before, _at_two(cal, more), after),
    )


def _at_two(cal: Calibration, more: str = "") -> BenchRun:
    """The bench run at 1 and 2 devices that measures a term (``more``: its options)."""
    return BenchRun(cal.runs.own_model, (1, 2), more=more, host_devices=cal.runs.host_devices)

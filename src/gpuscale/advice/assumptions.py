"""What the advice assumed, said: every term of the step and of convergence it did not
measure, with the value it used, where that came from and the one command or option that
would measure it.

The terms: the fixed per-step cost (``advice/model/fixed_cost.py``), the share of
communication backward hides (overlap), DDP's own work per step, the wait for the slowest
device, the samples to converge at a larger global batch, and the input pipeline (never
modelled: the bench makes its data on the device). ``source`` is ``measured`` (by the
bench, from these results), ``entered`` (given as an option), ``fitted`` (from other
models' measurements) or ``assumed`` (a default, a prior).
"""

from __future__ import annotations

import shlex
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from gpuscale.advice.model.parameters import PRIORS
from gpuscale.advice.types import BenchRun, Measure, Source, TermId, words
from gpuscale.bench.evidence import FIRM_STEPS, STEPS_FIX
from gpuscale.bench.support import Support
from gpuscale.quantities import counted, joined

if TYPE_CHECKING:
    from gpuscale.advice.model.fixed_cost import FixedCost

PER_STEP = "ms per step"
SAME_SAMPLES = "factor: samples to converge at a larger global batch over those at the batch given"

STEP_SPREAD = "share of the step: the N = 1 steps' standard deviation over their mean"
NOISE_SCALE = "samples: the noise scale B_noise of E(B) = E_min (1 + B / B_noise)"


def fixed_quantity(fixed: FixedCost) -> Quantity:
    """The fixed per-step cost as a number, with its range where it is uncertain."""
    if not fixed.uncertain:
        return Quantity(fixed.ms, PER_STEP)
    return Quantity(fixed.ms, PER_STEP, fixed.low_ms, fixed.high_ms)


# Each term's name in the words (the JSON's ``term``; ``kind`` is its ``TermId``).
TERM_NAMES = {
    TermId.FIXED: "Fixed per-step cost",
    TermId.OVERLAP: "Overlap",
    TermId.DDP: "DDP's own work",
    TermId.WAIT: "Wait for the slowest device",
    TermId.INPUT: "Input pipeline",
    TermId.CONVERGENCE: "Samples to converge at a larger global batch",
    TermId.LINK: "Link",
    TermId.STRATEGY: "Strategy",
}


@dataclass(frozen=True, slots=True)
class Quantity:
    """A term's value as a number: ``value`` in ``unit``, its range (``low``, ``high``)
    where it has one, and per device count where it was measured at each (``at``)."""

    value: float
    unit: str
    low: float | None = None
    high: float | None = None
    at: tuple[tuple[int, float], ...] = ()

    def to_dict(self) -> dict[str, object]:
        found: dict[str, object] = {
            "value": self.value,
            "low": self.low,
            "high": self.high,
            "unit": self.unit,
        }
        if self.at:
            found["at"] = {str(n): v for n, v in self.at}
        return found


NO_QUANTITY: dict[str, object] = {"value": None, "low": None, "high": None, "unit": None}


@dataclass(frozen=True, kw_only=True, slots=True)
class Assumption:
    """One term: its value as used (``value``: in words; ``quantity``: the number and its
    unit, None where the term is a choice, not a number), where it came from, how to
    measure it."""

    term: TermId
    value: str
    source: Source
    basis: str
    measure: Measure = field(default_factory=Measure)  # empty where measured
    strategy: str = "ddp"  # whose own work a ``TermId.DDP`` term is (ddp, fsdp)
    quantity: Quantity | None = None

    @property
    def name(self) -> str:
        """The term's name: ``Overlap``, ``FSDP's own work``."""
        if self.term == TermId.DDP:
            return f"{self.strategy.upper()}'s own work"
        return TERM_NAMES[self.term]

    def to_dict(self) -> dict[str, object]:
        """The term as ``-f json`` gives it: its number, range and unit, then the words."""
        number = NO_QUANTITY if self.quantity is None else self.quantity.to_dict()
        return {
            "term": self.name,
            **number,
            "said": self.value,
            "source": str(self.source),
            "basis": self.basis,
            "measure": str(self.measure),
            "kind": str(self.term),
        }

    def sentence(self) -> str:
        """``Overlap: 0.50 (assumed: ...; to measure: ...).``"""
        how = f"; to measure: {self.measure}" if self.measure else ""
        return f"{self.name}: {self.value} ({self.source}: {self.basis}{how})."


def bench_run(
    model: str | None,
    counts: tuple[int, ...],
    host_devices: int | None = None,
    more: str = "",
    run: str = "",
) -> Measure:
    """The bench run that measures a term of ``model`` (a file placeholder when the
    advice was given numbers), on a larger host where the bench's host had fewer devices
    (``host_devices``) than it runs; ``more``: options it adds; ``run``: the advised
    run's options (``Support.run``), used in place of the model where given; ``counts``:
    the device counts it runs (``--nproc``)."""
    return Measure(bench=BenchRun(model, counts, more=more, run=run, host_devices=host_devices))


def overlap(
    value: float | None,
    *,
    measured: bool,
    given: bool,
    model: str | None,
    unmeasured: str = "nothing measured it",
    host_devices: int | None = None,
) -> Assumption:
    """The share of communication backward hides (``unmeasured``: why nothing measured
    it, e.g. the bench's multi-device run is flagged)."""
    if given:
        source, basis = Source.GIVEN, "--overlap"
    elif measured:
        source, basis = Source.MEASURED, "1 - exposed / comm of the bench's multi-device runs"
    else:
        source = Source.ASSUMED
        basis = (
            unmeasured
            if value is not None
            else "half the communication, never the last bucket (ready only when backward ends)"
        )
    shown = f"{value:.2f}" if value is not None else "0.5, all but the last bucket"
    share = PRIORS["overlap"].point if value is None else value
    return Assumption(
        term=TermId.OVERLAP,
        value=shown,
        quantity=Quantity(share, "share of communication hidden behind backward"),
        source=source,
        basis=basis,
        measure=Measure() if measured or given else bench_run(model, (1, 2), host_devices),
    )


def strategy_taken(model: str, benched: str, asked: str | None) -> tuple[Assumption, ...]:
    """The strategy predicted where none was asked for: the one ``model`` was benched with,
    said with the option that predicts the other (tf-30m benched with FSDP: FSDP predicted,
    ``--strategy ddp`` for DDP)."""
    if asked is not None:
        return ()
    other = "ddp" if benched == "fsdp" else "fsdp"
    said = Assumption(
        term=TermId.STRATEGY,
        value=benched.upper(),
        source=Source.MEASURED,
        basis=f"{model} was benched with --strategy {benched}, and this predicts what was "
        f"benched; --strategy {other} predicts {other.upper()}",
    )
    return (said,)


def own_work(
    ms: float, benched: str, asked: str, model: str | None, prior: tuple[float, str], of: str = ""
) -> Assumption:
    """The strategy's own work per step (``ms``), by ``calibration.for_strategy``'s rule:
    measured where the runs were the strategy predicted (fitted where carried from the
    family member ``of`` to a model given by its size), else DDP's ``prior``, FSDP's none."""
    spec = shlex.quote(model) if model else "MODEL"
    command = words(f"gpuscale bench --models {spec} --strategy {asked} --nproc 1")
    value, source, measure = f"{ms:.3g} ms per step", Source.ASSUMED, command
    quantity: Quantity | None = Quantity(ms, PER_STEP)
    if benched == asked == "ddp":
        source, measure = (Source.FITTED, command) if of else (Source.MEASURED, Measure())
        carried = f" of {of}, its bucket copies at this size" if of else ""
        basis = f"synchronised minus no-sync step at N = 1{carried}"
    elif asked != "fsdp":
        basis = (
            f"prior: {prior[0]:.3g} ms a step plus its bucket copies at an H100 SXM's memory "
            f"bandwidth, the median of {prior[1]}; "
            "the runs were FSDP's, which measure no DDP copies"
        )
    elif benched == "fsdp":
        value, source, measure = "in the fixed per-step cost", Source.MEASURED, Measure()
        quantity = None  # a part of the fixed cost, not a term of its own
        basis = (
            "FSDP's synchronised minus no-sync step at N = 1, or its step less its plain "
            "one where that is larger (the calibration note gives the numbers); not "
            "spread over the devices' smaller batches"
        )
    else:
        value, quantity = "0 ms per step", Quantity(0.0, PER_STEP)
        basis = (
            "the runs were DDP's, which measure none of FSDP's; the steps price the bare "
            "module's compute (DDP's own work measured left out) and FSDP's communication"
        )
    return Assumption(
        term=TermId.DDP,
        strategy="fsdp" if asked == "fsdp" else "ddp",
        value=value,
        quantity=quantity,
        source=source,
        basis=basis,
        measure=measure,
    )


def other_strategy(model: str, benched: str, asked: str) -> tuple[str, ...]:
    """A warning where the runs measured another strategy than the one predicted (a
    walk: tf-30m benched with FSDP was advised as DDP without a word, its FSDP
    synchronised-minus-no-sync gap charged as "DDP's own copies")."""
    if benched == asked:
        return ()
    added = "DDP's own work from its prior (assumed)"
    if asked != "ddp":
        added = "no own work of FSDP's (unmeasured, taken as 0)"
    return (
        f"STRATEGY: {model} was benched with --strategy {benched}; this advice predicts "
        f"{asked} (--strategy {asked}) from the bare module's compute its runs measured, "
        f"{benched}'s own work left out, plus {asked.upper()}'s communication and {added}: "
        f"give --strategy {benched} to predict what was benched, or bench with "
        f"--strategy {asked} to measure it.",
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
    as the step takes them (no lower than at fewer devices), said where they differ;
    ``spread``: the N = 1 steps' standard deviation as a share of the step, where
    ``jitter``."""
    if slowdown:
        held = held or {}

        def one(n: int, f: float) -> str:
            taken = held.get(n, f)
            return f"x{f:.2f} at N = {n}" + (
                f" held at the x{taken:.2f} of fewer devices" if taken > f + 5e-3 else ""
            )

        shown = ", ".join(one(n, f) for n, f in sorted(slowdown.items()))
        largest = max(slowdown)
        return Assumption(
            term=TermId.WAIT,
            value=f"no-sync step {shown}",
            quantity=Quantity(
                slowdown[largest],
                "factor: the no-sync step at N over N = 1, at the largest N measured",
                at=tuple(sorted(slowdown.items())),
            ),
            source=Source.MEASURED,
            basis="the bench's no-sync steps at N > 1 over N = 1: compute slowed by contention "
            "for shared cores and by the slowest device, not the bench table's sync_wait_ms "
            "(a wait inside the synchronised step)",
        )
    if jitter:
        return Assumption(
            term=TermId.WAIT,
            value="E[max of N] - mean of the N = 1 step times",
            quantity=None if spread is None else Quantity(spread, STEP_SPREAD),
            source=Source.FITTED,
            basis="the spread of the bench's N = 1 steps (Chen et al. 2016)",
            measure=bench_run(model, (1, 2), host_devices),
        )
    return Assumption(  # nothing measured it: taken as 0 ms, said
        term=TermId.WAIT,
        value="0 ms",
        quantity=Quantity(0.0, PER_STEP),
        source=Source.ASSUMED,
        basis="nothing measured the steps' spread",
        measure=bench_run(model, (1, 2), host_devices),
    )


def input_pipeline(rate: str | None = None, samples_per_s: float | None = None) -> Assumption:
    """The data loader: never modelled; ``rate`` says what it must deliver
    (``samples_per_s`` in all, at the largest count predicted)."""
    needed = None if samples_per_s is None else Quantity(samples_per_s, "samples/s needed")
    return Assumption(
        term=TermId.INPUT,
        value="never the bottleneck" + (f" while it delivers {rate}" if rate else ""),
        quantity=needed,
        source=Source.ASSUMED,
        basis="gpuscale's bench makes its data on the device; loading, decoding and "
        "augmenting are not in any step it times",
        measure=words(
            "time your data loader alone (samples/s per process) and compare it with "
            "the samples/s per device predicted here"
        ),
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
    """The samples to converge at a larger global batch (``same_samples``: the bench's
    N > 1 runs of ``model`` saw the same samples on every rank, so their gradient norms
    measure no noise scale; ``thin``: why the noise scale the bench measured is not used,
    ``convergence.thin_noise``; ``found``: what the runs advised on rest on, whose steps
    the rerun times, ``bench.evidence.steps_needed``, and where the file holds runs of
    the model at 1 and 2 devices already, what to bench them again with
    (:func:`again`), never the run it holds; ``given``: the model is a workload's or a
    noise scale's given as options, not measured; ``noise_scale``: the model's B_noise)."""
    if source is not None:
        scale = None if noise_scale is None else Quantity(noise_scale, NOISE_SCALE)
        return Assumption(
            term=TermId.CONVERGENCE,
            value="E(B) = E_min (1 + B / B_noise)",
            quantity=scale,
            source=Source.GIVEN if given else Source.MEASURED,
            basis=source,
        )
    why = thin or "no noise scale, workload or gradient norms"
    if same_samples:
        why = (
            "no noise scale: the bench's N > 1 runs of this model saw the same samples on "
            "every rank, so their gradient norms measure none"
        )
        before = (
            "draw each rank's batch from torch's default generator (gpuscale seeds it per "
            "rank), then "
        )
        after = ""
    else:
        before, after = "--noise-scale, --workload, or ", " (B_simple from the gradient norms)"
    held = again(found, (1, 2), host_devices)
    steps = found.steps_needed if found else FIRM_STEPS
    more = f"--steps {steps}" if thin else ""
    run = BenchRun(model, (1, 2), more=more, host_devices=host_devices)
    return Assumption(
        term=TermId.CONVERGENCE,
        value="the same as at the batch given",
        quantity=Quantity(1.0, SAME_SAMPLES),
        source=Source.ASSUMED,
        basis=f"{why} (optimistic past the critical batch: at a batch far above it, "
        "doubling the batch doubles the samples)",
        measure=Measure(f"{before}{held}", None, after) if held else Measure(before, run, after),
    )


def rerun(found: Support, counts: tuple[int, ...], host_devices: int | None) -> str:
    """The bench command that runs the advised run at ``counts`` with the steps asked."""
    more = f"--steps {found.steps_needed}"
    return str(bench_run(found.model, counts, host_devices, more, found.run))


def again(found: Support | None, counts: tuple[int, ...], host_devices: int | None = None) -> str:
    """Where the file already holds runs of the model at every one of ``counts``
    (``found.counts``): what to bench them again with so that the run is not one it holds
    (more steps than any timed, where more steps fix a weakness; else a quieter machine),
    said from what the file holds; ``""`` where a count is not measured yet."""
    if found is None or not counts or not set(counts) <= set(found.counts):
        return ""
    on = f"{found.model or 'the model'} on {joined(counts)} device{'s' * (counts != (1,))}"
    if more_steps(found):
        command = rerun(found, counts, host_devices)
        return f"the file holds runs of {on} already: {found.remedy()}: {command}"
    held = f"the file holds runs of {on} already, the longest of {found.most_steps} steps"
    if found.flagged:
        held += f" ({counted(found.flagged, 'run')} of them flagged, left out of the advice)"
    firm = not found.kinds and not found.flagged
    return f"{held}: bench them again {_QUIETER}{', and read their spread (--repeat 3)' * firm}"


def more_steps(found: Support) -> bool:
    """Whether more steps than any run of the file timed would firm ``found`` up: steps
    are a fix and the steps asked exceed every run's (else the run asked is one it holds:
    a quieter machine is what is left)."""
    return found.steps_needed > (found.most_steps or 0) and STEPS_FIX in found.fixes


_QUIETER = "on a quieter machine, nothing else running (more steps do not narrow a spread)"


def not_held(
    assumed: Sequence[Assumption], found: Support | None, host_devices: int | None
) -> tuple[Assumption, ...]:
    """``assumed`` (``Assumption``s), each whose way to measure it is a bench run of the
    model: at counts the file holds already, at the steps it would time anyway (no
    ``--steps``), said instead as what to bench them again with (:func:`again`); else as
    the advised run's own command (``found.run``: its configuration, the file advised on)."""
    return tuple(replace(a, measure=as_run(a.measure, found, host_devices)) for a in assumed)


def as_run(measure: Measure, found: Support | None, host_devices: int | None) -> Measure:
    """``measure`` with its bench run of ``found``'s model said as :func:`not_held` says
    it: the run again, or the advised run's own command (``found.run``), its own
    configuration (``config``) left for the advised run's and what measures the term
    (``more``: ``--steps 580``) kept."""
    bench = measure.bench
    if found is None or bench is None or bench.model != found.model:
        return measure
    if found.counts and not bench.config and not bench.more:
        held = again(found, bench.nproc, host_devices)
        if held:
            return measure.in_words(held)
    run = BenchRun(found.model, bench.nproc, more=bench.more, run=found.run)
    return replace(measure, bench=replace(run, host_devices=host_devices))


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
    """The one measurement that settles a recommendation held back (``held_back``: a
    faster count whose interval includes no gain) or ``refused`` (an input cannot be
    true, flagged where it was found): the most decisive term of ``assumed`` not
    measured, and the command or option that measures it; else a run at 1 and the
    held-back count (2 where refused), or where the bench file holds those runs already,
    ``again``: what to bench them again with (:func:`again`), never the run
    it holds. Under ``strong`` scaling (the global batch kept) the samples to converge do
    not enter."""
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
        count = held_back or 2
        run = BenchRun(None, (1, count), run="...", host_devices=host_devices)
        return f"{why}a measured run at the larger count: {run.command()}"
    found = by_kind[term]
    named = found.name if term == TermId.DDP else found.name[0].lower() + found.name[1:]
    # the command alone: how the bench reads it is the assumption's own, in --explain
    return f"{why}the {named} is {found.source}; measure it: {found.measure.short()}"

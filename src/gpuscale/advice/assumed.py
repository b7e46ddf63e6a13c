"""An assumed term as a record (``Assumption``: its name, number and unit, source) and what
to run to measure it, said from what the bench file holds (:func:`as_run`), down to the one
measurement that settles a recommendation held back (:func:`settle`)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace

from gpuscale.advice.model.priors import strategy_name
from gpuscale.advice.types import BenchRun, Measure, Source, TermId
from gpuscale.bench.evidence import STEPS_FIX
from gpuscale.bench.support import Support
from gpuscale.quantities import counted, filled, joined

# Each term's name in the words (the JSON's ``term``; ``kind`` is its ``TermId``).
TERM_NAMES = {
    TermId.FIXED: "Fixed per-step cost",
    TermId.OVERLAP: "Overlap",
    TermId.DDP: "DDP's own work",
    TermId.WAIT: "Wait for the slowest device",
    TermId.INPUT: "Input pipeline",
    TermId.CONVERGENCE: "Samples to converge at a larger global batch",
    TermId.LINK: "Link",
    TermId.INTER_NODE: "Link between nodes",
    TermId.LINK_CLASS: "Link class",
}


@dataclass(frozen=True, slots=True)
class Quantity:
    """A term's value in ``unit``, its range, its value per device count (``at``), and
    DDP's bucket copies (``copies_ms``) where the value and each end include them."""

    value: float
    unit: str
    low: float | None = None
    high: float | None = None
    at: tuple[tuple[int, float], ...] = ()
    copies_ms: float | None = None

    def with_copies(self, copies_ms: float) -> Quantity:
        """The term with DDP's bucket copies (ms) in its value and ends, as the steps price
        it (itself where there are none)."""
        if not copies_ms:
            return self
        low = None if self.low is None else self.low + copies_ms
        high = None if self.high is None else self.high + copies_ms
        return replace(self, value=self.value + copies_ms, low=low, high=high, copies_ms=copies_ms)

    def to_dict(self) -> dict[str, object]:
        found: dict[str, object] = {
            "value": self.value,
            "low": self.low,
            "high": self.high,
            "unit": self.unit,
        }
        if self.at:
            found["at"] = {str(n): v for n, v in self.at}
        if self.copies_ms is not None:
            found["copies_ms"] = self.copies_ms
        return found


NO_QUANTITY: dict[str, object] = {"value": None, "low": None, "high": None, "unit": None}


@dataclass(frozen=True, kw_only=True, slots=True)
class Assumption:
    """One term: its value as said and as a number (``quantity``; None for a choice), where
    it came from, how to measure it."""

    term: TermId
    value: str
    source: Source
    basis: str
    measure: Measure = field(default_factory=Measure)  # empty where measured
    strategy: str = "ddp"  # whose own work a ``TermId.DDP`` term is (ddp, zero2, fsdp, hybrid)
    quantity: Quantity | None = None

    @property
    def name(self) -> str:
        """The term's name: ``Overlap``, ``FSDP's own work``."""
        if self.term == TermId.DDP:
            return f"{strategy_name(self.strategy)}'s own work"
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
        how = filled("; to measure: {}", self.measure)
        return f"{self.name}: {self.value} ({self.source}: {self.basis}{how})."


@dataclass(frozen=True, kw_only=True, slots=True)
class BenchTerms:
    """What a bench file measured beside the calibration: the strategy's own work per step
    (ms), the N = 1 steps' standard deviation over their mean (None: under two steps), the
    slowdowns as the step takes them (``Compute.held_slowdown``)."""

    overlap_measured: bool
    own_ms: float
    spread: float | None
    held: tuple[tuple[int, float], ...]


def bench_run(
    model: str | None,
    counts: tuple[int, ...],
    host_devices: int | None = None,
    more: str = "",
    run: str = "",
) -> Measure:
    """The bench run at ``counts`` devices that measures a term of ``model`` (None: the
    user's own file)."""
    return Measure(bench=BenchRun(model, counts, more=more, run=run, host_devices=host_devices))


def rerun(found: Support, counts: tuple[int, ...], host_devices: int | None) -> str:
    """The bench command that runs the advised run at ``counts`` with the steps asked."""
    more = f"--steps {found.steps_needed}"
    return BenchRun(found.model, counts, "", more, found.run, host_devices).command()


def again(found: Support | None, counts: tuple[int, ...], host_devices: int | None = None) -> str:
    """Where the file holds runs of the model at every one of ``counts``: what to bench
    them again with (more steps, where they fix a weakness; else a quieter machine)."""
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
    """Whether more steps than any run of the file timed would firm ``found`` up."""
    return found.steps_needed > (found.most_steps or 0) and STEPS_FIX in found.fixes


_QUIETER = "on a quieter machine, nothing else running (more steps do not narrow a spread)"


def as_run(
    measure: Measure, found: Support | None, host_devices: int | None, any_run: bool = False
) -> Measure:
    """``measure``, where it is a bench run of ``found``'s model (``any_run``: of any
    model, at any steps): at counts the file holds, what to bench them again with
    (:func:`again`); else the advised run's own command, ``more`` (``--steps 580``) kept."""
    bench = measure.bench
    if found is None or bench is None:
        return measure
    same = bench.model == found.model
    if any_run or (same and found.counts and not bench.config and not bench.more):
        held = again(found, bench.nproc, host_devices)
        if held:
            return measure.in_words(held)
    if not same:
        return measure
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
    """The one measurement that settles a count ``held_back`` (its interval includes no
    gain) or ``refused`` (an input cannot be true): the most decisive term not measured
    (the samples to converge not under ``strong`` scaling), else ``again``, else a run at
    1 and the held-back count (2 where refused)."""
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

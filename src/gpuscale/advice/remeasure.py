"""What to run to measure what the advice assumed, said from what the bench file holds
(the advised run's own command, or what to bench the runs it holds again with), and the
one measurement that settles a recommendation held back (:func:`settle`)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from gpuscale.advice.assumed import Assumption
from gpuscale.advice.types import BenchRun, Measure, Source, TermId
from gpuscale.bench.evidence import STEPS_FIX
from gpuscale.bench.support import Support
from gpuscale.quantities import counted, joined


def bench_run(
    model: str | None,
    counts: tuple[int, ...],
    host_devices: int | None = None,
    more: str = "",
    run: str = "",
) -> Measure:
    """The bench run at ``counts`` devices that measures a term of ``model`` (None: the
    user's own file), as :class:`BenchRun` reads its fields."""
    return Measure(bench=BenchRun(model, counts, more=more, run=run, host_devices=host_devices))


def rerun(found: Support, counts: tuple[int, ...], host_devices: int | None) -> str:
    """The bench command that runs the advised run at ``counts`` with the steps asked."""
    more = f"--steps {found.steps_needed}"
    return str(bench_run(found.model, counts, host_devices, more, found.run))


def again(found: Support | None, counts: tuple[int, ...], host_devices: int | None = None) -> str:
    """Where the file holds runs of the model at every one of ``counts``: what to bench
    them again with (more steps than any timed, where more steps fix a weakness; else a
    quieter machine); ``""`` where a count is not measured yet."""
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


def not_held(
    assumed: Sequence[Assumption], found: Support | None, host_devices: int | None
) -> tuple[Assumption, ...]:
    """``assumed``, each measure said by :func:`as_run` (the convergence's, a run at counts
    the file holds already, whatever model or steps it names: what to bench them again
    with)."""
    return tuple(
        replace(a, measure=as_run(a.measure, found, host_devices, a.term == TermId.CONVERGENCE))
        for a in assumed
    )


def as_run(
    measure: Measure, found: Support | None, host_devices: int | None, any_run: bool = False
) -> Measure:
    """``measure``, where it is a bench run of ``found``'s model (``any_run``: of any
    model, at any steps): at counts the file holds already, at the steps it would time
    anyway, what to bench them again with (:func:`again`); else the advised run's own
    command (``found.run``), what measures the term (``more``: ``--steps 580``) kept."""
    bench = measure.bench
    if found is None or bench is None:
        return measure
    held = again(found, bench.nproc, host_devices) if any_run else ""
    if held:
        return measure.in_words(held)
    if bench.model != found.model:
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
    true): the most decisive term of ``assumed`` not measured and what measures it; else
    ``again`` (:func:`again`), else a run at 1 and the held-back count (2 where refused).
    Under ``strong`` scaling the samples to converge do not enter."""
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

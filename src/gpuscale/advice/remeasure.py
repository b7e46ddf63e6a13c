"""How a term is measured again on the bench file's own runs (:func:`again`): the runs of
the counts it holds, rerun with more timed steps where more would firm them up
(``bench.evidence``), else on a quieter machine; a measure's bench run as that rerun
(:func:`as_run`) where the file holds the counts it names."""

from __future__ import annotations

from dataclasses import replace

from gpuscale.advice.types import BenchRun, Finding, Measure
from gpuscale.advice.types import FindingKind as K
from gpuscale.bench.evidence import QUIETER_FIX, STEPS_FIX, ways
from gpuscale.bench.support import Support


def rerun(found: Support, counts: tuple[int, ...], host_devices: int | None) -> str:
    more = f"--steps {found.steps_needed}"
    on = (host_devices, found.per_node)  # the bench's host, and its nodes' devices
    return BenchRun(found.model, counts, "", more, found.run, *on).command()


def again(
    found: Support | None, counts: tuple[int, ...], host_devices: int | None = None
) -> Finding | None:
    """How to bench again the file's runs at every count of ``counts``: with more steps where
    they fix a weakness (the command), else on a quieter machine; None where it holds none."""
    if found is None or not counts or not set(counts) <= set(found.counts):
        return None
    on = {"model": found.model, "counts": counts}
    if more_steps(found):
        command = rerun(found, counts, host_devices)
        steps = {"case": "steps", "remedy": found.remedy(), "command": command}
        return Finding.of(K.MEASURE_AGAIN, **on, **steps)
    (quieter,) = ways([QUIETER_FIX], 0)  # the bench's own words for the fix
    return Finding.of(
        K.MEASURE_AGAIN,
        **on,
        case="quieter",
        most_steps=found.most_steps,
        flagged=found.flagged,
        quieter=quieter,
        read_spread=not found.kinds and not found.flagged,
    )


def more_steps(found: Support) -> bool:
    """Whether more steps than any run of the file timed would firm ``found`` up."""
    return found.steps_needed > (found.most_steps or 0) and STEPS_FIX in found.fixes


def as_run(
    measure: Measure, found: Support | None, host_devices: int | None, any_run: bool = False
) -> Measure:
    """``measure``, a bench run of ``found``'s model (``any_run``: of any model, at any steps),
    as :func:`again` at counts the file holds, else the advised run's command, ``more`` kept."""
    bench = measure.bench
    if found is None or bench is None:
        return measure
    same = bench.model == found.model
    if any_run or (same and found.counts and not bench.config and not bench.more):
        held = again(found, bench.nproc, host_devices)
        if held is not None:
            return replace(measure, bench=None, again=held)
    if not same:
        return measure
    run = BenchRun(found.model, bench.nproc, more=bench.more or found.kept_steps, run=found.run)
    return replace(measure, bench=replace(run, host_devices=host_devices, per_node=found.per_node))

"""What advice read from weak bench runs says in place of a change to make.

Runs that timed too few steps (``bench.support.Support.weak``: one slow step moves a mean
by 1/steps) measure none of the step's terms (the fixed costs, DDP's own work, the wait
for the slowest device, the communication scale): a user's 2-step quickstart was told to
cut DDP's overhead from a term ~20x what a longer run of the same model measured. From
such runs the advice names no change to make (:func:`changes`): it says to measure first
(:func:`measure_first`), with the run that would, phrased from what the file holds: the
device counts its runs measured, again with the steps that make them firm (more than any
run timed, ``bench.evidence.steps_asked``), and a quieter machine where they spread;
never a run the file holds already. The warning that runs are weak is read with the
model's runs (``calibrate.host.weak_said``).
"""

from __future__ import annotations

from typing import Any

from gpuscale.advice.assumptions import again, bench_run, more_steps, rerun
from gpuscale.bench.evidence import STEPS_FIX, ways
from gpuscale.bench.support import Support, weak
from gpuscale.plausibility import HOST_NOISE, FlagKind
from gpuscale.quantities import joined


def measure_first(found: Support | None, host_devices: int | None = None) -> str | None:
    """What to measure before any change, where ``found`` (the runs advised on) is weak;
    None where it is not."""
    if found is None or not (weak(found) or found.all_flagged):
        return None
    counts = found.counts or (1, 2)
    on = f"{joined(counts)} device{'' if counts == (1,) else 's'}"
    if not weak(found):
        return _flagged_first(found, counts, on, host_devices)
    command = rerun(found, counts, host_devices)
    # what they rest on and the steps' basis are the warning's and --explain's to say
    said = (
        f"the runs advised on ({found.model or 'the model'} on {on}) are too short to "
        "measure the step's terms, so no change is recommended from them"
    )
    if not more_steps(found):  # runs of the steps asked are in the file: not one more
        return f"{said}; {again(found, counts, host_devices)}, and advise again"
    # the command holds the steps; the other fixes (a quieter machine, a readable
    # /proc/stat) said as the bench says them, beside it
    other = ways([f for f in found.fixes if f != STEPS_FIX], found.steps_needed)
    beside = f", {joined(other)}" if other else ""
    return f"{said}: {command}{beside}, and advise again"


def _flagged_first(
    found: Support, counts: tuple[int, ...], on: str, host_devices: int | None
) -> str:
    """What to measure where every run advised on is flagged (read with --allow-flagged):
    those runs again, as their flags' kinds say (a noisy host: a quieter machine)."""
    kinds = [k for k in found.flag_kinds if k != FlagKind.BASELINE]  # its N = 1 run's own
    noise = [k for k in kinds if k in HOST_NOISE]
    other = [k for k in kinds if k not in HOST_NOISE]
    how = ["on a quieter machine, nothing else running"] * bool(noise) + [
        f"as their flags say ({joined(other)})"
    ] * bool(other)
    command = bench_run(found.model, counts, host_devices, run=found.run)
    return (
        f"the runs advised on ({found.model or 'the model'} on {on}) are all flagged "
        f"({joined(kinds)}), so no change is recommended from them: {command}, "
        f"{joined(how) or 'unflagged'}, and advise again"
    )


def changes(advice: Any, remedy: str) -> str:
    """What would change the decision: ``remedy`` (``advice.focus.remedy``), or where the
    runs advised on are weak, that they cannot say (measure first)."""
    inputs = advice.inputs
    found = getattr(inputs, "evidence", None)
    if not weak(found) and not (found is not None and found.all_flagged):
        return remedy
    return (
        f"not said from these runs: the terms above are read from {found.rests_on()}, "
        "a measurement to repeat, not a cause to act on (see Measure first)"
    )


def marked(advice: Any) -> str:
    """`` (from weak runs: a measurement to repeat)`` after a finding on the step's terms
    where the runs advised on are weak, else ``""``."""
    return " (from weak runs: a measurement to repeat)" if weak(advice.inputs.evidence) else ""

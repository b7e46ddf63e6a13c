"""What the advice's numbers rest on: each row of the predictions measured or predicted,
said from its one field (issue 60 item 4), and what weak runs say in place of a change.

A row's step is ``predicted`` (the sum of the model's terms) or rests on a measurement
(``measured``: runs at that count fell outside the predicted interval; ``measured_below``:
the miss measured at a count below, carried up): the predictions' ``rests_on`` column.
Every sentence on a row reads that field: the step's split (the model's terms plus
``unexplained_ms``, the measured step less them), the term that decides, and the step
interval, which states the interval each row carries (``step_ms_low`` / ``step_ms_high``,
``speedup_low`` / ``speedup_high``) and, from the same fields, why it is not the model's
error alone (the ends of the ranges of terms not measured, the compute floor, the cap at
linear, the width growing past the counts measured, or the runs' own range).

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

import math
from collections.abc import Callable
from typing import Any

import pandas as pd

from gpuscale.advice.assumptions import again, bench_run, more_steps, rerun
from gpuscale.advice.types import TRUSTED_FLAGGED_ONLY, TermId
from gpuscale.bench.evidence import STEPS_FIX, ways
from gpuscale.bench.support import Support, weak
from gpuscale.plausibility import HOST_NOISE, FlagKind
from gpuscale.quantities import counted, joined

# What a row's step rests on (the predictions' ``rests_on``), as the step says it.
RESTS_ON = {
    "measured": "measured: the runs at that count, outside the predicted interval",
    "measured_below": "the model's, times the miss measured at a count below",
}
TOLERANCE = 0.01  # ends within 1% of the error's are the error's


def term_name(term: str) -> str:
    """``the latency term``; the remainder a measured step leaves unexplained by name."""
    if term == TermId.UNEXPLAINED:
        return "the remainder unexplained by the model"
    return f"the {term} term"


def largest(term: str) -> str:
    """``latency``; the remainder a measured step leaves unexplained by name."""
    return term_name(term) if term == TermId.UNEXPLAINED else term


def focus_words(d: Any, ms: Callable[[float], str]) -> tuple[str, str, str]:
    """At the decision's focus: the deciding term's name as a sentence starts it, what the
    step rests on (`` (measured: ...)``, "" where predicted) and the remainder the model's
    terms leave of a measured step (``, unexplained by the model 124 ms (...)``)."""
    name = term_name(d.dominant_term)
    if d.focus_rests_on == "predicted":
        return name[0].upper() + name[1:], "", ""
    left = d.overheads_ms.get(TermId.UNEXPLAINED, 0.0)
    return (
        name[0].upper() + name[1:],
        f" ({RESTS_ON[d.focus_rests_on]})",
        f", unexplained by the model {ms(left)} (the step less the model's terms, "
        f"{ms(d.focus_step_ms - left)})",
    )


def _pct(ratio: float) -> str:
    return f"{ratio - 1:+.0%}"


def _span(low: float, high: float) -> str:
    return f"{_pct(low)} to {_pct(high)}"


def _measured(advice: Any, row: pd.Series) -> str:
    """``2 devices rest on the measurement: speedup -25% to +25%, the range of 3 runs,
    all flagged``."""
    n = int(row["accelerators"])
    found = [m for m in getattr(advice, "disagreements", ()) if m.accelerators <= n]
    m = max(found, key=lambda m: m.accelerators) if found else None
    runs = ""
    if m is not None:
        flagged = ", all flagged" if m.why == TRUSTED_FLAGGED_ONLY else ""
        runs = f", the range of {counted(len(m.trusted_runs), 'run')}{flagged}"
        if m.accelerators < n:
            runs += f" at {counted(m.accelerators, 'device')}"
    speedup = float(row["speedup"])
    return (
        f"{counted(n, 'device')} rest{'s' if n == 1 else ''} on the measurement, not the "
        f"model: speedup {_span(row['speedup_low'] / speedup, row['speedup_high'] / speedup)}"
        f"{runs}"
    )


def _why(inputs: Any, rows: pd.DataFrame) -> list[str]:
    """Why the predicted rows' intervals are not the model's error alone, from the rows'
    own ends against the error's width at each count."""
    why: list[str] = []
    width = {int(n): inputs.error.width_at(int(n)) for n in rows["accelerators"]}
    step = rows["step_ms"].astype(float)
    low = rows["step_ms_low"] / step
    high = rows["step_ms_high"] / step
    error_low = rows["accelerators"].map(lambda n: math.exp(-width[int(n)]))
    error_high = rows["accelerators"].map(lambda n: math.exp(width[int(n)]))
    if ((high > error_high * (1 + TOLERANCE)) | (low < error_low * (1 - TOLERANCE))).any():
        why.append("the step at the ends of the ranges of the terms not measured (above)")
    if (low > error_low * (1 + TOLERANCE)).any():
        why.append("the step's lower end no lower than its compute")
    speedup = rows["speedup"].astype(float)
    if (rows["speedup_high"] / speedup < step / rows["step_ms_low"] * (1 - TOLERANCE)).any():
        why.append("the speedup's upper end no higher than compute alone or linear allow")
    if len({round(w, 9) for w in width.values()}) > 1:
        why.append("the error's width growing past the counts measured")
    return why


def step_interval(advice: Any, source: str) -> str:
    """The step interval: ``source`` (the model's error, as the priors say it), then the
    interval each row carries, and why it differs from the error alone, or that it rests
    on the runs' range where the row rests on a measurement."""
    frame = advice.predictions
    rows = frame[frame["accelerators"] > 1]
    predicted = rows[rows["rests_on"] == "predicted"]
    resting = rows[rows["rests_on"] != "predicted"]
    said = [f"Step interval: {'for the counts predicted, ' if len(resting) else ''}{source}"]
    if len(predicted):
        carried = [
            f"{counted(int(r['accelerators']), 'device')} step "
            f"{_span(r['step_ms_low'] / r['step_ms'], r['step_ms_high'] / r['step_ms'])}, "
            f"speedup {_span(r['speedup_low'] / r['speedup'], r['speedup_high'] / r['speedup'])}"
            for _, r in predicted.iterrows()
        ]
        why = _why(advice.inputs, predicted)
        said.append(
            f"the rows carry {'; '.join(carried)}"
            + (f" (differing from that error by {joined(why)})" if why else "")
        )
    said += [_measured(advice, r) for _, r in resting.iterrows()]
    return "; ".join(said)


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

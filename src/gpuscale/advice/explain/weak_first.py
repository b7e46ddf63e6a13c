"""What advice read from weak bench runs says in place of a change to make.

Runs that timed too few steps (``bench.support.Support.weak``: one slow step moves a mean
by 1/steps) measure none of the step's terms (the fixed costs, DDP's own work, the wait
for the slowest device, the communication scale): a user's 2-step quickstart was told to
cut DDP's overhead from a term ~20x what a longer run of the same model measured. From
such runs the advice names no change to make (:func:`changes`): it says to measure first
(:func:`measure_first`), with the run that would, phrased from what the file holds: the
device counts its runs measured, again with the steps that make them firm (more than any
run timed, ``bench.evidence.steps_asked``), and a quieter machine where they spread;
never a run the file holds already.
"""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import Any

import pandas as pd

from gpuscale.advice.assumptions import again, bench_run, more_steps, rerun
from gpuscale.advice.request import AdviceRequest
from gpuscale.bench.evidence import STEPS_FIX, labels, remedy, ways
from gpuscale.bench.support import Support, support, weak
from gpuscale.bench.support import weak as too_short
from gpuscale.plausibility import HOST_NOISE, FlagKind
from gpuscale.quantities import joined, of_the
from gpuscale.tables.bench_runs import bench_options, runs_like


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


# The command that prints a bench table's evidence_notes (``-f csv`` alone leaves them out).
NOTES_COMMAND = (
    "gpuscale analyze --bench {} --columns configuration,accelerators,evidence_notes -f csv"
)


def weak_said(
    table: pd.DataFrame, model: str, source: Any = None
) -> tuple[str | None, str | None, Support | None]:
    """The warning when runs of ``model`` the advice uses (``ok``, not flagged, or
    allowed) are weak evidence (``bench.evidence``: few steps timed, steps spread, busy
    share not measured): short, with the kinds of why and what to bench (the default
    view's line); then the same in full, with the steps' basis and the command that
    prints the runs' notes (on ``source``, the results file, where given: a source line
    of ``--explain``); then what they give. (None, None, support) when none is weak."""
    ok = table[(table["model"] == model) & (table["status"] == "ok")]
    rows = ok[~ok["flagged"].fillna(False).astype(bool)]
    weak = rows[rows["evidence"] == "weak"]
    found = support(rows, table)
    if weak.empty or found is None:
        return None, None, found
    kinds = labels(weak["evidence_kinds"])
    counts = [int(n) for n in sorted(weak["accelerators"].unique())]
    on = f"{joined(counts)} device{'' if counts == [1] else 's'}"
    runs = of_the(len(weak), len(rows), "bench run")
    said = (
        f"WARNING: weak evidence: {runs} of {model} the advice uses (on {on}) "
        f"{'is' if len(weak) == 1 else 'are'} weak ({', '.join(kinds)})"
    )
    # runs too short to read the step's terms from: the change line says what to bench
    # (``explain.weak_first.measure_first``), the warning only that they are weak
    short = (
        "" if too_short(found) else f": {remedy(found.fixes, found.steps_needed)} for firm numbers"
    )
    full = (
        f"Weak evidence: {runs} of {model} (on {on}): {', '.join(kinds)}; the bench "
        f"table's evidence_notes say more: `{NOTES_COMMAND.format(_file(source))}`; "
        f"{found.remedy()} for firm numbers."
    )
    return f"{said}{short}", full, found


def run_options(table: pd.DataFrame, cal: Any, req: AdviceRequest) -> str:
    """The ``gpuscale bench`` options of the run advised on: the calibrated run's
    configuration in the strategy predicted, and ``--out`` the file advised on where the
    advice was given its path (``""`` where no run of it is in ``table``)."""
    like = runs_like(table, cal.config_group, cal.device_name) & (table["model"] == cal.name)
    rows = table[like]
    if rows.empty:
        return ""
    row = rows.sort_values("accelerators", kind="stable").iloc[0].copy()
    row["strategy"] = req.strategy or row.get("strategy")
    out = f" --out {_file(req.bench)}" if isinstance(req.bench, str | Path) else ""
    return f"{bench_options(row)}{out}"


def _file(source: Any) -> str:
    """The results file as a shell word (``FILE`` where the table was given, not read)."""
    return shlex.quote(str(source)) if isinstance(source, str | Path) else "FILE"


def far_beyond_the_batch_timed(cal: Any, per_device: int) -> str:
    """A warning when the advice runs a per-device batch the bench never came near: above
    the one batch it timed while the step sat on a launch-bound floor there (its work was
    never seen: priced at the device's peak, a lower bound), or more than twice that batch.
    Held out on an H100: ResNet-50 bf16 timed at batch 32 on a host whose CPU set its step
    took 116 ms at batch 256 on another host; modelled from batch 32, the step there was
    under half of that (docs/advice.md)."""
    floor = cal.compute.floor_ms > 0
    if (
        cal.shape is not None
        or per_device <= cal.batch
        or (per_device <= 2 * cal.batch and not floor)
    ):
        return ""
    how = (
        "on a launch-bound floor there, its work priced at the device's peak: a lower bound"
        if floor
        else "from the fixed cost and per-sample rate measured there"
    )
    return (
        f"UNMEASURED: per-device batch {per_device} is {per_device / cal.batch:.3g}x the "
        f"largest the bench timed ({cal.batch}); its step is modelled {how}, and the step's "
        "interval does not cover a batch that far from the one measured; measure it: "
        f"gpuscale bench --model {cal.name} --batch {per_device}"
    )

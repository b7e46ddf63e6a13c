"""How a term is measured again on the bench file's own runs (:func:`again`): the runs of
the counts it holds, rerun with more timed steps where more would firm them up
(``bench.evidence``), else on a quieter machine; a measure's bench run as that rerun
(:func:`as_run`) where the file holds the counts it names; the weak runs the advice uses
(:func:`weak_runs`), those whose steps spread over too few steps to tell a busy machine
from one slow step (:func:`few_steps_spread`) rerun with more."""

from __future__ import annotations

from dataclasses import replace

import pandas as pd

from gpuscale.advice.types import BenchRun, Finding, Measure, trusted_runs
from gpuscale.advice.types import FindingKind as K
from gpuscale.bench.evidence import QUIETER_FIX, STEPS_FIX, Weakness, labels, remedy, ways
from gpuscale.bench.support import Support, support
from gpuscale.bench.support import weak as too_short
from gpuscale.plausibility import NOISY_MIN_STEPS


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


def few_steps_spread(
    weak: pd.DataFrame, found: Support, host_devices: int | None = None
) -> Finding | None:
    """The runs of ``weak`` (graded rows) whose steps spread over fewer timed steps than
    the noisy check judges (``Weakness.FEW_STEPS_SPREAD``: under
    ``plausibility.NOISY_MIN_STEPS`` one slow step sets a p95, a warm-up as likely as a busy
    machine): their counts, the fewest steps they timed, the threshold, and the command
    that reruns them with the steps ``found`` asks (``bench.evidence.steps_asked``: at
    least ``FIRM_STEPS``, over the threshold; None where the runs are too short to read the
    step's terms from: the change line gives it); None where no run's steps spread so."""
    kind = Weakness.FEW_STEPS_SPREAD.value
    spread = weak[weak["evidence_kinds"].map(lambda kinds: kind in kinds)]
    if spread.empty:
        return None
    counts = tuple(int(n) for n in sorted(spread["accelerators"].unique()))
    return Finding.of(
        K.FEW_STEPS_SPREAD,
        counts=counts,
        steps=int(pd.to_numeric(spread["steps"]).min()),
        threshold=NOISY_MIN_STEPS,
        command=None if too_short(found) else rerun(found, counts, host_devices),
    )


def weak_runs(
    table: pd.DataFrame,
    model: str,
    file: str = "FILE",
    whole: pd.DataFrame | None = None,
    run: str | None = None,
    host_devices: int | None = None,
    per_node: int | None = None,
) -> tuple[Finding | None, Support | None]:
    """The weak runs of ``model`` the advice uses (None when none is: the warning's finding,
    ``full`` False; --explain's with ``full`` True) and what they give; the steps asked are
    those of every ``ok`` run of ``model`` in ``whole`` (the file's table; ``table`` where not
    given), as the file's own notes and ``analyze --bench`` ask: one number a model; ``run``:
    the advised run's bench options (and ``--out FILE``), the commands' (``Support.run``);
    ``per_node``: the question's devices a node, where the rows hold no nodes."""
    rows = trusted_runs(table[table["model"] == model])
    # weak: a run with a weakness, a flagged one allowed (graded flagged, not weak) too
    weak = rows[rows["evidence_kinds"].map(lambda kinds: isinstance(kinds, tuple) and bool(kinds))]
    found = support(rows, table)
    if found is not None and whole is not None:
        asked = support(rows, whole)  # of every run of the model, outlasted ones too
        found = replace(found, steps_needed=asked.steps_needed, steps_basis=asked.steps_basis)
    if found is not None and run is not None:
        found = replace(found, run=run, per_node=found.per_node or per_node)
    if weak.empty or found is None:
        return None, found
    # runs too short to read the step's terms from: the change line says what to bench
    # (``explain.caveats.measure_first``), the warning only that they are weak
    fix = None if too_short(found) else remedy(found.fixes, found.steps_needed)
    weak_runs = Finding.of(
        K.WEAK_EVIDENCE,
        full=False,
        weak=len(weak),
        runs=len(rows),
        model=model,
        counts=tuple(int(n) for n in sorted(weak["accelerators"].unique())),
        kinds=tuple(labels(weak["evidence_kinds"])),
        fix=fix,
        fix_in_full=found.remedy(basis=True),
        file=file,
        spread=few_steps_spread(weak, found, host_devices),
    )
    return weak_runs, found

"""Which of the bench's runs the report may set beside its advice: those of the model,
device and configuration the advice was calibrated on (the N = 1 run it read, and the
strategy it predicts: ``tables.bench.runs_like``, as ``gpuscale advise`` sets its own
measurements beside its prediction), and the sentence on the others, which says what
the advice is on and what each other run measured instead, never the two as one answer
(a CPU run of another model in the same file is no evidence for the H100 advice)."""

from __future__ import annotations

import re
import shlex
from typing import TYPE_CHECKING, Protocol

import pandas as pd

from gpuscale.quantities import filled, joined
from gpuscale.report.bench_evidence import weak_tag
from gpuscale.tables.bench_runs import bench_options, runs_like

if TYPE_CHECKING:  # its type alone: the section loads no module of the advice engine
    from gpuscale.advice.calibration import Calibration
    from gpuscale.report.bench_checks import ReadRun


def advised_runs(scaling: pd.DataFrame, cal: Calibration) -> pd.Series:
    """Per row of ``scaling`` (``analysis.bench_scaling``'s), whether it ran what the
    advice (``cal``: its ``Calibration``) is on: its model, and where the advice
    names the run it was calibrated on, that run's configuration and device, in the
    strategy predicted; a run outlasted by a longer one of its configuration and count
    (``advice.calibrate.rows.longest``: the 2 steps of a first sweep beside a second's 30)
    is not, as the advice reads none."""
    same = (scaling["model"] == cal.model.name) & ~outlasted(scaling)
    runs, bench = cal.runs, cal.bench
    if runs.one_step_ms is None or bench is None or not bench.config_group or scaling.empty:
        return same
    return same & runs_like(scaling, bench.config_group, runs.one_device_name, cal.run.strategy)


def outlasted(scaling: pd.DataFrame) -> pd.Series:
    """Per row, whether a run of its configuration and count timed more steps
    (``advice.calibrate.rows.longest``, the rule the advice reads its rows by)."""
    from gpuscale.advice.calibrate.rows import longest  # the advice's rule, loaded with it

    return pd.Series(~scaling.index.isin(longest(scaling).index), index=scaling.index)


def answering(scaling: pd.DataFrame, read: tuple[ReadRun, ...] = ()) -> pd.Series:
    """Per row of ``scaling``, whether its run answers for its configuration and count
    as the advice reads runs: not outlasted (:func:`outlasted`, the run of most steps is
    read), and unflagged, or flagged and read by the advice (``read``:
    ``bench_checks.read_runs``'s records; none without an advice). The one rule the
    section's findings, its first lines, its figures and the measured answer read, so
    that no model and count is said with two speedups."""
    used = [r.at for r in read if r.flagged and r.read]
    flagged = scaling["flagged"].fillna(False).astype(bool)
    return ~outlasted(scaling) & (~flagged | scaling.index.isin(used))


def calibrated_run(scaling: pd.DataFrame, cal: Calibration) -> pd.Series | None:
    """The N = 1 row of ``scaling`` the advice was calibrated on (None where the advice
    names none, or the row is not among ``scaling``'s)."""
    runs, bench = cal.runs, cal.bench
    if runs.one_step_ms is None or bench is None or not bench.config_group or scaling.empty:
        return None
    like = runs_like(scaling, bench.config_group, runs.one_device_name)
    rows = scaling[like & (scaling["model"] == cal.model.name) & (scaling["accelerators"] == 1)]
    return rows.iloc[-1] if len(rows) else None


def rerun_options(scaling: pd.DataFrame, cal: Calibration) -> str:
    """The ``gpuscale bench`` options that measure what the advice is on: the calibrated
    run's configuration in the strategy predicted, and the file advised on (the advice's
    own, ``Support.run``, where it has one); "" where no run is named."""
    evidence = cal.runs.evidence
    run = evidence.run if evidence is not None else ""
    if run:
        return run
    row = calibrated_run(scaling, cal)
    if row is None:
        return ""
    row = row.copy()
    row["strategy"] = cal.run.strategy
    return bench_options(row)


def _advised_run(scaling: pd.DataFrame, advised: pd.Series, cal: Calibration) -> pd.Series | None:
    """The first of the advised runs (``advised``: a mask of ``scaling``), else the run the
    advice was calibrated on (no run of the strategy predicted), else None."""
    runs = scaling[advised]
    if len(runs):
        return runs.iloc[0]
    return calibrated_run(scaling, cal)


def advised_scope(scaling: pd.DataFrame, advised: pd.Series, cal: Calibration) -> str:
    """What the advice is on, as the table names it: ``tf-30m on NVIDIA H100 80GB HBM3,
    nccl`` (its configuration's label and platform; ``, predicted with DDP`` where it
    predicts another strategy than the run's)."""
    first = _advised_run(scaling, advised, cal)
    if first is None:
        return cal.model.name
    # its configuration, not one run of it (``tf-7m (run 2)``: the advice reads the latest)
    label = re.sub(r" \(run \d+\)$", "", str(first["configuration"]))
    said = f"{label} on {first['platform']}"
    if cal.runs.one_step_ms is not None and cal.runs.one_strategy != cal.run.strategy:
        from gpuscale.advice.model.priors import strategy_name  # the advice's, loaded with it

        said += f", predicted with {strategy_name(cal.run.strategy)}"
    return said


class ScalingRow(Protocol):
    """A row of ``DataFrame.itertuples`` over ``analysis.bench_scaling``'s table."""

    model: str
    configuration: str
    platform: str
    scaling: str  # "weak" or "strong"
    accelerators: int
    batch_per_device: int
    global_batch: int
    speedup: float


def _differs(row: ScalingRow, model: str, platform: str) -> str:
    """``another model and device``: what a run measured other than the advice's."""
    parts = [
        word
        for word, other in (("model", row.model != model), ("device", row.platform != platform))
        if other
    ]
    return f"another {joined(parts) or 'configuration'}"


def measured_speedup(r: ScalingRow) -> str:
    """A run's measured speedup as the report says it: ``mlp-4m 0.34x on 2 (CPU processes,
    gloo, batch 8 per device at each count)``: its device and backend, and the batch its
    speedup kept (weak scaling's per-device batch; strong scaling's global batch): a
    speedup at a growing global batch beside the advice's at a kept one is no disagreement."""
    kept = f"batch {r.batch_per_device:,} per device"
    if r.scaling != "weak":
        kept = f"global batch {r.global_batch:,}"
    speedup = f"{r.configuration} {r.speedup:.2f}x on {r.accelerators}"
    return f"{speedup} ({r.platform}, {kept} at each count)"


def others_answer(scaling: pd.DataFrame, advised: pd.Series, cal: Calibration) -> str | None:
    """The top of the report's line on the trusted runs measured at N > 1 that are not of
    the advice's model, device and configuration: each with what it measured instead,
    that it checks nothing of the advice, and how the advice is put on it (``--model``,
    or a file of that configuration's runs alone); None where there is none. A run
    outlasted by one of more steps of its configuration and count is not among them: the
    advice reads the longer one, and the section says which it left out."""
    multi = (scaling["accelerators"] > 1) & scaling["speedup"].notna()
    # a run outlasted by one of more steps answers nothing (``answering``): never said
    other = scaling[multi & ~advised & answering(scaling)]
    if other.empty:
        return None
    first = _advised_run(scaling, advised, cal)
    platform = "" if first is None else str(first["platform"])
    said = "; ".join(
        f"{measured_speedup(r)}: "
        + _differs(r, cal.model.name, platform)
        + filled(", {}", weak_tag(scaling, other.loc[[at]]))
        for at, r in zip(other.index, other.itertuples(), strict=True)
    )
    models = list(dict.fromkeys(m for m in other["model"].astype(str) if m != cal.model.name))
    how = [f"--model {shlex.quote(m)}" for m in models]  # pasted: a path may hold a space
    if (other["model"] == cal.model.name).any():
        how.append(
            f"a --bench file of only that run's configuration of {cal.model.name} (the advice "
            "reads a model's latest trustworthy N = 1 run)"
        )
    return (
        "Your hardware, the table's measured speedup over one device of runs the advice is not "
        f"on (it is on {advised_scope(scaling, advised, cal)}), so no check of it: {said}. To "
        f"advise on one of them: {joined(how, 'or')}."
    )

"""Measured speedups beside the predictions (:func:`against_measured`): one sentence for each
count the bench measured in a configuration the advice predicts, read off the advice's one
record of it (``measured_runs.MeasuredCount``, made once by ``search.decision``): its
trusted runs' median and spread set against the predicted speedup and its interval, inside
or outside; the measurement is what this machine did, said beside the prediction, never
silently contradicting it, and never another figure than the answer and ``-f json`` say."""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from gpuscale.advice.measured_runs import Disagreement, MeasuredCount
from gpuscale.quantities import counted, joined, number
from gpuscale.tables.advice import TOO_WIDE_TO_TEST


def _spread(values: list[float]) -> str:
    """``0.199`` (one value) or ``median 0.2 (spread 0.18-0.22)``, of ``values``."""
    if len(values) == 1:
        return number(values[0])
    ordered = sorted(values)
    middle = float(pd.Series(ordered).median())
    return f"median {number(middle)} (spread {number(ordered[0])}-{number(ordered[-1])})"


def against_measured(
    counts: Sequence[MeasuredCount], disagreeing: tuple[Disagreement, ...] = ()
) -> list[str]:
    """One sentence for each of ``counts`` (the advice's ``measured_counts``): the trusted
    runs there, how many and their spread, against the predicted speedup and its
    interval, inside or outside; the flagged runs left out said apart. A count in
    ``disagreeing`` (``decision.disagreements``) is said there, not here."""
    lines = []
    said_apart = {(d.accelerators, d.batch_per_device, d.accum) for d in disagreeing}
    for c in counts:
        devices = c.accelerators
        if (devices, c.batch_per_device, c.accum) in said_apart:
            continue
        low, high = c.predicted_low, c.predicted_high
        predicted = (
            f"the predicted {number(c.predicted_speedup)} "
            f"({number(low)}-{number(high)}x, 80% interval"
            + (
                f"; weak scaling, per-device batch {c.batch_per_device} kept)"
                if c.weak_scaling
                else ")"
            )
        )
        where = "inside" if c.inside else "outside"
        left = c.left_out
        apart = (
            f"; {counted(len(left), 'flagged run')} left out (not trusted: "
            f"{joined([number(v) for v in c.of(left)])})"
            if left
            else ""
        )
        if not c.trusted:
            lines.append(
                f"Measured on {devices} devices: throughput speedup "
                f"{joined([number(v) for v in c.of(c.runs)])} from "
                f"{counted(len(c.runs), 'run')}, all flagged (not trusted), {where} {predicted}."
            )
            continue
        said = _spread(c.of(c.trusted))
        said = (
            f"Measured on {devices} devices: throughput speedup {said}, from "
            f"{counted(len(c.trusted), 'trusted run')}"
        )
        remedy = next((m.weak_remedy for m in c.trusted if m.weak_remedy), "")
        allowed = any(m.allowed for m in c.trusted)
        if c.inside:
            # inside an interval too wide to test the prediction is no agreement (the
            # report's check says the same, report.bench_checks)
            wide = low <= 0 or high / low > TOO_WIDE_TO_TEST
            span = number(high / low) if low > 0 else "infinity"
            lines.append(
                f"{said}, inside {predicted}"
                + (
                    f", an interval spanning a factor of {span}: too wide to test the "
                    f"prediction (a test needs one within a factor of {TOO_WIDE_TO_TEST:g})"
                    if wide
                    else ""
                )
                + f"{apart}."
            )
        elif remedy:
            # a weak run's speedup is a measurement to repeat: never trusted over the
            # advice's before it is measured again
            lines.append(
                f"{said}, outside {predicted}, from weak runs (the bench table's evidence): "
                "they disagree, and the measurement is not yet firm enough to say which to "
                f"trust; {remedy} and advise again"
                + (" (flagged too, used with --allow-flagged)" if allowed else "")
                + f"{apart}."
            )
        else:
            lines.append(
                f"{said}, outside {predicted}: the measurement is what this machine did; "
                f"trust it over the prediction at {devices} devices (the model missed "
                "something it measured)"
                + (" - though flagged, used with --allow-flagged" if allowed else "")
                + f"{apart}."
            )
    return lines

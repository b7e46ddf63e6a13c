"""Measured speedups beside the predictions (:func:`against_measured`): one sentence for each
count the bench measured in a configuration the advice predicts, its trusted runs' median
and spread set against the predicted speedup and its interval, inside or outside; the
measurement is what this machine did, said beside the prediction, never silently
contradicting it."""

from __future__ import annotations

import pandas as pd

from gpuscale.advice.measured_runs import Disagreement, Measured
from gpuscale.advice.types import maybe
from gpuscale.quantities import counted, format_ms, joined, number
from gpuscale.tables.advice import (
    TOO_WIDE_TO_TEST,
    as_throughput,
    on_advice_baseline,
    same_configuration,
)


def _grouped(measured: list[Measured]) -> dict[tuple, list[Measured]]:
    """The runs by the configuration they measured: count, per-device batch, accumulation
    and the one-device run they are against (every run of a count compared together)."""
    groups: dict[tuple, list[Measured]] = {}
    for m in measured:
        key = (m.devices, m.batch_per_device, m.accum, m.base or (m.batch_per_device, m.accum))
        groups.setdefault(key, []).append(m)
    return groups


def _spread(values: list[float]) -> str:
    """``0.199`` (one value) or ``median 0.2 (spread 0.18-0.22)``, of ``values``."""
    if len(values) == 1:
        return number(values[0])
    ordered = sorted(values)
    middle = float(pd.Series(ordered).median())
    return f"median {number(middle)} (spread {number(ordered[0])}-{number(ordered[-1])})"


def against_measured(
    predictions: pd.DataFrame,
    measured: list[Measured],
    alternative: pd.DataFrame | None = None,
    disagreeing: tuple[Disagreement, ...] = (),
) -> list[str]:
    """One sentence for each count the bench measured in a configuration the advice
    predicts (the same per-device batch and accumulation against the same one-device run,
    ``tables.advice.same_configuration``: in its predictions or, where those keep the
    global batch, in the weak-scaling ``alternative``): the trusted runs there (unflagged,
    or flagged and used with --allow-flagged), all of them, how many and their spread,
    set against the predicted speedup and its interval, inside or outside; the flagged runs
    left out said apart. A count in ``disagreeing`` (``advice.reconcile``) is said there,
    its row resting on the measurement, not here."""
    lines = []
    said_apart = {(d.accelerators, d.batch_per_device, d.accum) for d in disagreeing}
    throughput = [maybe(as_throughput, f) for f in (predictions, alternative)]
    for (devices, batch, accum, base), runs in _grouped(measured).items():
        # the prediction of the configuration measured, its one-device run too: a speedup
        # is a ratio of two runs (never another configuration's interval)
        row = same_configuration(throughput, devices, batch, accum, base)
        if row is None or (devices, batch, accum) in said_apart:
            continue
        low, high = float(row["speedup_low"]), float(row["speedup_high"])
        # the weak-scaling alternative's row where the advice's own keep the global batch
        weak = same_configuration(throughput[:1], devices, batch, accum, base) is None
        predicted = (
            f"the predicted {number(float(row['speedup']))} "
            f"({number(low)}-{number(high)}x, 80% interval"
            + (f"; weak scaling, per-device batch {batch} kept)" if weak else ")")
        )
        trusted = [m for m in runs if not m.flagged or m.allowed]
        left = [m for m in runs if m.flagged and not m.allowed]
        apart = (
            f"; {counted(len(left), 'flagged run')} left out (not trusted: "
            f"{joined([number(m.speedup) for m in left])})"
            if left
            else ""
        )
        if not trusted:
            middle = float(pd.Series([m.speedup for m in left]).median())
            lines.append(
                f"Measured on {devices} devices: throughput speedup "
                f"{joined([number(m.speedup) for m in left])} from "
                f"{counted(len(left), 'run')}, all flagged (not trusted), "
                f"{'inside' if low <= middle <= high else 'outside'} {predicted}."
            )
            continue
        # on the predictions' baseline (their one-device step: without DDP, or FSDP's one
        # rank), not the bench's bare step
        ons = [on_advice_baseline(throughput, base, m.samples_per_s) for m in trusted]
        own = [m.speedup for m in trusted]
        runs_said = counted(len(trusted), "trusted run")
        if all(ons):
            values = [on[0] for on in ons if on]
            said = (
                f"{_spread(values)} against the advice's one-device step "
                f"({format_ms(ons[0][1])} a step predicted, the baseline of the interval; "
                f"{_spread(own)} against the bench's bare N = 1 step)"
            )
        else:
            values = own
            said = _spread(own)
        speedup = float(pd.Series(values).median())
        said = f"Measured on {devices} devices: throughput speedup {said}, from {runs_said}"
        remedy = next((m.weak_remedy for m in trusted if m.weak_remedy), "")
        allowed = any(m.allowed for m in trusted)
        if low <= speedup <= high:
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

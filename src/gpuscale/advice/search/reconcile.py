"""Measurement and prediction reconciled: a count the bench measured in a configuration
predicted (``measured_counts``) whose trusted runs (unflagged, or allowed; where every run
is flagged, those) fall outside the 80% interval (``disagreements``) rests on them
(``applied``: their median, their spread as the interval)."""

from __future__ import annotations

import math
from collections.abc import Collection, Sequence

import pandas as pd

from gpuscale.advice.records import Measured, MeasuredCount
from gpuscale.advice.types import maybe
from gpuscale.tables.advice import as_throughput, same_configuration

# The prediction columns that scale with the step's throughput (x measured / predicted)
# and those that scale with its time (/ the same factor).
WITH_THROUGHPUT = ("samples_per_s", "speedup", "efficiency", "throughput_efficiency")
WITH_TIME = ("step_ms", "time_to_train_min", "accelerator_hours", "cost", "energy_kwh")


def measured_counts(
    predictions: pd.DataFrame,
    measured: Sequence[Measured],
    alternative: pd.DataFrame | None = None,
) -> tuple[MeasuredCount, ...]:
    """Each count the bench measured in a configuration predicted (in the ``predictions``,
    else the weak-scaling ``alternative``), its runs' throughput speedups as ``analyze
    --bench`` reads them, the median of those used and whether it lies inside the interval."""
    frames = [maybe(as_throughput, f) for f in (predictions, alternative)]
    groups: dict[tuple, list[Measured]] = {}
    for m in measured:
        key = (m.devices, m.batch_per_device, m.accum, m.base or (m.batch_per_device, m.accum))
        groups.setdefault(key, []).append(m)
    found = []
    for (devices, batch, accum, base), runs in groups.items():
        row = same_configuration(frames, devices, batch, accum, base)
        if row is None:
            continue
        trusted = tuple(m for m in runs if not m.flagged or m.allowed)
        used = trusted or tuple(runs)
        speedup = float(pd.Series([m.speedup for m in used], dtype=float).median())
        low, high = float(row["speedup_low"]), float(row["speedup_high"])
        found.append(
            MeasuredCount(
                accelerators=devices,
                batch_per_device=batch,
                accum=accum,
                base=tuple(base),
                predicted_speedup=float(row["speedup"]),
                predicted_low=low,
                predicted_high=high,
                weak_scaling=same_configuration(frames[:1], devices, batch, accum, base) is None,
                runs=tuple(runs),
                trusted=trusted,
                speedups=tuple(m.speedup for m in runs),
                measured_speedup=speedup,
                inside=low <= speedup <= high,
            )
        )
    return tuple(sorted(found, key=lambda c: c.accelerators))


def disagreements(counts: Sequence[MeasuredCount]) -> tuple[MeasuredCount, ...]:
    """Each measured count whose median lies outside the predicted 80% interval."""
    return tuple(c for c in counts if not c.inside)


def _governing(found: Sequence[MeasuredCount], n: int, measured: Collection[int]) -> list:
    """The disagreements a row at ``n`` devices rests on: those at ``n``; else, where no
    count in between was measured, those at the largest disagreeing count below."""
    at = [d for d in found if d.accelerators == n]
    below = [d.accelerators for d in found if d.accelerators < n]
    if at or not below:
        return at
    last = max(below)
    if any(last < k <= n for k in measured):
        return []  # a count measured in between agreed: the model holds from there
    return [d for d in found if d.accelerators == last]


def applied(
    frame: pd.DataFrame | None,
    found: Sequence[MeasuredCount],
    measured: Collection[int] = (),
) -> pd.DataFrame | None:
    """``frame`` with each row a disagreement governs (``_governing``; its own
    configuration's first) resting on the measurement: its throughput columns scaled by the
    measured over the predicted speedup, its time columns divided by it, its intervals the
    runs' relative range."""
    if frame is None or not found:
        return frame
    out = frame.copy()
    for i, row in frame.iterrows():
        at = _governing(found, int(row["accelerators"]), measured)
        if not at:
            continue
        config = (int(row["batch_per_device"]), int(row["accum"]))
        own = [x for x in at if (x.batch_per_device, x.accum) == config]
        d = (own or at)[0]
        factor = d.measured_speedup / d.predicted_speedup
        # the measured step split: the model's terms plus what they leave unexplained
        out.loc[i, "unexplained_ms"] = row["step_ms"] / factor - row["step_ms"]
        below = d.accelerators != row["accelerators"]
        out.loc[i, "rests_on"] = "measured_below" if below else "measured"
        for column in WITH_THROUGHPUT:
            out.loc[i, column] = row[column] * factor
        for column in WITH_TIME:
            out.loc[i, column] = row[column] / factor
        speedup, step = out.loc[i, "speedup"], out.loc[i, "step_ms"]
        seen, low, high = d.measured_speedup, d.measured_low, d.measured_high
        if low is None or high is None:  # one run: no interval (NaN)
            for column in ("speedup_low", "speedup_high", "step_ms_low", "step_ms_high"):
                out.loc[i, column] = math.nan
            continue
        out.loc[i, "speedup_low"] = speedup * low / seen
        out.loc[i, "speedup_high"] = speedup * high / seen
        # the step's interval the speedup's, inverted: the runs' range, not the model's
        out.loc[i, "step_ms_low"] = step * seen / high
        out.loc[i, "step_ms_high"] = step * seen / low
    return out

"""The bench's measured counts beside the predictions: ``measured_counts`` pairs each count the
bench ran with the row of its configuration (:class:`MeasuredCount`: inside or outside its
80% interval), ``applied`` rests each row a disagreement governs on the runs (its terms
scaled, the runs' range as its interval)."""

from __future__ import annotations

import math
from collections.abc import Collection, Sequence
from typing import TYPE_CHECKING

import pandas as pd

from gpuscale.advice.records import measured_at
from gpuscale.advice.types import MeasuredCount
from gpuscale.tables.advice import as_throughput, same_configuration

if TYPE_CHECKING:
    from gpuscale.advice.types import Measured

# the prediction columns that scale with the step's throughput, with its time
WITH_THROUGHPUT = ["samples_per_s", "speedup", "efficiency", "throughput_efficiency"]
WITH_TIME = ["step_ms", "time_to_train_min", "accelerator_hours", "cost", "energy_kwh"]
# the model's terms of a step (ms) and their parts: the step predicted is the sum of
# compute, wait, ddp and exposed communication; fixed excess is part of compute, latency
# of the whole communication (hidden or not)
TERMS = [
    "compute_ms",
    "ddp_ms",
    "wait_ms",
    "exposed_comm_ms",
    "comm_ms",
    "latency_ms",
    "fixed_excess_ms",
]
INTERVALS = ["speedup_low", "speedup_high", "step_ms_low", "step_ms_high"]


def measured_counts(
    predictions: pd.DataFrame,
    measured: Sequence[Measured],
    alternative: pd.DataFrame | None = None,
) -> tuple[MeasuredCount, ...]:
    """The :class:`MeasuredCount` of each count the bench measured in a configuration
    predicted (else in the weak-scaling ``alternative``)."""
    frames = [None if f is None else as_throughput(f) for f in (predictions, alternative)]
    groups: dict[tuple, list[Measured]] = {}
    for m in measured:
        key = (m.devices, m.batch_per_device, m.accum, m.base or (m.batch_per_device, m.accum))
        groups.setdefault(key, []).append(m)
    found = []
    for (devices, batch, accum, base), runs in groups.items():
        row = same_configuration(frames, devices, batch, accum, base)
        if row is None:
            continue
        kept = tuple(m for m in runs if not m.flagged or m.allowed)
        used = kept or tuple(runs)
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
                trusted=kept,
                speedups=tuple(m.speedup for m in runs),
                measured_speedup=speedup,
                inside=low <= speedup <= high,
            )
        )
    return tuple(sorted(found, key=lambda c: c.accelerators))


def applied(
    frame: pd.DataFrame, found: Sequence[MeasuredCount], measured: Collection[int]
) -> pd.DataFrame:
    """``frame`` with each row a disagreement governs (at its count, its own configuration's
    first; above it, up to the next count ``measured``) resting on the measurement."""
    out = frame.copy()
    for i, row in frame.iterrows():
        n = int(row["accelerators"])
        d = measured_at(found, n)
        if d is None or any(d.accelerators < k <= n for k in measured):
            continue  # none at or below, or a count measured in between agreed
        key = (d.accelerators, int(row["batch_per_device"]), int(row["accum"]))
        d = next((x for x in found if (x.accelerators, x.batch_per_device, x.accum) == key), d)
        factor = d.measured_speedup / d.predicted_speedup
        modelled_ms = float(row["step_ms"])
        if factor > 1:  # measured shorter: the model's split of it, each term in proportion
            out.loc[i, TERMS] = (row[TERMS] / factor).to_numpy(float)
            out.loc[i, "unexplained_ms"] = 0.0
        else:  # measured longer: the model's terms plus what they leave unexplained
            out.loc[i, "unexplained_ms"] = modelled_ms / factor - modelled_ms
        out.loc[i, "rests_on"] = "measured" if d.accelerators == n else "measured_below"
        out.loc[i, WITH_THROUGHPUT] = (row[WITH_THROUGHPUT] * factor).to_numpy(float)
        out.loc[i, WITH_TIME] = (row[WITH_TIME] / factor).to_numpy(float)
        speedup, step = out.loc[i, "speedup"], out.loc[i, "step_ms"]
        seen, low, high = d.measured_speedup, d.measured_low, d.measured_high
        if low is None or high is None:  # one run: no interval
            out.loc[i, INTERVALS] = math.nan
            continue
        # the step's interval the speedup's, inverted: the runs' range, not the model's
        ends = [speedup * low / seen, speedup * high / seen, step * seen / high, step * seen / low]
        out.loc[i, INTERVALS] = ends
    return out

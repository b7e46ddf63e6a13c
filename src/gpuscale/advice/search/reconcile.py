"""Measurement and prediction reconciled (issue 60 item 4): where the bench measured a
count in the configuration the advice predicts and its runs fall outside the predicted
80% interval, the count's row rests on the measurement (its median, the runs' spread as
the interval) and the disagreement is data (:class:`Disagreement`), said first.

Which runs are trusted: the unflagged ones (and flagged ones used with --allow-flagged);
where every run at the count is flagged, those runs, with their flags, since they are
still what the machine did and the model only extrapolates the one-device run: a model a
measurement contradicts never stands alone.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

import pandas as pd

from gpuscale.advice.types import (
    TRUSTED_ALLOWED,
    TRUSTED_FLAGGED_ONLY,
    TRUSTED_UNFLAGGED,
    Disagreement,
    Measured,
)
from gpuscale.tables.advice import as_throughput, same_configuration

# The prediction columns that scale with the step's throughput (x measured / predicted)
# and those that scale with its time (/ the same factor).
WITH_THROUGHPUT = ("samples_per_s", "speedup", "efficiency", "throughput_efficiency")
WITH_TIME = ("step_ms", "time_to_train_min", "accelerator_hours", "cost", "energy_kwh")


def _median(values: Sequence[float]) -> float:
    return float(pd.Series(list(values), dtype=float).median())


def disagreements(
    predictions: pd.DataFrame,
    measured: Sequence[Measured],
    alternative: pd.DataFrame | None = None,
) -> tuple[Disagreement, ...]:
    """Each count whose trusted runs' median throughput speedup lies outside the predicted
    80% interval of the same configuration (``tables.advice.same_configuration``: in the
    ``predictions``, else the weak-scaling ``alternative``)."""
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
        trusted = [m for m in runs if not m.flagged or m.allowed]
        why = TRUSTED_UNFLAGGED if trusted else TRUSTED_FLAGGED_ONLY
        why = TRUSTED_ALLOWED if any(m.allowed for m in trusted) else why
        used = trusted or runs
        # the bench's own speedup: its runs' throughput against its N = 1 run's, one kind
        # of measurement on both sides (the predictions' baseline is the model's step, which
        # a run's samples/s need not share: a test file's 100/s beside a 3.5 ms step read
        # 0.03x where its steps said 0.67x)
        every = [m.speedup for m in runs]
        values = [v for m, v in zip(runs, every, strict=True) if m in used]
        left = [v for m, v in zip(runs, every, strict=True) if m.flagged and not m.allowed]
        speedup = _median(values)
        low, high = float(row["speedup_low"]), float(row["speedup_high"])
        if low <= speedup <= high:
            continue
        flagged = [m for m in runs if m.flagged]
        found.append(
            Disagreement(
                accelerators=devices,
                batch_per_device=batch,
                accum=accum,
                measured_speedup=speedup,
                measured_low=min(values),
                measured_high=max(values),
                predicted_speedup=float(row["speedup"]),
                predicted_low=low,
                predicted_high=high,
                runs=tuple(every),
                trusted_runs=tuple(values),
                left_out=tuple(left) if trusted else (),
                why=why,
                bench_speedups=tuple(m.speedup for m in runs),
                flags=tuple(dict.fromkeys(m.flags for m in flagged if m.flags)),
                weak_scaling=same_configuration(frames[:1], devices, batch, accum, base) is None,
                weak_evidence=next((m.weak_remedy for m in used if m.weak_remedy), ""),
            )
        )
    return tuple(sorted(found, key=lambda d: d.accelerators))


def _governing(found: Sequence[Disagreement], n: int, measured: Collection[int]) -> list:
    """The disagreements a row at ``n`` devices rests on: those at ``n``; else, where the
    bench measured no count in between, those at the largest disagreeing count below (a
    model that missed a measured count is not trusted to recover above it)."""
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
    found: Sequence[Disagreement],
    measured: Collection[int] = (),
) -> pd.DataFrame | None:
    """``frame`` (the predictions, or the weak-scaling alternative) with every row at a
    disagreeing count resting on the measurement there: its throughput columns scaled by
    the measured over the predicted throughput speedup of the configuration measured (its
    own where the row is that configuration, so the row then says the measured median),
    its time columns divided by it, its speedup interval the runs' relative range. A
    count's other configurations (strong scaling's smaller per-device batch) take the same
    factor: the model missed what the count measured, not only one batch; so do the
    counts above it up to the next count ``measured`` (``_governing``)."""
    if frame is None or not found:
        return frame
    out = frame.copy()
    for i, row in frame.iterrows():
        at = _governing(found, int(row["accelerators"]), measured)
        own = [
            d
            for d in at
            if (d.batch_per_device, d.accum) == (int(row["batch_per_device"]), int(row["accum"]))
        ]
        if not at:
            continue
        d = (own or at)[0]
        factor = d.measured_speedup / d.predicted_speedup
        for column in WITH_THROUGHPUT:
            if column in out:
                out.loc[i, column] = row[column] * factor
        for column in WITH_TIME:
            if column in out:
                out.loc[i, column] = row[column] / factor
        speedup = out.loc[i, "speedup"]
        out.loc[i, "speedup_low"] = speedup * d.measured_low / d.measured_speedup
        out.loc[i, "speedup_high"] = speedup * d.measured_high / d.measured_speedup
    return out

"""The advice predictions table (``gpuscale advise``, ``gpuscale.advise(...).predictions``):
one row per accelerator count considered, at its best (batch, accumulation).

Columns (units in the names; dtypes in :data:`ADVICE_SCHEMA`):

* ``accelerators``: accelerators of the predicted run;
* ``batch_per_device``, ``accum``, ``global_batch``: the per-accelerator batch chosen,
  its gradient-accumulation steps and ``accelerators * batch_per_device * accum``;
* ``step_ms`` and its parts, ms: ``compute_ms``, ``ddp_ms`` (DDP's own work),
  ``wait_ms`` (the slowest accelerator), ``comm_ms``, ``latency_ms`` (one latency per
  collective: DDP's buckets, FSDP's two all-gathers and reduce-scatter; at most
  ``comm_ms``), ``exposed_comm_ms`` (not hidden behind backward);
* ``samples_per_s``; ``samples_to_train`` at ``global_batch`` (the convergence model's
  ``E(B)``, else the samples given);
* ``time_to_train_min``: predicted time to a trained model (minutes);
* ``speedup`` (time to train at the first count over this one's: one device without
  DDP's own work, which only the counts above 1 pay in ``ddp_ms``), ``efficiency``
  (``speedup / accelerators`` relative to the first count), split into
  ``throughput_efficiency`` x ``convergence_factor``;
* ``accelerator_hours`` (``accelerators * time_to_train_min / 60``), ``cost``
  (``accelerator_hours *`` the price per accelerator-hour; NaN without one),
  ``energy_kwh`` (time x the job's power; NaN without a power);
* ``fixed_excess_ms``: the fixed per-step costs (each forward and backward's fixed cost,
  the optimizer step) the step at N pays above its share of one device's compute;
* ``unexplained_ms``: the step less the sum of the model's terms: 0 where the row is
  predicted; where it rests on a measurement longer than the modelled step, the measured
  step less the modelled one (the terms as modelled); where on one shorter, 0 (the terms
  scaled down to the measured step in proportion: no term is longer than its step);
* ``step_ms_low``, ``step_ms_high``, ``speedup_low``, ``speedup_high``: the 80% interval;
* ``energy_source``, ``compute_source`` (``measured`` or ``modelled``): where those came
  from; ``rests_on``: what the row's step rests on: ``predicted`` (the model),
  ``measured`` (runs at this count, outside the predicted interval: their median, their
  range the interval), ``derived`` (no run at the row's per-device batch: the model's row
  times the ratio of the measurement at its count in another configuration to the model's
  prediction for it, its range the interval) or ``measured_below`` (the miss measured at a
  count below, carried up); ``fits``: whether the row's devices hold the model under the
  strategy advised (``hardware.memory``; such a row is never advised); ``flags``: why the
  row cannot be true (empty when plausible).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pandas as pd

# Each column in order with the dtype its frame holds.
ADVICE_SCHEMA: dict[str, str] = {
    "accelerators": "int64",
    "batch_per_device": "int64",
    "accum": "int64",
    "global_batch": "int64",
    "step_ms": "float64",
    "compute_ms": "float64",
    "ddp_ms": "float64",
    "wait_ms": "float64",
    "comm_ms": "float64",
    "latency_ms": "float64",
    "exposed_comm_ms": "float64",
    "samples_per_s": "float64",
    "samples_to_train": "float64",
    "time_to_train_min": "float64",
    "speedup": "float64",
    "efficiency": "float64",
    "throughput_efficiency": "float64",
    "convergence_factor": "float64",
    "accelerator_hours": "float64",
    "cost": "float64",
    "energy_kwh": "float64",
    "fixed_excess_ms": "float64",
    "unexplained_ms": "float64",
    "step_ms_low": "float64",
    "step_ms_high": "float64",
    "speedup_low": "float64",
    "speedup_high": "float64",
    "energy_source": "str",
    "compute_source": "str",
    "rests_on": "str",
    "fits": "bool",
    "flags": "str",
}
ADVICE_COLUMNS: tuple[str, ...] = tuple(ADVICE_SCHEMA)
# a row's flag where its time to train cannot be true (the search keeps it as data)
NOT_POSITIVE = "time to train not positive and finite"


# An 80% interval whose ends differ by more than this factor tests no prediction: it
# holds both half and twice its middle (0.037-1.93x, a factor of 52, held anything); the
# report's check and the advice's caveat both say so
TOO_WIDE_TO_TEST = 4.0


def wide_factor(low: float, high: float) -> float | None:
    """An interval's width ``high / low`` where over ``TOO_WIDE_TO_TEST`` (infinite where it
    reaches 0); None where narrower or NaN."""
    if math.isnan(low) or math.isnan(high) or (low > 0 and high / low <= TOO_WIDE_TO_TEST):
        return None
    return math.inf if low <= 0 else high / low


def as_throughput(predictions: pd.DataFrame) -> pd.DataFrame:
    """The predictions as a bench measures them: the speedup in throughput over one
    device's (``throughput_efficiency x N``: no convergence factor), its 80% interval
    scaled alike, the upper end never above N (linear: a time-to-train interval clipped at
    its own ideal, scaled, went past it: 2.47x on 2 devices) unless the value itself is."""
    import numpy as np  # lazy: the schema above is read without numpy

    n = predictions["accelerators"].astype(float)
    throughput = predictions["throughput_efficiency"] * n
    scale = throughput / predictions["speedup"]
    return predictions.assign(
        speedup=throughput,
        speedup_low=predictions["speedup_low"] * scale,
        speedup_high=(predictions["speedup_high"] * scale).clip(upper=np.maximum(n, throughput)),
        efficiency=predictions["throughput_efficiency"],
    )


def same_configuration(
    frames: list[pd.DataFrame | None],
    accelerators: int,
    batch_per_device: int,
    accum: int,
    base: tuple[int, int],
) -> pd.Series | None:
    """The first row among ``frames`` (prediction tables: the advice's, then its
    weak-scaling alternative) that predicts the configuration a bench run measured:
    ``accelerators`` at its per-device batch and accumulation, in a table whose first
    row (one device: what its speedups are against) runs ``base``, the (per-device batch,
    accumulation) of the N = 1 run the measured speedup is against. A speedup is a ratio
    of two runs: both must be the measured ones, else another configuration's prediction
    is compared (strong scaling's 4 per device against a run of 8 per device). None where
    no frame predicts it."""
    for frame in frames:
        if frame is None or frame.empty:
            continue
        first = frame.iloc[0]
        if (int(first["batch_per_device"]), int(first["accum"])) != tuple(base):
            continue
        rows = frame[
            (frame["accelerators"] == accelerators)
            & (frame["batch_per_device"] == batch_per_device)
            & (frame["accum"] == accum)
        ]
        if len(rows):
            return rows.iloc[0]
    return None

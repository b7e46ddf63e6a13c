"""The 80% intervals of a predictions table (``recommend.predictions``): every row's
step and speedup re-predicted at the ends of the fixed cost's range and of the priors'
ranges, then widened by the step's error at N (``advice/step_error.py``)."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pandas as pd

from gpuscale.advice.fixed_cost import resplit
from gpuscale.advice.inputs import AdviceInputs


def _across(inputs: AdviceInputs, frame: pd.DataFrame) -> list[tuple[np.ndarray, ...]]:
    """(steps, speedups) of every row at its (batch, accumulation) with the fixed cost
    at its point, and at the ends of its range where that is uncertain (the measured step
    kept: ``fixed_cost.resplit``) and of the priors' ranges (``advice/priors.py``)."""
    found = [(frame["step_ms"].to_numpy(float), frame["speedup"].to_numpy(float))]
    fixed = inputs.fixed
    computes = list(inputs.prior_range)
    if fixed is not None and fixed.uncertain:
        computes += [
            resplit(inputs.compute, inputs.model, fixed.at_batch, value)
            for value in (fixed.low_ms, fixed.high_ms)
        ]
    for compute in computes:
        other = replace(inputs, compute=compute)
        steps = np.array(
            [
                other.step(int(r.accelerators), r.batch_per_device, int(r.accum)).step_ms
                for r in frame.itertuples()
            ]
        )
        time = (
            frame["samples_to_train"].to_numpy(float)
            * steps
            / frame["global_batch"].to_numpy(float)
        )
        found.append((steps, time[0] / time))
    return found


def add_intervals(frame: pd.DataFrame, inputs: AdviceInputs, ideal: pd.Series) -> None:
    """The 80% intervals of the step and the speedup: over the fixed cost's range, then
    ``x exp(-/+ width at N)`` of the step's error; the speedup's upper end never above
    ``ideal`` (linear)."""
    width = np.array([inputs.error.width_at(int(n)) for n in frame["accelerators"]])
    steps, speedups = zip(*_across(inputs, frame), strict=True)
    frame["step_ms_low"] = np.min(steps, axis=0) * np.exp(-width)
    frame["step_ms_high"] = np.max(steps, axis=0) * np.exp(width)
    frame["speedup_low"] = np.min(speedups, axis=0) * np.exp(-width)
    high = pd.Series(np.max(speedups, axis=0) * np.exp(width), index=frame.index)
    frame["speedup_high"] = high.clip(upper=ideal)

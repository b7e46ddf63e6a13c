"""The step's 80% interval at N > 1 from a bench file: leave-one-out over the bench's
models with N > 1 rows (each calibrated on the others, ``step_error.leave_one_out``),
and the advised model's own N > 1 runs against its calibration
(``step_error.with_own_runs``)."""

from __future__ import annotations

from typing import Any

import pandas as pd

from gpuscale.advice.calibrate import CalibrationError, calibrate, with_comm_scale
from gpuscale.advice.model import predict_step
from gpuscale.advice.network import Network
from gpuscale.advice.step_error import StepError, leave_one_out, with_own_runs


def step_error(table: pd.DataFrame, network: Network, cal: Any) -> StepError:
    """The 80% interval of the step at N > 1: leave-one-out over the bench's models with
    N > 1 rows of the configuration advised on (see ``step_error``)."""

    def predict(rest: pd.DataFrame, model: str, ns: list[int]) -> list[float | None]:
        try:
            other = calibrate(rest, model, network)
        except (CalibrationError, ValueError):
            return [None] * len(ns)
        if other.device != cal.device or other.device_name != cal.device_name:
            return [None] * len(ns)
        return steps(other, ns)

    def steps(other: Any, ns: list[int]) -> list[float | None]:
        overlap = other.overlap
        if overlap is None and other.device == "cpu":
            overlap = 0.0  # as the advice itself does
        scaled = with_comm_scale(network, other)
        return [
            predict_step(
                other.model,
                other.compute,
                scaled,
                n,
                batch=other.batch,
                accum=other.accum,
                overlap=overlap,
                bucket_mb=other.bucket_mb,
                strategy=other.strategy,
            ).step_ms
            for n in ns
        ]

    ok = table[(table["status"] == "ok") & ~table["flagged"].fillna(False).astype(bool)]
    own = ok[(ok["config_group"] == cal.config_group) & (ok["accelerators"] > 1)]
    own = own.dropna(subset=["step_ms_mean"])
    ns = [int(n) for n in own["accelerators"]]
    predicted = steps(cal, ns)  # the calibration advised on, not calibrated again
    measured = own["step_ms_mean"].astype(float).tolist()
    return with_own_runs(
        leave_one_out(table, network, predict), list(zip(measured, predicted, strict=True))
    )

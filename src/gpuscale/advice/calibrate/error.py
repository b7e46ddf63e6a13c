"""The step's 80% interval at N > 1 from a bench file (:func:`step_error`)."""

from __future__ import annotations

from dataclasses import replace

import pandas as pd

from gpuscale.advice.calibrate.calibration import calibrate
from gpuscale.advice.calibrate.measured import read_comm
from gpuscale.advice.calibrate.rows import CalibrationError
from gpuscale.advice.calibration import Benched
from gpuscale.advice.measured_runs import trusted_runs
from gpuscale.advice.model.priors import StepError, leave_one_out, with_own_runs
from gpuscale.advice.model.step import step_of
from gpuscale.interconnect.network import Network


def step_error(table: pd.DataFrame, network: Network, cal: Benched) -> StepError:
    """The 80% interval of the step at N > 1 from a bench file: leave-one-out over the
    bench's models with N > 1 rows of the configuration advised on (each calibrated on the
    others, ``priors.leave_one_out``), and ``cal``'s own N > 1 runs against it
    (``priors.with_own_runs``)."""

    def predict(rest: pd.DataFrame, model: str, ns: list[int]) -> list[float | None]:
        try:
            other, _ = read_comm(calibrate(rest, model), rest, network)
        except (CalibrationError, ValueError):
            return [None] * len(ns)
        same_kind = other.bench.device_kind == cal.bench.device_kind
        if not same_kind or other.device.name != cal.device.name:
            return [None] * len(ns)
        return steps(other, ns)

    def steps(other: Benched, ns: list[int]) -> list[float | None]:
        run = other.run
        if run.overlap is None and other.bench.device_kind == "cpu":
            run = replace(run, overlap=0.0)  # as the advice itself does
        scaled = network.scaled(other.bench.comm_scale)
        model = other.model
        return [
            step_of(
                scaled, run, model.spec, model.compute, n, batch=run.batch, accum=run.accum
            ).step_ms
            for n in ns
        ]

    ok = trusted_runs(table)
    own = ok[(ok["config_group"] == cal.bench.config_group) & (ok["accelerators"] > 1)]
    own = own.dropna(subset=["step_ms_mean"])
    ns = [int(n) for n in own["accelerators"]]
    predicted = steps(cal, ns)  # the calibration advised on, not calibrated again
    measured = own["step_ms_mean"].astype(float).tolist()
    return with_own_runs(
        leave_one_out(table, network, predict), list(zip(measured, predicted, strict=True))
    )

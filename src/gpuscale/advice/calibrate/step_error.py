"""The step's 80% interval at N > 1 (:func:`step_error`): each model with N > 1 bench rows
left out in turn (at most ``MAX_LEFT_OUT``), its N > 1 steps predicted from the rest; the
``k`` log errors ``r`` give the half-width ``z_0.9 sqrt(mean r^2) sqrt(1 + 1/k)``. Without
them, ``priors.EXTRAPOLATED``; the advised model's own N > 1 runs are said beside it."""

from __future__ import annotations

import math
from dataclasses import replace

import pandas as pd

from gpuscale.advice.calibrate.calibration import calibrate
from gpuscale.advice.calibrate.measured import read_comm
from gpuscale.advice.calibrate.rows import CalibrationError
from gpuscale.advice.calibration import Benched
from gpuscale.advice.model.priors import EXTRAPOLATED, StepError
from gpuscale.advice.model.step import step_table
from gpuscale.advice.records import trusted_runs
from gpuscale.advice.types import Finding, FindingKind
from gpuscale.bench.summary import Z80
from gpuscale.interconnect.network import Network

MAX_LEFT_OUT = 10  # models left out in turn, one calibration each: the interval's cost capped
FEW_RESIDUALS = 3  # fewer leave-one-out errors than this give no spread of their own


def from_residuals(
    residuals: list[float],
    measured_n: int,
    chosen: int | None = None,
    models: int | None = None,
) -> StepError:
    """The interval of the log errors ``residuals`` of the measured N > 1 steps (``chosen``
    of the ``models`` where not all were left out)."""
    r = [float(e) for e in residuals if math.isfinite(e)]
    if len(r) == 0:
        return StepError()
    width = Z80 * math.sqrt(sum(e * e for e in r) / len(r)) * math.sqrt(1 + 1 / len(r))
    low, high = math.exp(min(r)) - 1, math.exp(max(r)) - 1
    few = None
    if len(r) < FEW_RESIDUALS:  # one or two errors are no spread: never narrower than none
        width = max(width, EXTRAPOLATED)
        few = len(r)
    source = Finding.of(
        FindingKind.STEP_LEFT_OUT,
        width_log=width,
        predictions=len(r),
        chosen=chosen,
        models=models,
        low=low,
        high=high,
        ends_alike=f"{low:+.0%}" == f"{high:+.0%}",  # to the percent shown: one error
        few=few,
        own=(),
    )
    return StepError(
        width_log=max(width, math.log(1.02)),
        measured_n=measured_n,
        source=source,
        residuals=tuple(r),
    )


def _steps(cal: Benched, network: Network, ns: list[int]) -> list[float | None]:
    """The steps (ms) of ``cal`` at each N of ``ns`` on ``network`` scaled."""
    run = cal.run
    if run.overlap is None and cal.bench.device_kind == "cpu":
        run = replace(run, overlap=0.0)  # as the advice itself does
    scaled = network.scaled(cal.bench.comm_scale)
    model = cal.model
    candidates = [(n, run.batch, run.accum) for n in ns]
    rows = step_table(scaled, run, model.spec, (model.compute,), candidates)
    return [row[0].step_ms for row in rows]


def step_error(table: pd.DataFrame, network: Network, cal: Benched) -> StepError:
    """Each model with N > 1 trusted rows predicted without them (at most ``MAX_LEFT_OUT``,
    spread evenly over the sizes, the smallest and largest among them), saying also how far
    ``cal`` is from its own N > 1 runs."""
    ok = trusted_runs(table)
    multi = ok[ok["accelerators"] > 1].dropna(subset=["step_ms_mean"])
    sizes = multi.groupby("model")["params"].max().astype(float).to_dict()
    models = [str(m) for m in multi["model"].unique()]
    chosen = sorted(models, key=lambda m: (sizes.get(m, 0.0), m))
    if len(chosen) > MAX_LEFT_OUT:
        last = len(chosen) - 1
        picks = {round(i * last / (MAX_LEFT_OUT - 1)) for i in range(MAX_LEFT_OUT)}
        chosen = [chosen[i] for i in sorted(picks)]
    residuals, largest = [], 1
    for model in chosen:
        rows = multi[multi["model"] == model]
        rest = ok[~((ok["model"] == model) & (ok["accelerators"] > 1))]
        ns = [int(n) for n in rows["accelerators"]]
        # calibrated on the rest; none where it cannot be, or on another device than ``cal``
        try:
            other, _ = read_comm(calibrate(rest, model), rest, network)
        except (CalibrationError, ValueError):
            continue
        kind = other.bench.device_kind
        if kind != cal.bench.device_kind or other.device.name != cal.device.name:
            continue
        predicted = _steps(other, network, ns)
        for n, measured, step in zip(
            ns, rows["step_ms_mean"].astype(float), predicted, strict=True
        ):
            if step and step > 0:
                residuals.append(math.log(measured / step))
                largest = max(largest, n)
    spread = len(chosen) < len(models)  # not all left out: how many, of how many
    of = (len(chosen), len(models)) if spread else (None, None)
    error = from_residuals(residuals, largest, *of)
    own = ok[(ok["config_group"] == cal.bench.config_group) & (ok["accelerators"] > 1)]
    own = own.dropna(subset=["step_ms_mean"])
    ns = [int(n) for n in own["accelerators"]]
    predicted = _steps(cal, network, ns)  # the calibration advised on, not calibrated again
    pairs = zip(own["step_ms_mean"].astype(float).tolist(), predicted, strict=True)
    r = [math.log(m / p) for m, p in pairs if p and p > 0 and m > 0]
    if not r:
        return error
    low, high = math.exp(min(r)) - 1, math.exp(max(r)) - 1
    found = Finding.of(FindingKind.STEP_OWN_RUNS, runs=len(r), low=low, high=high)
    return replace(error, source=error.source.with_values(own=(found,)))

"""The step interval each row of the predictions carries (``step_interval``), and why it is
not the model's error alone (the ends of the ranges of terms not measured, the compute
floor, the cap at linear, the width growing past the counts measured; or the speedup's
interval calibrated per link class, said after), or the runs' own range where a row rests
on a measurement (its ``rests_on``)."""

from __future__ import annotations

import math

import pandas as pd

from gpuscale.advice.calibration import Calibration
from gpuscale.advice.explain import findings
from gpuscale.advice.explain.view import AdviceView
from gpuscale.advice.measured_runs import TRUSTED_FLAGGED_ONLY
from gpuscale.quantities import agreeing, counted, filled, joined

TOLERANCE = 0.01  # interval ends within 1% of the error's are the error's


def _span(row: pd.Series, column: str) -> str:
    """``-25% to +25%``: the row's interval of ``column`` around its point."""
    low, high = row[f"{column}_low"] / row[column], row[f"{column}_high"] / row[column]
    return f"{low - 1:+.0%} to {high - 1:+.0%}"


def _measured(advice: AdviceView, row: pd.Series) -> str:
    """``2 devices rest on the measurement: speedup -25% to +25%, the range of 3 runs,
    all flagged``."""
    n = int(row["accelerators"])
    found = [m for m in getattr(advice, "disagreements", ()) if m.accelerators <= n]
    m = max(found, key=lambda m: m.accelerators, default=None)
    runs, spread = "", f"speedup {_span(row, 'speedup')}"
    if m is not None:
        flagged = ", all flagged" if m.evidence.why == TRUSTED_FLAGGED_ONLY else ""
        runs = f", the range of {counted(len(m.evidence.trusted_runs), 'run')}{flagged}"
        if m.measured.no_interval:  # one run: a value, no range
            spread, runs = "no interval", f" ({m.measured.no_interval}{flagged})"
        if m.accelerators < n:
            runs += f" at {counted(m.accelerators, 'device')}"
    return (
        f"{counted(n, 'device')} {agreeing(n, 'rests', 'rest')} on the measurement, not the "
        f"model: {spread}{runs}"
    )


def _why(cal: Calibration, rows: pd.DataFrame) -> list[str]:
    """Why the predicted rows' intervals are not the model's error alone, from the rows'
    own ends against the error's width at each count."""
    why: list[str] = []
    width = {int(n): cal.model.error.width_at(int(n)) for n in rows["accelerators"]}
    step = rows["step_ms"].astype(float)
    low = rows["step_ms_low"] / step
    high = rows["step_ms_high"] / step
    error_low = rows["accelerators"].map(lambda n: math.exp(-width[int(n)]))
    error_high = rows["accelerators"].map(lambda n: math.exp(width[int(n)]))
    if ((high > error_high * (1 + TOLERANCE)) | (low < error_low * (1 - TOLERANCE))).any():
        why.append("the step at the ends of the ranges of the terms not measured (above)")
    if (low > error_low * (1 + TOLERANCE)).any():
        why.append("the step's lower end no lower than its compute")
    speedup = rows["speedup"].astype(float)
    if (rows["speedup_high"] / speedup < step / rows["step_ms_low"] * (1 - TOLERANCE)).any():
        why.append("the speedup's upper end no higher than compute alone or linear allow")
    if len({round(w, 9) for w in width.values()}) > 1:
        why.append("the error's width growing past the counts measured")
    return why


def step_interval(advice: AdviceView, source: str) -> str:
    """The step interval: ``source`` (the model's error, as the priors say it), then the
    interval each row carries, and why it differs from the error alone, or that it rests
    on the runs' range where the row rests on a measurement."""
    frame = advice.predictions
    rows = frame[frame["accelerators"] > 1]
    predicted = rows[rows["rests_on"] == "predicted"]
    resting = rows[rows["rests_on"] != "predicted"]
    said = [f"Step interval: {'for the counts predicted, ' if len(resting) else ''}{source}"]
    if len(predicted):
        carried = [
            f"{counted(int(r['accelerators']), 'device')} step {_span(r, 'step_ms')}, "
            f"speedup {_span(r, 'speedup')}"
            for _, r in predicted.iterrows()
        ]
        why = _why(advice.calibration, predicted)
        if advice.interval is not None:  # the speedup's interval is the calibrated rule's
            why = ["the speedup's interval calibrated per link class (next)"]
        said.append(
            f"the rows carry {'; '.join(carried)}"
            + filled(" (differing from that error by {})", joined(why))
        )
    said += [_measured(advice, r) for _, r in resting.iterrows()]
    calibrated = f". Speedup interval: {findings.said(advice.interval)}" if advice.interval else ""
    return "; ".join(said) + calibrated

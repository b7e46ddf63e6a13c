"""A row resting on a measurement: its terms agree with the step it says. Seen (a new
user's ``bench --backend gloo --nproc 1,2 --steps 5``, ``advise --allow-flagged``): 2
devices at a measured 3.559 ms a step beside the model's compute 4.388, wait 6.98, DDP's
copies 7.171 and exposed communication 5.485 ms, ``unexplained_ms`` -20.465: terms longer
than the step they are part of. A measured step longer than the model's keeps the terms
and says the rest as ``unexplained_ms`` (the part the model's terms do not explain); a
shorter one scales the model's terms down to it, nothing unexplained."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from hypothesis import example, given
from hypothesis import strategies as st
from typer.testing import CliRunner

from gpuscale.advice.search.decide import applied
from gpuscale.advice.types import Measured, MeasuredCount
from gpuscale.cli import app

from .test_reconcile import _file

HERE = Path(__file__).parent
# the terms whose sum is the step, and the parts of them
SUMMED = ("compute_ms", "ddp_ms", "wait_ms", "exposed_comm_ms")
PARTS = ("fixed_excess_ms",)  # of compute
ROWS = ("predictions", "weak_scaling")
MS = st.floats(0.0, 50.0)


def _frame(compute: float, ddp: float, wait: float, exposed: float) -> pd.DataFrame:
    """One device at ``compute`` ms, and 2 devices predicted at those terms (each device
    half the batch: half the compute, the rest fixed excess)."""
    rows = []
    for n, terms in ((1, (2 * compute, 0.0, 0.0, 0.0)), (2, (compute, ddp, wait, exposed))):
        step = sum(terms)
        rows.append(
            {
                "accelerators": n,
                "batch_per_device": 8 // n,
                "accum": 1,
                **dict(zip(SUMMED, terms, strict=True)),
                "comm_ms": 2 * terms[3],
                "latency_ms": terms[3] / 2,
                "fixed_excess_ms": terms[0] / 4 if n > 1 else 0.0,
                "step_ms": step,
                "samples_per_s": 8 / step * 1e3,
                "time_to_train_min": step,
                "accelerator_hours": n * step / 60,
                "cost": float("nan"),
                "energy_kwh": float("nan"),
                "unexplained_ms": 0.0,
                "rests_on": "predicted",
            }
        )
    frame = pd.DataFrame(rows)
    speedup = frame["time_to_train_min"].iloc[0] / frame["time_to_train_min"]
    frame["speedup"] = speedup
    frame["efficiency"] = frame["throughput_efficiency"] = speedup / frame["accelerators"]
    for column in ("speedup", "step_ms"):
        frame[f"{column}_low"], frame[f"{column}_high"] = frame[column], frame[column]
    return frame


def _found(frame: pd.DataFrame, miss: float) -> MeasuredCount:
    """The runs at 2 devices at ``miss`` x the predicted speedup (outside its interval)."""
    predicted = float(frame["speedup"].iloc[1])
    runs = tuple(
        Measured(devices=2, speedup=predicted * m, flagged=False, batch_per_device=4)
        for m in (miss * 0.9, miss, miss * 1.1)
    )
    return MeasuredCount(
        accelerators=2,
        batch_per_device=4,
        accum=1,
        base=(8, 1),
        predicted_speedup=predicted,
        predicted_low=predicted,
        predicted_high=predicted,
        weak_scaling=False,
        runs=runs,
        trusted=runs,
        speedups=tuple(m.speedup for m in runs),
        measured_speedup=predicted * miss,
        inside=False,
        basis=("bare",),
    )


def _agree(row: dict | pd.Series) -> None:
    """The row's terms and what they leave sum to its step, none longer than it."""
    step = float(row["step_ms"])
    assert sum(float(row[t]) for t in SUMMED) + row["unexplained_ms"] == pytest.approx(
        step, rel=1e-9, abs=1e-9
    )
    assert row["unexplained_ms"] >= 0
    for term in (*SUMMED, *PARTS, "unexplained_ms"):
        assert 0 <= row[term] <= step * (1 + 1e-9), term
    assert row["fixed_excess_ms"] <= row["compute_ms"] * (1 + 1e-9)


# the user's row: modelled 24.024 ms, measured 3.559 ms
@example(
    compute=4.388, ddp=7.171, wait=6.98, exposed=5.485, miss=(4.388 + 7.171 + 6.98 + 5.485) / 3.559
)
@given(compute=st.floats(0.1, 50.0), ddp=MS, wait=MS, exposed=MS, miss=st.floats(0.05, 20.0))
def test_a_measured_row_says_terms_that_sum_to_its_step(
    compute: float, ddp: float, wait: float, exposed: float, miss: float
) -> None:
    frame = _frame(compute, ddp, wait, exposed)
    modelled = frame.iloc[1]
    row = applied(frame, [_found(frame, miss)], {2}).iloc[1]
    assert row["rests_on"] == "measured"
    assert row["step_ms"] == pytest.approx(modelled["step_ms"] / miss, rel=1e-9)
    _agree(row)
    if miss <= 1:  # measured longer: the model's terms as they were, the rest unexplained
        assert row[list(SUMMED)].to_numpy(float) == pytest.approx(modelled[list(SUMMED)])
        assert row["unexplained_ms"] == pytest.approx(row["step_ms"] - modelled["step_ms"])
    else:  # measured shorter: each term its share of the model's step
        shares = modelled[list(SUMMED)].to_numpy(float) / modelled["step_ms"]
        assert row[list(SUMMED)].to_numpy(float) / row["step_ms"] == pytest.approx(shares)
        assert row["unexplained_ms"] == 0


def _advised(args: list[str]) -> dict:
    result = CliRunner().invoke(app, ["advise", *args, "-f", "json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.output)


@pytest.mark.parametrize(
    "path",
    sorted(HERE.glob("*.jsonl")),
    ids=lambda p: p.stem,
)
def test_every_row_of_every_fixture_says_terms_that_sum_to_its_step(path: Path) -> None:
    doc = _advised(["--bench", str(path), "--allow-flagged"])
    for row in (r for name in ROWS for r in doc[name] or []):
        _agree(row)


def test_rows_resting_on_slow_runs_keep_the_terms_and_say_the_rest(tmp_path) -> None:
    doc = _advised(["--bench", str(_file(tmp_path, [0.3, 0.4, 0.5])), "--max-devices", "4"])
    rows = [r for name in ROWS for r in doc[name] or []]
    # 2 devices: the weak row measured, the strong one derived from it (another batch)
    kinds = {"predicted", "measured", "derived", "measured_below"}
    assert {r["rests_on"] for r in rows} == kinds
    for row in rows:
        _agree(row)
    assert all(r["unexplained_ms"] > 0 for r in rows if r["rests_on"] != "predicted")

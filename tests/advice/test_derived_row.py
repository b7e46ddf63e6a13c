"""A row whose step no run measured, scaled from a measurement at its count in another
configuration, says so. ``cpu_mlp_two_sweeps_gloo.jsonl`` ran 2 devices at per-device
batch 8 only (weak scaling, 0.335x); the strong-scaling row at 2 devices (per-device batch
4) has no run and takes the weak measurement's ratio to the model (0.335x / 1.25x): its
source kind is ``derived``, naming batch 8 and the 0.335x, never ``measured``. Where the
row's own configuration was measured (the weak-scaling table, or ``--scaling weak``), it
stays ``measured`` with nothing derived."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest
from typer.testing import CliRunner

from gpuscale.advice.search.decide import applied
from gpuscale.cli import app

from .test_measured_step_terms import _found, _frame

BENCH = Path(__file__).parent / "cpu_mlp_two_sweeps_gloo.jsonl"
DERIVED = ("derived_from_batch", "derived_from_speedup")


def _advised(*args: str) -> dict:
    result = CliRunner().invoke(app, ["advise", "--bench", str(BENCH), *args, "-f", "json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.output)


def _at(rows: list[dict], n: int) -> dict:
    return next(r for r in rows if r["accelerators"] == n)


def test_the_strong_row_without_a_run_is_derived_from_the_weak_measurement() -> None:
    doc = _advised()
    (weak,) = doc["disagreements"]  # the one measurement: 2 devices, 8 per device
    assert (weak["accelerators"], weak["batch_per_device"], weak["weak_scaling"]) == (2, 8, True)
    row = _at(doc["predictions"], 2)
    assert (row["batch_per_device"], row["rests_on"]) == (4, "derived")
    focus = doc["decision"]["focus"]
    assert (focus["accelerators"], focus["rests_on"], focus["derived_from_batch"]) == (
        2,
        "derived",
        8,
    )
    assert focus["derived_from_speedup"] == pytest.approx(weak["measured"]["speedup"])
    # over the N = 1 no-sync step (1.027 ms, the prediction's one device): 3,292 samples/s
    # over 8 / 1.027 ms; over the bare step (0.813 ms) it read 0.335x
    assert focus["derived_from_speedup"] == pytest.approx(0.423, abs=5e-4)
    assert focus["speedup"] == pytest.approx(row["speedup"])  # 0.211x: the derived one
    # the weak-scaling row is the measurement's own configuration: measured, nothing derived
    assert _at(doc["weak_scaling"], 2)["rests_on"] == "measured"
    chosen = doc["decision"]["chosen"]  # one device: predicted, no derived keys
    assert not set(DERIVED) & set(chosen)


def test_a_row_measured_in_its_own_configuration_stays_measured() -> None:
    doc = _advised("--scaling", "weak")  # the table's 2-device row is the run's: batch 8
    row = _at(doc["predictions"], 2)
    assert (row["batch_per_device"], row["rests_on"]) == (8, "measured")
    focus = doc["decision"]["focus"]
    assert focus["rests_on"] == "measured"
    assert not set(DERIVED) & set(focus)  # left out where unset


@pytest.mark.parametrize(("batch", "kind"), [(4, "measured"), (8, "derived")])
def test_a_measurement_at_another_batch_derives_the_row(batch: int, kind: str) -> None:
    """The 2-device row (per-device batch 4) over a measurement at ``batch``: its own
    configuration's is ``measured``; another's ``derived``, naming that batch and speedup;
    the numbers the same either way (the ratio to the model is all either applies)."""
    frame = _frame(10.0, 1.0, 1.0, 1.0)
    found = _found(frame, 0.5)
    measured = applied(frame, [found], {2}).iloc[1]
    row = applied(frame, [replace(found, batch_per_device=batch)], {2}).iloc[1]
    assert row["rests_on"] == kind
    numbers = ["step_ms", "speedup", "unexplained_ms", "speedup_low", "speedup_high"]
    assert row[numbers].to_numpy(float) == pytest.approx(measured[numbers].to_numpy(float))
    if kind == "derived":
        assert (row["derived_from_batch"], row["derived_from_speedup"]) == (
            batch,
            pytest.approx(found.measured_speedup),
        )
    else:
        assert row[list(DERIVED)].isna().all()

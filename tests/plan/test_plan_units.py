"""Every value of ``plan -f csv`` / ``-f json`` with its unit: ``expected_to_converge`` of an
epoch-counted workload is in epochs (retinanet's 4.02 is no count of samples), said by a
``convergence_unit`` column as the analysis says it; ``cost`` is in the currency of the
price given, said in the notes every format carries."""

from __future__ import annotations

import csv
import io
import json

import pytest
from typer.testing import CliRunner

import gpuscale
from gpuscale.cli import app
from gpuscale.tables.plan import PLAN_COLUMNS

runner = CliRunner()


@pytest.mark.parametrize(
    ("workload", "unit", "low", "high", "counts"),
    [
        ("retinanet", "epochs", 1.0, 100.0, (8, 64)),  # a few epochs of Open Images
        ("bert", "samples", 1e6, 1e8, (8, 64)),  # millions of sequences
        # about 1.2 billion tokens of C4 (its 175B parameters fit from 37 H100s)
        ("gpt3", "tokens", 1e8, 1e11, (512, 1024)),
    ],
)
def test_expected_to_converge_carries_its_unit(
    workload: str, unit: str, low: float, high: float, counts: tuple[int, int]
) -> None:
    asked = ",".join(map(str, counts))
    result = runner.invoke(app, ["plan", "-w", workload, "-a", "H100", "-n", asked, "-f", "csv"])
    assert result.exit_code == 0, result.output
    rows = list(csv.DictReader(io.StringIO(result.stdout)))
    assert [r["convergence_unit"] for r in rows] == [unit, unit]
    assert all(low < float(r["expected_to_converge"]) < high for r in rows)
    header = list(rows[0])
    assert header.index("convergence_unit") == header.index("expected_to_converge") + 1
    frame = gpuscale.plan(workload=workload, accelerator="H100", devices=[counts[0]])
    assert list(frame["convergence_unit"]) == [unit]
    assert "convergence_unit" in PLAN_COLUMNS
    # named for what it holds in any unit (GPT-3's are tokens, not samples), in every format
    assert "expected_samples" not in header and "expected_samples" not in PLAN_COLUMNS
    document = json.loads(
        runner.invoke(app, ["plan", "-w", workload, "-a", "H100", "-n", asked, "-f", "json"]).stdout
    )
    for row, line in zip(document["rows"], rows, strict=True):
        assert "expected_samples" not in row
        assert row["expected_to_converge"] == pytest.approx(float(line["expected_to_converge"]))
        assert row["convergence_unit"] == unit
    shown = runner.invoke(app, ["plan", "-w", workload, "-a", "H100", "-n", asked, "--explain"])
    lines = [line.split() for line in shown.stdout.splitlines()]
    labels = [line[:3] for line in lines]
    assert ["expected", "samples"] not in [line[:2] for line in lines]
    at = labels.index(["expected", "to", "converge"])
    assert lines[at + 1][:3] == ["convergence", "unit", unit]


def test_epochs_are_not_called_samples_in_the_batch_note() -> None:
    result = runner.invoke(app, ["plan", "-w", "retinanet", "-a", "H100", "-n", "8", "-f", "json"])
    notes = json.loads(result.stdout)["notes"]
    said = next(n for n in notes if n.startswith("Global batch:"))
    assert "epochs to converge E(B)" in said and "samples to converge E(B)" not in said


def test_the_cost_says_its_currency_in_every_format() -> None:
    args = ["plan", "-w", "bert", "-a", "H100", "-n", "8", "--price", "2.5"]
    document = json.loads(runner.invoke(app, [*args, "-f", "json"]).stdout)
    hours = document["rows"][0]["accelerator_hours"]
    assert document["rows"][0]["cost"] == pytest.approx(hours * 2.5)
    said = (
        "Cost: accelerator hours x the price given (2.5 per accelerator-hour), in the price's "
        "currency."
    )
    assert said in document["notes"]
    assert said in runner.invoke(app, [*args, "-f", "csv"]).stderr
    without = json.loads(runner.invoke(app, [*args[:-2], "-f", "json"]).stdout)
    assert not any(n.startswith("Cost:") for n in without["notes"])

"""JSON and CSV write each float at 15 significant digits, the most a double always keeps:
a new user's walk found ``advise -f json`` printing the sums' binary noise (``comm_ms``
2.9200000000000004, ``latency_ms`` 0.12000029999999998). The numbers in memory stay
whole; every command's -f json and -f csv is written alike."""

from __future__ import annotations

import csv
import io
import json
import math
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

import gpuscale
from gpuscale.cli import app

H100 = str(Path(__file__).parents[1] / "advice" / "h100_resnet50_bf16.jsonl")
ADVISE = ["advise", "--params", "7M", "--step-ms", "2", "--batch", "64", "--global-batch", "1000"]
COMMANDS = {
    "advise": ADVISE,
    "analyze --bench": ["analyze", "--bench", H100],
    "plan": ["plan", "-w", "bert", "-a", "H100-SXM5-80GB", "-n", "8,16"],
}


def _printed(argv: list[str], fmt: str) -> str:
    result = CliRunner().invoke(app, [*argv, "-f", fmt], env={"COLUMNS": "100"})
    assert result.exit_code == 0, result.output
    return result.stdout


def _floats(value: object) -> list[float]:
    """Every float of a JSON document."""
    if isinstance(value, dict):
        return [f for v in value.values() for f in _floats(v)]
    if isinstance(value, list):
        return [f for v in value for f in _floats(v)]
    return [value] if isinstance(value, float) else []


def _csv_floats(text: str) -> list[float]:
    """Every cell of CSV text that is a float (a decimal point or an exponent), and each
    of a cell's "; "-separated items."""
    found = []
    for row in csv.reader(io.StringIO(text)):
        for item in (part for cell in row for part in cell.split("; ")):
            try:
                number = float(item)
            except ValueError:
                continue
            if "." in item or "e" in item.lower():
                found.append(number)
    return found


def _at_15_digits(value: float) -> bool:
    return not math.isfinite(value) or float(f"{value:.15g}") == value


def test_the_advice_is_written_at_15_digits_and_held_whole() -> None:
    advice = gpuscale.advise(params=7e6, step_ms=2, batch=64, global_batch=1000)
    held = advice.predictions
    # the premise: sums in memory carry more than 15 digits (2.9200000000000004)
    assert not all(_at_15_digits(float(v)) for v in held["comm_ms"])
    document = json.loads(_printed(ADVISE, "json"))
    rows = document["predictions"]
    assert len(rows) == len(held)
    for column in ("comm_ms", "latency_ms", "wait_ms", "step_ms"):
        for row, value in zip(rows, held[column], strict=True):
            assert row[column] == pytest.approx(float(value), rel=1e-14, abs=1e-300)
            assert _at_15_digits(row[column])
    written = list(csv.DictReader(io.StringIO(_printed(ADVISE, "csv"))))
    for row, value in zip(written, held["comm_ms"], strict=True):
        assert float(row["comm_ms"]) == pytest.approx(float(value), rel=1e-14, abs=1e-300)


@pytest.mark.parametrize("argv", COMMANDS.values(), ids=COMMANDS.keys())
@pytest.mark.parametrize("fmt", ["json", "csv"])
def test_every_float_a_command_writes_has_15_digits_at_most(argv: list[str], fmt: str) -> None:
    text = _printed(argv, fmt)
    found = _floats(json.loads(text)) if fmt == "json" else _csv_floats(text)
    assert len(found) > 10  # the premise: a document of numbers
    assert [f for f in found if not _at_15_digits(f)] == []


def test_a_share_below_the_tables_last_place_is_not_shown_as_zero() -> None:
    """``advise``'s efficiency column (``.0%``) showed 0.26% as ``0%``: a share that is not
    0 gets the places of its first figure in the table; -f json keeps the number."""
    argv = ["advise", "--params", "7b", "--step-ms", "100"]
    rows = json.loads(_printed(argv, "json"))["predictions"]
    shares = {r["accelerators"]: r["efficiency"] for r in rows}
    table = _printed(argv, "table")
    cells = {
        int(m[1]): m[2]
        for m in re.finditer(r"^│ +(\d+) │.*│ +([\d.]+)% │[^│]*│[^│]*│$", table, re.M)
    }
    assert set(cells) == set(shares) and min(shares.values()) < 0.005, (cells, shares)
    for count, cell in cells.items():
        places = len(cell.partition(".")[2])
        assert float(cell) > 0 and math.isclose(
            float(cell), 100 * shares[count], abs_tol=0.5 * 10**-places
        ), (count, cell, shares[count])

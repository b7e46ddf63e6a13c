"""``--repeat K`` read back: the count, every run's throughput and their spread are columns
of the bench table, so ``analyze --bench --columns`` and ``-f json`` give them."""

from __future__ import annotations

import csv
import io
import json
import math
from pathlib import Path

import pytest
from typer.testing import CliRunner

import gpuscale
from gpuscale.bench.config import BenchConfig
from gpuscale.bench.results import bench_table, load_bench
from gpuscale.bench.results_file import append_result
from gpuscale.cli import app

from ..builders import bench_record

runner = CliRunner()
RATES = {1: [100.0, 90.0, 130.0], 2: [180.0, 170.0, 176.0]}  # each run's samples/s


def _repeated(world: int) -> dict[str, object]:
    rates = RATES[world]
    record = bench_record("mlp-1m", 10**6, world, sorted(rates)[1], config=BenchConfig(repeat=3))
    record["timing"]["repeat_samples_per_s"] = rates
    record["timing"]["repeat_spread"] = {1: 0.4, 2: 10 / 176}[world]
    return record


def _file(tmp_path: Path) -> Path:
    path = tmp_path / "st.jsonl"
    for world in (1, 2):
        append_result(path, _repeated(world))
    append_result(path, bench_record("mlp-2m", 2 * 10**6, 1, 50.0))  # one run
    return path


def test_the_table_holds_the_repeats() -> None:
    table = bench_table([_repeated(1), bench_record("mlp-2m", 2 * 10**6, 1, 50.0)])
    assert table["repeat"].tolist() == [3, 1]
    assert table["repeat_samples_per_s"].tolist() == [(100.0, 90.0, 130.0), ()]
    assert table["repeat_spread"].iloc[0] == pytest.approx(0.4)
    assert math.isnan(table["repeat_spread"].iloc[1])  # not repeated: no spread


def test_analyze_columns_and_json_give_them(tmp_path: Path) -> None:
    path = _file(tmp_path)
    columns = "model,accelerators,repeat,repeat_spread,repeat_samples_per_s"
    asked = ["analyze", "--bench", str(path), "-f", "csv", "--columns", columns]
    picked = runner.invoke(app, asked)
    assert picked.exit_code == 0, picked.output
    rows = list(csv.DictReader(io.StringIO(picked.stdout.split("\n\n")[0])))
    assert [(r["model"], r["accelerators"], r["repeat"]) for r in rows[:3]] == [
        ("mlp-1m", "1", "3"),
        ("mlp-1m", "2", "3"),
        ("mlp-2m", "1", "1"),
    ]
    assert float(rows[0]["repeat_spread"]) == pytest.approx(0.4)
    assert rows[2]["repeat_spread"] == ""
    whole = runner.invoke(app, ["analyze", "--bench", str(path), "-f", "json"])
    assert whole.exit_code == 0, whole.output
    runs = json.loads(whole.stdout)["bench"]["runs"]
    assert [r["repeat"] for r in runs] == [3, 3, 1]
    assert runs[1]["repeat_samples_per_s"] == [180.0, 170.0, 176.0]
    assert runs[1]["repeat_spread"] == pytest.approx(10 / 176)


def test_the_advice_takes_a_table_saved_before_the_repeat_columns() -> None:
    """A bench table saved by an earlier gpuscale has no repeat columns: the advice, which
    does not read them, is the same without them."""
    here = Path(__file__).parents[1] / "advice" / "cpu_tiny_model_gloo.jsonl"
    table = load_bench(here).table
    older = table.drop(columns=["repeat", "repeat_samples_per_s", "repeat_spread"])
    now, then = gpuscale.advise(bench=table), gpuscale.advise(bench=older)
    assert then.explanation == now.explanation


def test_the_terminal_table_says_every_repeat_as_its_numbers(tmp_path: Path) -> None:
    """Every run's samples/s in the terminal table to the four figures of the samples/s
    column beside it (843.9; 1,504), never the 15 digits CSV keeps (843.939757294327)."""
    path = tmp_path / "st.jsonl"
    rates = [843.9397572943273, 1503.5356204646673]
    record = bench_record("mlp-1m", 10**6, 1, rates[0], config=BenchConfig(repeat=2))
    record["timing"]["repeat_samples_per_s"] = rates
    append_result(path, record)
    append_result(path, bench_record("mlp-2m", 2 * 10**6, 1, 50.5))  # one run
    columns = "model,samples_per_s,repeat_samples_per_s"
    shown = runner.invoke(app, ["analyze", "--bench", str(path), "--columns", columns])
    assert shown.exit_code == 0, shown.output
    rows = [
        [cell.strip() for cell in line.split("\u2502")[1:-1]]
        for line in shown.stdout.splitlines()
        if line.startswith("\u2502")
    ]
    assert rows == [["mlp-1m", "843.9", "843.9; 1,504"], ["mlp-2m", "50.50", ""]]
    saved = runner.invoke(app, ["analyze", "--bench", str(path), "-f", "csv", "--columns", columns])
    assert "843.939757294327; 1503.53562046467" in saved.stdout  # CSV: the whole numbers

"""The advice predictions table is the one ``tables.advice`` documents: its columns in
order with their dtypes, in the house vocabulary (``accelerators``, ``time_to_train_min``),
from numbers, from bench results, and in the command's CSV."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

import gpuscale
from gpuscale.cli import app
from gpuscale.tables.advice import ADVICE_COLUMNS, ADVICE_SCHEMA

from ..builders import bench_record, write_jsonl


def _check(frame) -> None:
    assert tuple(frame.columns) == ADVICE_COLUMNS
    assert {c: str(t) for c, t in frame.dtypes.items()} == ADVICE_SCHEMA


def test_from_numbers_and_from_bench_give_the_schema(tmp_path: Path) -> None:
    by_numbers = gpuscale.advise(params=7e6, step_ms=20, batch=64, link="pcie-phb", max_devices=4)
    _check(by_numbers.predictions)
    assert list(by_numbers.predictions["accelerators"]) == [1, 2, 4]
    path = write_jsonl(
        tmp_path / "results.jsonl",
        [bench_record("m", 10**6, n, rate, comm_ms=2.0) for n, rate in ((1, 100.0), (2, 150.0))],
    )
    _check(gpuscale.advise(bench=str(path), link="pcie-phb", max_devices=2).predictions)


def test_the_commands_csv_names_its_columns_with_units() -> None:
    args = ["advise", "--params", "7M", "--step-ms", "20", "--batch", "64"]
    result = CliRunner().invoke(app, [*args, "--interconnect", "pcie-phb", "-f", "csv"])
    assert result.exit_code == 0, result.output
    header = result.stdout.splitlines()[0].split(",")
    assert header == list(ADVICE_COLUMNS)
    assert "time_to_train_h" not in header and "devices" not in header

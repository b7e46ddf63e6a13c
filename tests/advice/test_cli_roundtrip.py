"""From a small bench results file to a recommendation, through the CLI."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from gpuscale.bench.results_file import append_result
from gpuscale.cli import app

from ..builders import one_and_two

runner = CliRunner()


def bench_file(tmp_path: Path) -> Path:
    path = tmp_path / "results.jsonl"
    for r in one_and_two("tf-7m", 6_870_000):
        append_result(path, r)
    return path


def test_bench_to_recommendation(tmp_path: Path) -> None:
    result = runner.invoke(
        app,
        [
            "advise",
            "--bench",
            str(bench_file(tmp_path)),
            "--interconnect",
            "pcie4-x16",
            "--max-devices",
            "8",
            "--scaling",
            "weak",  # the per-device batch the bench ran at N = 2
            "-f",
            "json",
        ],
    )
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    assert doc["recommendation"]["fastest"] in (1, 2, 4, 8)
    assert [p["accelerators"] for p in doc["predictions"]] == [1, 2, 4, 8]
    # the N = 2 run is the calibration point: predicted as measured (7 ms + 3 of 4 ms exposed)
    two = doc["predictions"][1]
    assert two["step_ms"] == pytest.approx(10.0)
    text = " ".join(doc["explanation"])
    assert "Calibrated on tf-7m" in text and "preset pcie4-x16" in text
    assert "Power: unknown" in text  # a CPU bench without RAPL: no H100 watts


def test_presets_alone() -> None:
    result = runner.invoke(
        app,
        [
            "advise",
            "--params",
            "7M",
            "--step-ms",
            "20",
            "--batch",
            "64",
            "--interconnect",
            "pcie-phb",
            "--price",
            "2.5",
            "--explain",
        ],
    )
    assert result.exit_code == 0 and "Break-even" in result.stdout


def test_bad_input_is_a_clean_error(tmp_path: Path) -> None:
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    for args in (
        ["--params", "-3M", "--step-ms", "20"],
        ["--params", "3M", "--step-ms", "20", "--interconnect", "warp"],
        ["--bench", str(empty)],
        ["--step-ms", "20"],
        ["--params", "7M", "--step-ms", "20", "--workload", "no-such-benchmark"],
        ["--params", "7M", "--step-ms", "20", "--strategy", "zero3"],
        ["--params", "7M", "--step-ms", "0"],
        ["--params", "7M", "--step-ms", "20", "--samples", "lots"],
    ):
        result = runner.invoke(app, ["advise", *args])
        assert result.exit_code == 2 and "Traceback" not in result.output, args

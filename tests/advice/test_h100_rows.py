"""The advice on the real H100 bench rows (``../shared/gpu/h100``; skipped without
them): issue 41's done-when."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

import gpuscale
from gpuscale.cli import app

runner = CliRunner()
pytestmark = pytest.mark.shared


def _plain_step(path, model: str, batch: int) -> float:
    for line in path.read_text().splitlines():
        row = json.loads(line)
        config = row["config"]
        if config["model"] == model and config["batch_per_device"] == batch:
            return float(row["timing"]["plain_step_ms_mean"])
    raise AssertionError(f"no {model} at batch {batch} in {path}")


def test_the_h100_step_at_a_measured_batch_is_the_measurement(h100) -> None:
    """Issue 41's done-when: tf-7m at global batch 64 on one H100, measured at 13.6 ms;
    a line through every batch said 18.4 ms."""
    sweep = h100("sweep.jsonl")
    advice = gpuscale.advise(bench=sweep, model="tf-7m", global_batch=64, max_devices=1)
    row = advice.predictions.iloc[0]
    measured = _plain_step(sweep, "tf-7m", 64)
    assert (row["batch_per_device"], row["accum"]) == (64, 1)
    assert abs(row["step_ms"] / measured - 1) < 0.10
    assert row["compute_source"] == "measured"
    said = " ".join(advice.explanation)
    assert "measured at per-device batch(es) 1, 8, 64, 256" in said
    assert "left out" in said


def test_the_h100_batch_32_file_fits_batch_64_on_one_device(h100) -> None:
    """With only batch 32 measured, the memory it took (0.75 GB of 80 GB) says batch 64
    fits: N = 1 runs it whole, no accumulation, and says it is modelled."""
    result = runner.invoke(
        app,
        [
            "advise",
            "--bench",
            str(h100("ladder.jsonl")),
            "--model",
            "tf-7m",
            "--global-batch",
            "64",
            "--interconnect",
            "pcie-phb",
            "-f",
            "csv",
        ],
    )
    assert result.exit_code == 0, result.output
    header, first = result.stdout.splitlines()[:2]  # stderr says what is provisional
    row = dict(zip(header.split(","), first.split(","), strict=True))
    assert (row["accelerators"], row["batch_per_device"], row["accum"]) == ("1", "64", "1")
    assert row["compute_source"] == "modelled"

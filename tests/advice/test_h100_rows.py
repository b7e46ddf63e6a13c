"""The advice on the real H100 bench rows (``../shared/gpu/h100``; skipped without
them): issue 41's done-when."""

from __future__ import annotations

import csv
import io
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
    assert "measured at per-device batches 1, 8, 64 and 256" in said
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
    row = next(csv.DictReader(io.StringIO(result.stdout)))  # stderr says what is provisional
    assert (row["accelerators"], row["batch_per_device"], row["accum"]) == ("1", "64", "1")
    assert row["compute_source"] == "modelled"


def _n1_watts(path, model: str) -> dict[int, float]:
    """The power per device each N = 1 run of ``model`` measured, by its per-device batch
    (NVML's mean, as the bench file holds it)."""
    found = {}
    for line in path.read_text().splitlines():
        row = json.loads(line)
        config = row["config"]
        if config["model"] == model and config["accelerators"] == 1 and not row["flags"]:
            found[int(config["batch_per_device"])] = float(row["nvml"]["power_w_mean"])
    return found


def test_each_count_is_charged_the_power_measured_at_its_own_batch(h100) -> None:
    """A device's power follows its batch: under strong scaling N = 4 runs tf-7m at batch 64
    (469 W measured at N = 1) and N = 8 at batch 32, yet every count was charged the 597 W
    of batch 256. Each count's watts are the N = 1 measurement at its per-device batch where
    one exists, else between the two measured around it, and the row says which."""
    sweep = h100("sweep.jsonl")
    measured = _n1_watts(sweep, "tf-7m")
    advice = gpuscale.advise(bench=sweep, model="tf-7m", link="nvlink4", max_devices=8)
    frame = advice.predictions
    assert frame["batch_per_device"].nunique() > 1  # the counts run different batches
    checked = 0
    for row in frame.itertuples():
        watts = row.energy_kwh * 1e3 / (row.time_to_train_min / 60) / row.accelerators
        batch = int(row.batch_per_device)
        if batch in measured:
            assert watts == pytest.approx(measured[batch], rel=1e-9), row
            assert f"batch {batch}" in row.energy_source or "whole job" in row.energy_source
            checked += 1
        else:
            low = max(b for b in measured if b < batch)
            high = min(b for b in measured if b > batch)
            ends = sorted((measured[low], measured[high]))
            assert ends[0] <= watts <= ends[1], row
            assert "interpolated" in row.energy_source
            assert f"batch {low} " in row.energy_source and f"and {high} " in row.energy_source
    assert checked >= 2  # batch 256 at N = 1 and 64 at N = 4

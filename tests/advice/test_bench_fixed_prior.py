"""A bench model timed at one per-device batch has no measured fixed per-step cost: the
advice takes the documented GPU prior (1-20 ms, 4 ms most likely, docs/advice.md) with its
range in the 80% interval, not 0 ms without a range. With 0 ms, ``advise --bench
paths.jsonl --model cnn-19m`` recommended 2 H100s (1.53x, 1.13-2x), where the prior's 4 ms
gives 0.93x. A model measured at two or more batches keeps its measured fixed cost."""

from __future__ import annotations

import json
import re

import pytest
from typer.testing import CliRunner

import gpuscale
from gpuscale.advice.types import FindingKind
from gpuscale.cli import app

pytestmark = pytest.mark.shared
runner = CliRunner()

PRIOR_MOST_LIKELY_MS = 4.0  # docs/advice.md: "1-20 ms, 4 ms most likely"


def _gpu_models(path) -> list[str]:
    """The GPU models of a bench file, each measured there at one per-device batch."""
    batches: dict[str, set[int]] = {}
    for line in path.read_text().splitlines():
        config = json.loads(line)["config"]
        if config["device"] == "cuda":
            batches.setdefault(config["model"], set()).add(config["batch_per_device"])
    assert all(len(b) == 1 for b in batches.values())  # what this test is about
    return sorted(batches)


def _at(advice, n: int):
    frame = advice.predictions
    return frame[frame["accelerators"] == n].iloc[0]


def test_one_batch_gpu_models_take_the_prior_with_its_range(h100) -> None:
    """Each H100 model of paths.jsonl (one batch each, each alone in its configuration):
    its fixed cost is said assumed, with a range, and any count above 1 recommended still
    gains at both ends of that range (its gain does not rest on the assumed split)."""
    paths = h100("paths.jsonl")
    models = _gpu_models(paths)
    assert len(models) >= 4
    for model in models:
        advice = gpuscale.advise(bench=paths, model=model)
        fixed = advice.calibration.model.fixed
        assert fixed.source == "assumed", model
        assert fixed.high_ms > fixed.low_ms, model  # a range, carried into the interval
        n = int(advice.recommended)
        if n == 1:
            continue
        for end in (fixed.low_ms, fixed.high_ms):
            other = gpuscale.advise(bench=paths, model=model, fixed_ms=end)
            assert _at(other, n)["speedup"] > 1, (model, n, end)


def test_cnn19m_on_the_h100_is_not_scaled_out_on_an_assumed_split(h100) -> None:
    """The user's case: at the prior's most likely 4 ms two H100s are slower than one, so
    2 devices (recommended at 0 ms) must not be; the 80% interval at N = 2 holds that."""
    paths = h100("paths.jsonl")
    advice = gpuscale.advise(bench=paths, model="cnn-19m")
    at_prior = gpuscale.advise(bench=paths, model="cnn-19m", fixed_ms=PRIOR_MOST_LIKELY_MS)
    slower = _at(at_prior, 2)["speedup"]
    assert slower < 1  # the gain rests on the split of the step
    two = _at(advice, 2)
    assert two["speedup_low"] <= slower <= two["speedup_high"]
    assert advice.recommended == 1


def test_the_fixed_cost_line_names_a_bench_command_that_measures_it(h100) -> None:
    """The advice says the fixed cost is assumed and the command that measures it; every
    option of that command is one ``gpuscale bench`` takes."""
    result = runner.invoke(
        app, ["advise", "--explain", "--bench", str(h100("paths.jsonl")), "--model", "cnn-19m"]
    )
    assert result.exit_code == 0, result.output
    line = next(s for s in result.stdout.splitlines() if "Fixed per-step costs" in s)
    assert "assumed" in line
    command = re.search(r"to measure: `(gpuscale bench [^`]+)`", line)
    assert command is not None, line
    words = command.group(1).split()
    assert words[words.index("--models") + 1] == "cnn-19m"
    assert "--tf32" in words  # the row's configuration: cnn-19m ran with --tf32
    bench_help = runner.invoke(app, ["bench", "--help"], terminal_width=200).stdout
    for option in (w for w in words if w.startswith("--")):
        assert option in bench_help, option


def test_a_model_measured_at_several_batches_keeps_its_measured_fixed_cost(h100) -> None:
    """tf-7m in sweep.jsonl, measured at batches 1, 8, 64 and 256: its fixed cost is the
    floor those batches measured (forward + backward 10.1-13.1 ms at batches 1-64), no
    prior and no range."""
    sweep = h100("sweep.jsonl")
    fixed = gpuscale.advise(bench=sweep, model="tf-7m").calibration.model.fixed
    flat = []
    for line in sweep.read_text().splitlines():
        row = json.loads(line)
        if row["config"]["model"] == "tf-7m" and row["config"]["batch_per_device"] <= 64:
            flat.append(row["timing"]["forward_ms"] + row["timing"]["backward_ms"])
    assert fixed.source == "measured"
    assert fixed.low_ms == fixed.ms == fixed.high_ms
    assert min(flat) <= fixed.ms <= max(flat)


def test_cpu_rows_take_no_gpu_prior(h100) -> None:
    """The prior is a GPU step's (kernel launches): the CPU processes of paths.jsonl keep
    the whole step as per-sample work, said so, with the command that measures it."""
    advice = gpuscale.advise(bench=h100("paths.jsonl"), model="mlp-4m")
    fixed = advice.calibration.model.fixed
    assert (fixed.source, fixed.ms, fixed.uncertain) == ("assumed", 0.0, False)
    assert getattr(fixed.basis, "kind", None) == FindingKind.CPU_NO_PRIOR
    assert "--backend gloo" in str(fixed.measure)

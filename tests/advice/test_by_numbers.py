"""A model given by its numbers with --bench (issue 41 item 7): advised from its family's
calibration on that device (asked for or inferred, and said), or refused saying what to
give; never another model's advice in silence."""

from __future__ import annotations

from pathlib import Path

import pytest

import gpuscale
from gpuscale.advice.calibrate import CalibrationError
from gpuscale.bench.results_file import append_result

from ..builders import bench_record

# two families: an MLP (~6 FLOPs per parameter) and a CNN (~800), one device each
MODELS = (
    ("mlp-4m", "mlp", 4_000_000, 6.0, 1.0, 2.0),
    ("mlp-67m", "mlp", 67_000_000, 6.0, 3.0, 6.0),
    ("cnn-5m", "cnn", 5_000_000, 800.0, 3.0, 6.0),
    ("cnn-19m", "cnn", 19_000_000, 800.0, 10.0, 20.0),
)


@pytest.fixture
def bench(tmp_path: Path) -> Path:
    path = tmp_path / "results.jsonl"
    for name, family, params, per_param, forward, backward in MODELS:
        record = bench_record(
            name,
            params,
            1,
            1000.0,
            family=family,
            forward_ms=forward,
            backward_ms=backward,
            flops_per_sample=params * per_param,
        )
        append_result(path, record)
    return path


def test_a_model_by_numbers_takes_its_inferred_familys_rate(bench: Path) -> None:
    advice = gpuscale.advise(
        bench=bench, params=12e6, flops_per_sample=12e6 * 900, batch=8, max_devices=1
    )
    said = " ".join(advice.explanation)
    assert advice.inputs.name == "a 12M-parameter cnn model"
    assert "inferred" in said and "cnn-19m" in said  # the family and the model said
    assert "Calibrated on mlp-67m" not in said  # the default model's advice is not given
    assert advice.inputs.model.params == 12e6
    # its step grows with its own FLOPs: the given numbers are what is advised on
    bigger = gpuscale.advise(
        bench=bench, params=12e6, flops_per_sample=24e6 * 900, batch=8, max_devices=1
    )
    assert bigger.predictions["step_ms"].iloc[0] > advice.predictions["step_ms"].iloc[0]


def test_the_family_asked_for_wins(bench: Path) -> None:
    advice = gpuscale.advise(bench=bench, params=12e6, family="mlp", batch=8, max_devices=1)
    assert advice.inputs.name == "a 12M-parameter mlp model"
    assert "as given" in " ".join(advice.explanation)


def test_without_flops_or_family_it_says_what_to_give(bench: Path) -> None:
    with pytest.raises(CalibrationError, match=r"--flops-per-sample .* or --family"):
        gpuscale.advise(bench=bench, params=12e6, batch=8)
    with pytest.raises(CalibrationError, match="no trustworthy N = 1 run of the 'vit' family"):
        gpuscale.advise(bench=bench, params=12e6, family="vit", batch=8)
    with pytest.raises(ValueError, match="not both"):
        gpuscale.advise(bench=bench, params=12e6, model="cnn-5m", batch=8)

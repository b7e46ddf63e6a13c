"""A model given by its numbers with --bench (issue 41 item 7): advised from its family's
calibration on that device (asked for or inferred, and said), or refused saying what to
give; never another model's advice in silence."""

from __future__ import annotations

from pathlib import Path

import pytest

import gpuscale
from gpuscale.advice.calibrate.errors import CalibrationError
from gpuscale.advice.explain.phrasebook import said
from gpuscale.bench.results_file import append_result

from ..builders import bench_record
from ..golden import Golden
from .lines import lines_on

VIEW = "advice/by_numbers_with_bench"

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


def test_a_model_by_numbers_takes_its_inferred_familys_rate(bench: Path, golden: Golden) -> None:
    advice = gpuscale.advise(
        bench=bench, params=12e6, flops_per_sample=12e6 * 900, batch=8, max_devices=1
    )
    name = advice.calibration.model.name  # a finding: the family and the parameters
    assert (name["family"], name["params"]) == ("cnn", 12e6)
    calibrated = lines_on(advice.explanation, "Calibrated")
    # the family and the model said; the default model's advice (mlp-67m) is not given
    assert "inferred" in calibrated and "cnn-19m" in calibrated and "mlp-67m" not in calibrated
    golden.check(VIEW, "a family inferred from the FLOPs", f"{said(name)}\n{calibrated}")
    assert advice.calibration.model.spec.params == 12e6
    # its step grows with its own FLOPs: the given numbers are what is advised on
    bigger = gpuscale.advise(
        bench=bench, params=12e6, flops_per_sample=24e6 * 900, batch=8, max_devices=1
    )
    assert bigger.predictions["step_ms"].iloc[0] > advice.predictions["step_ms"].iloc[0]


def test_the_family_asked_for_wins(bench: Path, golden: Golden) -> None:
    advice = gpuscale.advise(bench=bench, params=12e6, family="mlp", batch=8, max_devices=1)
    name = advice.calibration.model.name
    assert (name["family"], name["params"]) == ("mlp", 12e6)
    calibrated = lines_on(advice.explanation, "Calibrated")
    assert "as given" in calibrated
    golden.check(VIEW, "the family given", f"{said(name)}\n{calibrated}")


def test_without_flops_or_family_it_says_what_to_give(bench: Path, golden: Golden) -> None:
    with pytest.raises(CalibrationError) as neither:
        gpuscale.advise(bench=bench, params=12e6, batch=8)
    assert "flops_per_sample=" in str(neither.value) and "family=" in str(neither.value)
    golden.check(VIEW, "neither FLOPs nor a family", str(neither.value))
    with pytest.raises(CalibrationError) as unbenched:
        gpuscale.advise(bench=bench, params=12e6, family="vit", batch=8)
    assert "'vit'" in str(unbenched.value)
    golden.check(VIEW, "a family not benched", str(unbenched.value))
    with pytest.raises(ValueError, match="not both"):
        gpuscale.advise(bench=bench, params=12e6, model="cnn-5m", batch=8)


def test_no_trustworthy_one_device_run_is_said_before_what_to_give(
    tmp_path: Path, golden: Golden
) -> None:
    """Every N = 1 run flagged: it asked for --flops-per-sample, given already, "or
    --family (one of: none measured)" (a user walk); the cause is said, with the flags."""
    path = tmp_path / "busy.jsonl"
    busy = ["machine busy: other processes used 60% of its CPU time"]
    append_result(path, {**bench_record("mlp-1m", 10**6, 1, 100.0), "flags": busy})
    append_result(path, bench_record("mlp-1m", 10**6, 2, 150.0, comm_ms=1.0))
    for extra in (dict(flops_per_sample=4.2e7), dict(family="mlp")):
        with pytest.raises(CalibrationError) as refused:
            gpuscale.advise(bench=str(path), params=7e6, **extra)
        said = str(refused.value)
        assert "--flops-per-sample" not in said and "machine busy" in said
        # the cause first, the same words whichever of the two was given
        golden.check(VIEW, "every N = 1 run flagged", said)

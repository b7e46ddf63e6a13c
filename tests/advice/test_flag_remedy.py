"""The remedy a refusal gives follows the kinds of flag present (a user walk: a bench file
whose only runs had a NaN loss was told to re-run on a quieter machine or to use the
runs with --allow-flagged; a broken model is told to fix its loss)."""

from __future__ import annotations

from pathlib import Path

import pytest

import gpuscale
from gpuscale.advice.calibrate import CalibrationError
from gpuscale.bench.results_file import append_result
from gpuscale.plausibility import host_flags, loss_flags

from ..builders import bench_record

NAN_LOSS = loss_flags(float("nan"))
BUSY = host_flags({"other_load_share": 0.6})


def _refusal(tmp_path: Path, *flags: list[str]) -> str:
    """The refusal of a bench file of one model, a run per flag list (N = 1 and 2)."""
    path = tmp_path / "results.jsonl"
    for world, run_flags in zip((1, 2), flags, strict=False):
        append_result(path, bench_record("mlp-1m", 1_000_000, world, 100.0, flags=run_flags))
    with pytest.raises(CalibrationError) as refused:
        gpuscale.advise(bench=path, link="pcie4-x16")
    return " ".join(str(refused.value).split())


def test_a_broken_model_is_told_to_fix_its_loss_not_to_rerun_or_use_it(tmp_path: Path) -> None:
    assert NAN_LOSS and NAN_LOSS[0].startswith("loss not finite")  # the premise
    said = _refusal(tmp_path, NAN_LOSS, NAN_LOSS)
    assert "loss not finite" in said and "fix the model" in said.lower()
    assert "quieter" not in said and "--allow-flagged" not in said


def test_a_busy_host_is_told_to_rerun_or_allow(tmp_path: Path) -> None:
    said = _refusal(tmp_path, BUSY, BUSY)
    assert "quieter machine" in said and "--allow-flagged" in said and "fix the model" not in said


def test_both_kinds_get_both_remedies(tmp_path: Path) -> None:
    said = _refusal(tmp_path, NAN_LOSS + BUSY, BUSY)
    assert "fix the model" in said.lower() and "quieter machine" in said

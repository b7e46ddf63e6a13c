"""Issue 38: the leave-one-out interval costs a bounded number of calibrations however many
rows a results file holds (it was one per row: 2,000 rows took 116 s); the models left out
are spread over the sizes, and the interval says how many of how many."""

from __future__ import annotations

from pathlib import Path

import pytest

import gpuscale
import gpuscale.advice.calibrate.calibration as calibration
import gpuscale.advice.calibrate.measured as measured
from gpuscale.advice.calibrate.measured import MAX_LEFT_OUT
from gpuscale.advice.explain.phrasebook import said

from ..builders import bench_record, write_jsonl
from ..golden import Golden

VIEW = "advice/leave_one_out"


def _many_models(tmp_path: Path, models: int) -> Path:
    rows = []
    for k in range(models):
        params = 100_000 * (k + 1)
        fb = 1.0 + params / 1e6
        for world, overhead, comm in ((1, 0.0, None), (2, 0.8 + params / 2e6, 1.0 + params / 1e6)):
            rows.append(
                bench_record(
                    f"m{k:03d}",
                    params,
                    world,
                    8 * world / (fb + overhead) * 1e3,
                    forward_ms=fb / 3,
                    backward_ms=2 * fb / 3,
                    optimizer_ms=0.2,
                    sync_overhead_ms=overhead,
                    comm_ms=comm,
                )
            )
    return write_jsonl(tmp_path / "many.jsonl", rows)


def test_the_interval_calibrates_a_bounded_number_of_times(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = _many_models(tmp_path, 60)
    calls: list[str] = []
    original = calibration.calibrate

    def counted(table, model):
        calls.append(model)
        return original(table, model)

    # the model advised on is calibrated in calibration.advised, those left out in
    # measured.step_error
    monkeypatch.setattr(calibration, "calibrate", counted)
    monkeypatch.setattr(measured, "calibrate", counted)
    advice = gpuscale.advise(bench=path, interconnect="pcie-phb")
    assert len(calls) <= MAX_LEFT_OUT + 1  # the model advised on, and those left out
    left_out = calls[1:]
    assert "m000" in left_out and "m059" in left_out  # the smallest and the largest
    error = advice.calibration.model.error
    source = said(error.source)
    assert len(error.residuals) == MAX_LEFT_OUT and f"{MAX_LEFT_OUT} of the 60" in source


def test_a_few_models_are_all_left_out(tmp_path: Path, golden: Golden) -> None:
    advice = gpuscale.advise(bench=_many_models(tmp_path, 3), interconnect="pcie-phb")
    error = advice.calibration.model.error
    source = said(error.source)
    assert len(error.residuals) == 3 and "of the 3 models" not in source
    golden.check(VIEW, "every one of 3 models left out", source)

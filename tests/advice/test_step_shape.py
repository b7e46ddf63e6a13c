"""The step against the per-device batch (issue 41): flat, then linear, fitted to the
batches measured; the measurement itself at a measured batch; the largest batch from the
memory measured (the real H100 rows: ``test_h100_rows.py``)."""

from __future__ import annotations

import pytest

from gpuscale.advice.calibrate.fits import fit, fit_with_error
from gpuscale.advice.calibrate.memory import device_memory_bytes, largest_batch
from gpuscale.advice.explain.phrasebook import said
from gpuscale.advice.model.hardware import device_record

from ..golden import Golden

VIEW = "advice/step_shape"
# device names as nvidia-smi reports them (inputs, not words of the advice)
H100 = "NVIDIA H100 80GB HBM3"
A100_40GB = "NVIDIA A100-SXM4-40GB"
RTX_4090 = "NVIDIA GeForce RTX 4090"


def test_a_floor_then_a_line_is_recovered_from_its_points() -> None:
    # 10 ms whatever the batch until 0.2 ms per sample passes it (at batch 50)
    points = [(1, 10.0), (8, 10.0), (32, 10.0), (256, 51.2), (512, 102.4)]
    shape = fit(points, fallback_ms_per_sample=1.0)
    assert shape.floor_ms == pytest.approx(10.0)
    assert shape.ms(100) == pytest.approx(20.0)
    assert shape.ms(16) == pytest.approx(10.0)
    assert shape.knee == pytest.approx(50.0)


def test_a_line_stays_a_line() -> None:
    points = [(8, 3.0 + 8 * 0.5), (32, 3.0 + 32 * 0.5), (128, 3.0 + 128 * 0.5)]
    shape = fit(points, fallback_ms_per_sample=1.0)
    assert shape.knee is None
    assert shape.ms(64) == pytest.approx(35.0)


def test_left_out_errors_are_measured_on_batches_not_fitted(golden: Golden) -> None:
    points = [(1, 10.0), (8, 11.0), (64, 12.0), (256, 40.0)]
    shape = fit_with_error(points, fallback_ms_per_sample=0.01)
    assert [b for b, _ in shape.left_out] == [1, 8, 64, 256]
    # 256 left out: nothing above the floor is left, so the rate beyond is the fallback's
    error_256 = dict(shape.left_out)[256]
    assert error_256 < -0.5
    golden.check(VIEW, "errors of the batches left out", said(shape.finding()))
    assert fit_with_error(points[:2], 0.01).left_out == ()


def test_two_batches_give_bytes_per_sample_and_one_a_bound() -> None:
    # 1 GB besides, 10 MB per sample; 90% of 80 GB usable: (72 - 1) GB / 10 MB = 7,100
    found, how = largest_batch([(1, 1.01e9), (100, 2.0e9)], 80e9)
    assert found == 7_100
    assert "10 MB per sample" in said(how)
    # one batch: its peak / batch bounds the bytes per sample, so at least 72 GB / 20 MB
    found, how = largest_batch([(100, 2.0e9)], 80e9)
    assert found == 3_600
    assert "at least" in said(how)


def test_device_memory_from_the_row_else_its_catalogue_part() -> None:
    assert device_memory_bytes(85.0e9, device_record(H100)) == 85.0e9
    # the catalogue's GiB, as the memory check counts them (an H100's 80 GB: 85.9e9 bytes)
    assert device_memory_bytes(None, device_record(H100)) == 80 * 2**30
    assert device_memory_bytes(None, device_record(A100_40GB)) == 40 * 2**30
    # a name that writes no size: the catalogue's part still knows it
    assert device_memory_bytes(None, device_record(RTX_4090)) == 24 * 2**30
    # a size written in a name the catalogue does not know is not read from the words
    assert device_memory_bytes(None, device_record("Acme Tensor 12GB")) is None

"""One peak for every reading of a rate given by numbers (``hardware.work_peak``): the
FLOPs' two readings, the fixed cost's bound and the IMPLAUSIBLE checks read the step
against the same peak, the one of the precision its matmuls run at: under ``--precision
mixed`` (the default: AMP's matmuls in bf16/fp16 on the tensor cores) the bf16 peak, under
``--precision fp32`` the TF32 peak, and the bf16 peak for an fp32 step faster than TF32's.
An H100's three peaks (TF32 495, bf16 989, plain FP32 67 TFLOP/s) are
three readings of one step; one is taken."""

from __future__ import annotations

import pytest

import gpuscale
from gpuscale.advice.model.hardware import MIN_MFU, device_record, rate_warnings, work_peak
from gpuscale.advice.types import Finding, FindingKind

H100 = device_record("H100")
PART = H100.part
# the user's request: 7B parameters, 900 ms a step of 4 samples, FLOPs not given
SEVEN_B = {"params": 7e9, "step_ms": 900.0, "batch": 4, "global_batch": 64}
SEVEN_B_ON = {**SEVEN_B, "device_name": "H100", "link": "nvlink4", "max_devices": 8}


def _found(advice, kind: FindingKind, where: str = "sources") -> Finding:
    (found,) = [
        f
        for f in getattr(advice.calibration.said, where)
        if isinstance(f, Finding) and f.kind == kind
    ]
    return found


@pytest.mark.parametrize(
    ("precision", "peak_of", "label"),
    [
        (None, "bf16_tflops", "bf16"),
        ("mixed", "bf16_tflops", "bf16"),
        ("fp32", "tf32_tflops", "TF32"),
    ],
)
def test_the_flops_readings_take_the_peak_of_the_precision(
    precision: str | None, peak_of: str, label: str
) -> None:
    advice = gpuscale.advise(**SEVEN_B_ON, precision=precision)
    reading = _found(advice, FindingKind.FLOPS_TWO_READINGS)
    peak = getattr(PART, peak_of)
    assert reading["peak_tflops"] == peak and reading["label"] == label
    # the step's share of that peak, and the fixed cost left at MIN_MFU of it
    work_at_peak_ms = 4 * 6 * 7e9 / (peak * 1e12) * 1e3
    assert reading["share_pct"] == pytest.approx(100 * work_at_peak_ms / 900.0)
    assert reading["floor_ms"] == pytest.approx(900.0 - work_at_peak_ms / MIN_MFU)
    # the FLOPs' low reading (6 x parameters) prices the step with that floor as fixed cost
    (end,) = [e for e in advice.calibration.search.ends if e[0] == "flops_per_sample"]
    assert end[4]["model"]["fixed"].ms == pytest.approx(reading["floor_ms"])


@pytest.mark.parametrize(("precision", "peak_of"), [(None, "bf16_tflops"), ("fp32", "tf32_tflops")])
def test_the_floor_check_and_the_fixed_cost_bound_read_one_peak(
    precision: str | None, peak_of: str
) -> None:
    """FLOPs given, a rate under 1% of the peak: the IMPLAUSIBLE finding and the fixed
    cost's bound name the same peak."""
    advice = gpuscale.advise(
        params=1e9,
        step_ms=90_000.0,
        batch=1,
        flops_per_sample=6e9,
        device_name="H100",
        precision=precision,
    )
    bound = _found(advice, FindingKind.FIXED_BOUNDED)
    under = _found(advice, FindingKind.RATE_UNDER_FLOOR, "warnings")
    assert bound["peak_tflops"] == under["peak_tflops"] == getattr(PART, peak_of)


def test_an_fp32_step_faster_than_tf32_is_read_at_bf16_and_above_it_is_implausible() -> None:
    tf32, bf16 = PART.tf32_tflops, PART.bf16_tflops
    between = (tf32 + bf16) / 2
    assert work_peak(H100, "fp32", tf32 * 0.9) == (tf32, "fp32")
    assert work_peak(H100, "fp32", between) == (bf16, "bf16")
    assert work_peak(H100, "mixed", tf32 * 0.9) == (bf16, "bf16")
    for precision in ("fp32", "mixed"):
        assert rate_warnings(between, H100, precision) == []
        (above,) = rate_warnings(bf16 * 1.01, H100, precision)
        assert above.kind == FindingKind.RATE_ABOVE_PEAK and above["peak_tflops"] == bf16
    for precision, peak in (("fp32", tf32), ("mixed", bf16)):
        (under,) = rate_warnings(peak * MIN_MFU * 0.9, H100, precision)
        assert under.kind == FindingKind.RATE_UNDER_FLOOR and under["peak_tflops"] == peak

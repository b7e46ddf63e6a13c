"""The break-even of an advice calibrated on a measured step (the H100 rows of
``h100_resnet50_bf16.jsonl``) agrees with the advice's own table: under weak scaling
2 devices beat 1 there (1.65x), yet the break-even read "2.8e-10 ms per MB" (the
measured step did not scale with the compute tried) and the family sentence "at no
size up to 10T parameters" (the speedup falls with size there: a user walk)."""

from __future__ import annotations

from pathlib import Path

import gpuscale

MEASURED = Path(__file__).with_name("h100_resnet50_bf16.jsonl")


def test_weak_scaling_break_even_agrees_with_the_table() -> None:
    advice = gpuscale.advise(bench=MEASURED, scaling="weak", samples=1.28e6, link="nvlink4")
    two = advice.predictions.set_index("accelerators").loc[2]
    assert two["speedup"] > 1
    inputs = advice.calibration
    assert inputs is not None and advice.break_even.compute_ms_per_grad_mb is not None
    own_ms_per_mb = inputs.model.compute.compute_ms(inputs.model.spec, inputs.run.batch) / (
        inputs.model.spec.grad_bytes / 1e6
    )
    # 2 devices beat 1 for this model: its own compute per MB is past the break-even,
    # and the break-even is a compute a step could have (not a rounding of zero)
    assert 1e-3 * own_ms_per_mb < advice.break_even.compute_ms_per_grad_mb < own_ms_per_mb
    said = "\n".join(advice.explanation)
    assert "at no size up to" not in said, said


def test_strong_scaling_still_says_the_family_threshold() -> None:
    advice = gpuscale.advise(bench=MEASURED, samples=1.28e6, link="nvlink4")
    assert "For this model's family" in "\n".join(advice.explanation)

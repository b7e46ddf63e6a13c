"""A prediction's 80% interval never ends below what no step can take less than: its
compute term at that count. A new user's walk read ``step_ms_low`` 0.25 ms at 2 devices
against 1.37 ms of compute, and a speedup's upper end capped at the ideal (2x) where the
step is mostly communication: numbers that cannot be true."""

from __future__ import annotations

from pathlib import Path

import pytest

import gpuscale

HERE = Path(__file__).parent
# The file and the least step_ms_low / compute_ms of its rows: 1 where the compute term
# has no range; below 1 only as far as the fixed cost's range moves the compute at N
# (before: 0.33, 0.45, 0.63, 0.82, 0.65)
LEAST = {
    HERE / "cpu_tiny_model_gloo.jsonl": 0.98,
    HERE.parent / "report" / "h100_paths.jsonl": 0.65,
    HERE.parent / "report" / "h100_sweep.jsonl": 1.0,
    HERE / "h100_resnet50_bf16.jsonl": 1.0,
    HERE / "h100_resnet50_bf16_large.jsonl": 1.0,
}


@pytest.mark.parametrize("path", list(LEAST), ids=lambda p: p.stem)
def test_the_step_low_end_is_not_below_the_compute(path: Path) -> None:
    p = gpuscale.advise(bench=path).predictions
    assert (p["step_ms_low"] >= LEAST[path] * p["compute_ms"] - 1e-9).all()
    assert (p["step_ms_low"] <= p["step_ms"]).all() and (p["step_ms"] <= p["step_ms_high"]).all()
    assert (p["speedup_low"] <= p["speedup"]).all() and (p["speedup"] <= p["speedup_high"]).all()


def test_a_step_mostly_communication_has_no_speedup_near_the_ideal() -> None:
    """The walk's CPU file at 2 devices: 4.75 ms a step, 0.70 ms of it compute; a step
    of compute alone is 1.1x, the most its interval can reach (it read 2.0x)."""
    p = gpuscale.advise(bench=HERE / "cpu_tiny_model_gloo.jsonl").predictions
    two = p[p["accelerators"] == 2].iloc[0]
    assert two["step_ms_low"] >= 0.69
    assert two["speedup_high"] <= 1.1

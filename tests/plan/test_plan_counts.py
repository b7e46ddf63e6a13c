"""At the powers of two the planned time falls (every step of 4, with its stated
exceptions: tests/plan/test_plan_smooth.py)."""

from __future__ import annotations

import pytest

from gpuscale import plan


def _rises(workload: str, accelerator: str, devices: str) -> list[tuple[int, int, float]]:
    """(count, next count, relative rise of the time) wherever the planned time rises."""
    rows = plan(workload=workload, accelerator=accelerator, devices=devices)
    rows = rows[rows["time_to_train_min"].notna()].reset_index(drop=True)
    minutes, counts = rows["time_to_train_min"].tolist(), rows["accelerators"].tolist()
    return [
        (counts[i], counts[i + 1], minutes[i + 1] / minutes[i] - 1)
        for i in range(len(minutes) - 1)
        if minutes[i + 1] > minutes[i]
    ]


@pytest.mark.parametrize(
    ("workload", "accelerator"),
    [("llama2_70b_lora", "H100"), ("bert", "H100"), ("stable_diffusion", "B200")],
)
def test_at_the_powers_of_two_the_time_falls(workload: str, accelerator: str) -> None:
    assert _rises(workload, accelerator, "4-1024") == []

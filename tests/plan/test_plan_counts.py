"""What ``docs/plan.md`` says of the planned time against the count, checked: it does not
fall at every count (a count the family ran keeps its own, larger batch), and at the
powers of two it does (the doc said it fell with every count)."""

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


def test_the_time_rises_where_the_doc_says() -> None:
    rises = _rises("llama2_70b_lora", "H100", "4-1024:4")
    assert len(rises) == 49
    largest = max(rises, key=lambda r: r[2])
    assert largest[:2] == (508, 512) and round(largest[2], 3) == 0.065
    assert all(r[2] < 0.003 for r in rises if r is not largest)
    llama = plan(workload="llama2_70b_lora", accelerator="H100", devices=[508, 512])
    assert llama["global_batch"].tolist() == [63, 64]
    bert = max(_rises("bert", "H100", "4-1024:4"), key=lambda r: r[2])
    assert bert[:2] == (508, 512) and round(bert[2], 3) == 0.040
    batches = plan(workload="bert", accelerator="H100", devices=[508, 512])["global_batch"]
    assert batches.tolist() == [3048, 3072]


@pytest.mark.parametrize(
    ("workload", "accelerator"),
    [("llama2_70b_lora", "H100"), ("bert", "H100"), ("stable_diffusion", "B200")],
)
def test_at_the_powers_of_two_the_time_falls(workload: str, accelerator: str) -> None:
    assert _rises(workload, accelerator, "4-1024") == []

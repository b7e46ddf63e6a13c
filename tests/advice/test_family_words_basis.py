"""The family sentence says what its basis is: an advice from numbers said "the only
member of its family benched in this configuration" with nothing benched, and an FSDP
advice named "its optimizer and DDP times"."""

from __future__ import annotations

import pytest

import gpuscale


@pytest.mark.parametrize("strategy", ["ddp", "fsdp"])
def test_a_family_from_numbers_says_nothing_was_benched(strategy: str) -> None:
    advice = gpuscale.advise(
        params=300e6, step_ms=100, batch=16, interconnect="pcie-phb", strategy=strategy
    )
    line = next(line for line in advice.explanation if line.startswith("For this model's family"))
    assert "from the step given (nothing benched)" in line, line
    assert "benched in this configuration" not in line, line
    assert f"its optimizer and {strategy.upper()} times per parameter" in line, line

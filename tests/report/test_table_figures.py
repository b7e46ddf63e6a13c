"""Every terminal table writes its numbers to one count of significant figures, trailing
zeros kept: v0.7 BERT's minutes read 3.36, 0.3928 and 30.63 (3, 4 and 4 figures); JSON
and CSV keep the full number."""

from __future__ import annotations

import re

import pytest

from gpuscale.quantities import TABLE_DIGITS
from gpuscale.report.text_table import cell_text


def figures(text: str) -> int:
    """The significant figures ``text`` writes (``3.360``: 4, ``0.3928``: 4)."""
    digits = re.sub(r"\D", "", text.split("e")[0]).lstrip("0")
    return len(digits)


@pytest.mark.parametrize("value", [3.36, 0.3928, 30.63, 167.2, 11.6, 0.05, 99.996, 2.1])
def test_a_table_cell_writes_the_table_s_figures(value: float) -> None:
    assert figures(cell_text(value, None)) == TABLE_DIGITS
    assert float(cell_text(value, None)) == pytest.approx(value, rel=10**-TABLE_DIGITS)


@pytest.mark.parametrize("value", [1.9, 3.59, 0.48, 1.0])
def test_a_column_s_own_figures_keep_their_zeros_too(value: float) -> None:
    assert figures(cell_text(value, ".3g")) == 3


def test_counts_stay_whole_and_large_numbers_grouped() -> None:
    assert [cell_text(v, None) for v in (8, 3.0, 12345.6)] == ["8", "3", "12,350"]

"""The energy sentences' per-sample figures in a unit that shows them."""

from __future__ import annotations

import re

from gpuscale import load_round
from gpuscale.analysis.energy_per_result import energy_scale_sentences, energy_table


def test_per_sample_energy_is_never_shown_as_zero() -> None:
    """3D U-Net's 13.5 J and 17.7 J per sample read "0.0 kJ -> 0.0 kJ" (a user walk)."""
    said = energy_scale_sentences(energy_table(load_round("v4.0")))
    pairs = [re.search(r"per sample (\S+) (k?J) -> (\S+) (k?J)", s) for s in said]
    found = [m.groups() for m in pairs if m]
    assert found, said
    for low, unit, high, unit_again in found:
        assert unit == unit_again and float(low.replace(",", "")) > 0
        assert float(high.replace(",", "")) > 0
    assert any(unit == "J" for _, unit, _, _ in found)  # the small ones in joules

"""A share that is not 0 is never said as 0%: the table wrote an efficiency of 0.15% as
0.1% while the explanation's sentences, formatted apart, said "2 devices: 0%" and
"throughput efficiency 0%" beside it (a user walk: ``--step-ms 0.01``)."""

from __future__ import annotations

import pytest

import gpuscale
from gpuscale.quantities import share_text


@pytest.mark.parametrize(
    ("value", "spec", "text"),
    [
        (0.0026, ".0%", "0.3%"),
        (0.00148, ".0%", "0.1%"),
        (-0.004, "+.0%", "-0.4%"),
        (0.5, ".0%", "50%"),
        (0.0, ".0%", "0%"),
        (0.00049, ".1%", "0.05%"),
        # a change above -100% is never -100% (all of it gone): a step's interval of -99.7%
        (-0.997, "+.0%", "-99.7%"),
        (-0.9996, "+.0%", "-99.96%"),
        (-1.0, "+.0%", "-100%"),
        (-0.5, "+.0%", "-50%"),
    ],
)
def test_a_share_keeps_its_first_figure(value: float, spec: str, text: str) -> None:
    assert share_text(value, spec) == text


def test_the_sentences_say_the_efficiency_the_table_shows() -> None:
    advice = gpuscale.advise(params=7e6, step_ms=0.01, batch=64, link="pcie-phb")
    at_two = advice.predictions.set_index("accelerators").loc[2]
    assert 0.001 < at_two["efficiency"] < 0.002  # 0.15%: 0.1% in the table
    lines = advice.explanation
    assert "No larger count keeps efficiency >= 70% (the next, 2 devices: 0.1%)." in lines
    assert not [line for line in lines if "efficiency 0%" in line or "devices: 0%" in line]

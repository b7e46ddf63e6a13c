"""A long time to train in a sentence also says hours (from 120 min) or days (from
2,880 min), beside the minutes the tables show."""

from __future__ import annotations

import math
import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gpuscale.advice.explain.phrasebook import sentence
from gpuscale.quantities import format_minutes, number

# (minutes, as a sentence says them): each side of both thresholds, huge, not a number
SAID = [
    (0.119, "0.119 min"),
    (5.39, "5.39 min"),
    (119.4, "119 min"),
    (119.9, "120 min (2 h)"),  # written 120 min: said as 120 is
    (120, "120 min (2 h)"),
    (134, "134 min (2.2 h)"),
    (2879, "2,879 min (48 h)"),
    (2879.6, "2,880 min (2 days)"),  # written 2,880 min
    (2880, "2,880 min (2 days)"),
    (62_500, "62,500 min (43 days)"),
    (416_700, "416,700 min (290 days)"),
    (1e9, "1,000,000,000 min (690,000 days)"),
    (1e15, "1,000,000,000,000,000 min (690,000,000,000 days)"),
    (math.inf, "inf min"),
    (math.nan, " min"),
]


@pytest.mark.parametrize(("minutes", "said"), SAID)
def test_a_time_to_train_as_a_sentence_says_it(minutes: float, said: str) -> None:
    assert format_minutes(minutes) == said


@pytest.mark.parametrize(
    ("low", "high", "said"),
    [
        (16_420, 17_000, "16,420-17,000 min (11-12 days)"),
        (100, 150, "100-150 min (1.7-2.5 h)"),  # the unit is the larger end's
        (1_000, 1_010, "1,000-1,010 min (17 h)"),  # hours alike: one value
        (1_000, 1_000.2, "1,000 min (17 h)"),  # minutes alike too: one value, not 1,000-1,000
        (30, 60, "30-60 min"),
        (math.nan, 5, " min"),
    ],
)
def test_an_interval_says_its_unit_once(low: float, high: float, said: str) -> None:
    assert format_minutes(low, high, digits=4) == said


WRITTEN = re.compile(r"^(?P<min>[\d,.]+) min(?: \((?P<n>[\d,.]+) (?P<unit>h|days)\))?$")


@given(st.just(0.0) | st.floats(min_value=1e-6, max_value=1e12))  # no exponent from 1e-6
def test_the_minutes_are_the_tables_and_the_hours_or_days_their_value(minutes: float) -> None:
    said = WRITTEN.match(format_minutes(minutes))
    assert said, format_minutes(minutes)
    assert said["min"] == number(minutes)  # the minutes as before, as the table reads
    written = float(said["min"].replace(",", ""))
    unit = "days" if written >= 2880 else "h" if written >= 120 else None
    assert said["unit"] == unit
    if unit:
        pictured = float(said["n"].replace(",", "")) * (1440 if unit == "days" else 60)
        assert pictured == pytest.approx(minutes, rel=0.051)  # 2 significant figures


def test_advice_says_a_long_time_in_days() -> None:
    said = sentence("trained", time=62_470.3, samples=50e6, cost=None, kwh=None)
    assert said.startswith("62,500 min (43 days) to train 50M samples")

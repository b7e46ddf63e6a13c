"""The derived scaling columns, computed once (``gpuscale.tables.measures``): known
answers, and the same numbers whether a plan's plain floats or an analysis' Series go in."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from gpuscale.tables import measures


def test_known_answers() -> None:
    # reference 4 accelerators at 100 min; 16 at 30 min
    s = measures.speedup(100.0, 30.0)
    assert s == pytest.approx(10 / 3)
    assert measures.efficiency(s, 16) == pytest.approx(10 / 48)
    assert measures.normalized_efficiency(s, 16, 4) == pytest.approx(10 / 12)
    assert measures.accelerator_hours(16, 30.0) == pytest.approx(8.0)
    assert measures.cost(8.0, 2.5) == pytest.approx(20.0)
    assert measures.energy_kwh(8.0, 700.0) == pytest.approx(5.6)


def test_no_price_or_power_is_nan_not_zero() -> None:
    assert math.isnan(measures.cost(8.0, None))
    assert math.isnan(measures.energy_kwh(8.0, None))


def test_numbers_and_series_give_the_same_values() -> None:
    n = pd.Series([4.0, 8.0, 64.0])
    t = pd.Series([100.0, 52.0, 9.0])
    s = measures.speedup(100.0, t)
    by_series = measures.normalized_efficiency(s, n, 4.0)
    one_by_one = [
        measures.normalized_efficiency(measures.speedup(100.0, ti), ni, 4.0)
        for ni, ti in zip(n, t, strict=True)
    ]
    assert by_series.tolist() == one_by_one
    assert measures.accelerator_hours(n, t).tolist() == pytest.approx([400 / 60, 416 / 60, 9.6])

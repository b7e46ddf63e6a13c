"""How gpuscale writes numbers for people: never an exponent."""

from __future__ import annotations

import math

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from gpuscale.formatting import devices, number


def test_examples() -> None:
    assert number(2528) == "2,528"
    assert number(3070.4) == "3,070"
    assert number(222.4) == "222"
    assert number(999.96) == "1,000"
    assert number(0.1759) == "0.176"
    assert number(1.234e-5) == "0.0000123"
    assert number(-0.5) == "-0.5"
    assert number(float("nan")) == number(None) == number(False) == ""
    assert number(True) == "yes"
    assert number("Eos") == "Eos"
    assert number(np.int64(3472)) == "3,472" and number(np.float64(10970.3), 4) == "10,970"
    assert number(np.bool_(True)) == "yes" and number(float("inf")) == "inf"


@given(st.floats(min_value=-1e15, max_value=1e15, allow_nan=False) | st.integers(-(10**15), 10**15))
def test_never_an_exponent_and_the_value_survives(value: float) -> None:
    text = number(value)
    if value != 0 and abs(value) < 1e-6:
        return  # the documented exception
    assert "e" not in text, text
    back = float(text.replace(",", ""))
    # three significant digits, or whole units from 1000 on
    assert math.isclose(back, value, rel_tol=5e-3, abs_tol=0.5 if abs(value) >= 999 else 0)


def test_devices_separates_thousands() -> None:
    assert devices(3472, "H100-SXM5-80GB") == "3,472 x H100-SXM5-80GB"
    assert devices(8.0, "B200") == "8 x B200"

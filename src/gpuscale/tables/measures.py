"""The derived columns of a scaling table, each computed here once: speedup, efficiency,
E', accelerator-hours, and what those hours cost in money and energy.

Plain arithmetic, so one function serves a number (the plan's pandas-free path), a numpy
array or a pandas Series alike, elementwise. With ``T`` a time to train (minutes), ``N``
accelerators and ``T_ref``, ``N_ref`` those of the reference:

* speedup ``S = T_ref / T``, or from rates (samples per second) ``S = X / X_ref``;
* efficiency ``E = S / N`` (the study's definition; ideal 1 only when ``N_ref = 1``);
* normalised efficiency ``E' = S / (N / N_ref)`` (1 = perfect scaling from the reference);
* accelerator-hours ``N T / 60``; cost ``hours x price per accelerator-hour``; energy
  ``hours x watts / 1000`` (kWh); NaN without a price or a power.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, TypeAlias

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd

    # A float, a numpy array or a pandas Series: every function here is arithmetic on them.
    Values: TypeAlias = float | np.ndarray | pd.Series


def speedup(reference_minutes: Values, minutes: Values) -> Values:
    """``S = T_ref / T``."""
    return reference_minutes / minutes


def rate_speedup(rate: Values, reference_rate: Values) -> Values:
    """``S = X / X_ref``: the speedup from throughputs (the same number as ``T_ref / T``
    when both runs do the same work)."""
    return rate / reference_rate


def efficiency(speedup: Values, accelerators: Values) -> Values:
    """``E = S / N``."""
    return speedup / accelerators


def normalized_efficiency(
    speedup: Values, accelerators: Values, reference_accelerators: Values
) -> Values:
    """``E' = S / (N / N_ref)``."""
    return speedup / (accelerators / reference_accelerators)


def accelerator_hours(accelerators: Values, minutes: Values) -> Values:
    """``N T / 60``: the accelerators held for the time to train, in hours."""
    return accelerators * minutes / 60.0


def _or_nan(value: float | None) -> float:
    """A parameter not given (None) as NaN, which every product carries through."""
    return math.nan if value is None else value


def cost(hours: Values, price_per_hour: float | None) -> Values:
    """``hours x price`` (the price of one accelerator-hour); NaN without a price."""
    return hours * _or_nan(price_per_hour)


def energy_kwh(hours: Values, power_w: float | None) -> Values:
    """``hours x watts / 1000``, the energy of ``hours`` accelerator-hours at ``power_w``
    watts each, in kWh; NaN without a power."""
    return hours * _or_nan(power_w) / 1000

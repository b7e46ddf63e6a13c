"""A bench row's cells as the calibration reads them (:func:`cell`), and the columns
that make runs comparable (``HARDWARE_COLUMNS``). The calibration of one bench model is
``advice.calibration.Benched``."""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

import pandas as pd

# Runs that share a machine setting: their compute and communication are comparable.
HARDWARE_COLUMNS = ("device", "device_name", "backend", "precision", "tf32", "threads")
T = TypeVar("T")


def cell(row: pd.Series, column: str, cast: Callable[..., T], default: T | None = None) -> T | None:
    """A bench row's ``column`` as ``cast`` makes it; ``default`` where the row has none
    (the column missing, or NaN)."""
    value = row.get(column)
    if pd.isna(value):
        return default
    return cast(value)

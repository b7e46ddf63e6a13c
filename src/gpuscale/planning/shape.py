"""The plan model's constants and its piecewise-linear shape in plain Python (the fast
path reads fits without numpy; ``gpuscale.planning.pooled`` fits them)."""

from __future__ import annotations

import math
from collections.abc import Sequence

MODEL_VERSION = "13"  # bump when the fit changes: fits stamped with another are refitted
KNOTS = 14  # log2 N = 0 .. 13: 1 to 8,192 devices
PIN = 3  # s(log2 8) = 0: the family level is the level at 8 devices


def hat_values(values: Sequence[float], x: float) -> float:
    """The piecewise-linear function with ``values`` at the integer knots 0 .. KNOTS-1,
    at ``x`` (continued linearly beyond the first and last knots)."""
    low = min(max(math.floor(x), 0), KNOTS - 2)
    frac = x - low
    return (1 - frac) * values[low] + frac * values[low + 1]

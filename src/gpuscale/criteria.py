"""The equilibrium criteria on plain lists (no numpy, no pandas): one implementation for
the analysis (``gpuscale.analysis.equilibrium``, over a scaling table) and the plan
(``gpuscale.planning``, over the counts asked, where a command must start fast).

:func:`kneedle` is Kneedle (Satopää, Albrecht, Irwin, Raghavan, "Finding a 'Kneedle' in a
Haystack", ICDCSW 2011) offline, as the ``kneed`` package computes it for a convex,
decreasing curve with its defaults (``S = 1``, ``interp_method="interp1d"``,
``online=False``): the same knee on every input (``tests/analysis/test_criteria.py``
compares them), without ``kneed``'s 2 s import of scipy and matplotlib.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import pairwise


def pareto_mask(time_min: Sequence[float], cost: Sequence[float]) -> list[bool]:
    """True where no other point is <= on both and < on one (minimising both)."""
    points = list(zip(time_min, cost, strict=True))
    return [
        not any(
            t2 <= t and c2 <= c and (t2 < t or c2 < c)
            for j, (t2, c2) in enumerate(points)
            if j != i
        )
        for i, (t, c) in enumerate(points)
    ]


def _normalise(values: Sequence[float]) -> list[float]:
    low, high = min(values), max(values)
    return [(v - low) / (high - low) for v in values]


def _extrema(values: list[float], better) -> list[int]:
    """Indices whose value is ``better`` than or equal to both neighbours (an edge
    compares with itself, as ``scipy.signal.argrelextrema``'s ``clip`` mode does)."""
    last = len(values) - 1
    return [
        i
        for i, v in enumerate(values)
        if better(v, values[max(i - 1, 0)]) and better(v, values[min(i + 1, last)])
    ]


def kneedle(x: Sequence[float], y: Sequence[float], sensitivity: float = 1.0) -> int | None:
    """The index of the knee of a convex decreasing curve (``x`` increasing), or None.

    Steps: (1) normalise x and y to [0, 1]; (2) flip y (``1 - y``) so the curve rises;
    (3) the difference curve ``y - x``; (4) its local maxima, each with the threshold
    ``maximum - S x mean spacing of x``; (5) walk from the first maximum: the knee is the
    latest maximum once the difference curve falls below its threshold (a local minimum
    sets the threshold to 0 and pauses the search until the next maximum)."""
    if len(x) < 2 or min(x) == max(x) or min(y) == max(y):
        return None
    xn = _normalise(x)
    yn = _normalise(y)
    yn = [max(yn) - v for v in yn]
    diff = [b - a for a, b in zip(xn, yn, strict=True)]
    maxima = _extrema(diff, lambda a, b: a >= b)
    minima = set(_extrema(diff, lambda a, b: a <= b))
    if not maxima:
        return None
    spacing = abs(sum(b - a for a, b in pairwise(xn)) / (len(xn) - 1))
    thresholds = {i: diff[i] - sensitivity * spacing for i in maxima}
    threshold, at, active = 0.0, maxima[0], True
    for i in range(maxima[0], len(diff) - 1):
        if i in thresholds:
            threshold, at, active = thresholds[i], i, True
        if i in minima:
            threshold, active = 0.0, False
        if active and diff[i + 1] < threshold:
            return at
    return None


def best_speed_x_efficiency(speedup: Sequence[float], efficiency: Sequence[float]) -> int:
    """The index maximising ``S x E`` (the first on a tie)."""
    score = [s * e for s, e in zip(speedup, efficiency, strict=True)]
    return score.index(max(score))


def last_above_threshold(normalised: Sequence[float], threshold: float) -> int | None:
    """The last index (by increasing count) whose ``E'`` is ``>= threshold x max E'``."""
    floor = threshold * max(normalised)
    return max((i for i, e in enumerate(normalised) if e >= floor), default=None)

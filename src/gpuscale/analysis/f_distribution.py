"""Quantiles of Fisher's F distribution in plain Python, for the intervals' F test.

``scipy.stats`` costs ~1.5 s to import, most of what a report spent importing the
analysis, for one quantile per result. The F distribution's CDF is a regularised
incomplete beta function, ``P(F <= x) = I_z(d1 / 2, d2 / 2)`` with ``z = d1 x / (d1 x + d2)``
(Abramowitz and Stegun 26.6.2), evaluated by its continued fraction (A&S 26.5.8, Lentz's
method as in Numerical Recipes 6.4) to ~1e-14, and inverted by bisection on ``z``. Equal
to ``scipy.stats.f.ppf`` to 1e-9 relative (tests/analysis/test_f_distribution.py).
"""

from __future__ import annotations

import functools
import math

_TINY = 1e-300
_EPS = 1e-15


def _off_zero(x: float) -> float:
    """``x``, or ``_TINY`` where it is too near zero to divide by (Lentz's method)."""
    if abs(x) > _TINY:
        return x
    return _TINY


def _beta_fraction(a: float, b: float, z: float) -> float:
    """The continued fraction of ``I_z(a, b)`` (converges fast for ``z < (a+1)/(a+b+2)``)."""
    c, d = 1.0, 1.0 - (a + b) * z / (a + 1.0)
    d = 1.0 / _off_zero(d)
    h = d
    for m in range(1, 10_000):
        for numerator in (
            m * (b - m) * z / ((a + 2 * m - 1) * (a + 2 * m)),
            -(a + m) * (a + b + m) * z / ((a + 2 * m) * (a + 2 * m + 1)),
        ):
            d = 1.0 / _off_zero(1.0 + numerator * d)
            c = _off_zero(1.0 + numerator / c)
            h *= d * c
        if abs(d * c - 1.0) < _EPS:
            break
    return h


def regularized_beta(a: float, b: float, z: float) -> float:
    """``I_z(a, b)``, the regularised incomplete beta function, for ``0 <= z <= 1``."""
    if z <= 0.0:
        return 0.0
    if z >= 1.0:
        return 1.0
    log_front = (
        math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(z) + b * math.log1p(-z)
    )
    front = math.exp(log_front)
    if z < (a + 1.0) / (a + b + 2.0):
        return front * _beta_fraction(a, b, z) / a
    return 1.0 - front * _beta_fraction(b, a, 1.0 - z) / b


@functools.cache
def f_quantile(p: float, d1: float, d2: float) -> float:
    """The ``p`` quantile of ``F(d1, d2)`` (``scipy.stats.f.ppf(p, d1, d2)``), for
    ``0 < p < 1`` and positive degrees of freedom."""
    if not (0.0 < p < 1.0 and d1 > 0 and d2 > 0):
        raise ValueError(f"need 0 < p < 1 and positive degrees of freedom, got {p}, {d1}, {d2}")
    low, high = 0.0, 1.0  # z = d1 x / (d1 x + d2), increasing in x
    for _ in range(200):
        mid = (low + high) / 2
        if regularized_beta(d1 / 2, d2 / 2, mid) < p:
            low = mid
        else:
            high = mid
        if high - low <= 1e-15 * high:
            break
    z = (low + high) / 2
    return d2 * z / (d1 * (1.0 - z))

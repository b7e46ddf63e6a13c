"""The F quantile of the intervals' F test, computed without scipy.stats, against it."""

from __future__ import annotations

import pytest

from gpuscale.analysis.f_distribution import f_quantile, regularized_beta

stats = pytest.importorskip("scipy.stats")
special = pytest.importorskip("scipy.special")


@pytest.mark.parametrize("d1", [1, 2, 3, 4, 5, 9, 19, 40])
@pytest.mark.parametrize("d2", [1, 2, 4, 9, 30, 99, 400, 3000])
@pytest.mark.parametrize("p", [0.05, 0.5, 0.95, 0.99])
def test_quantile_equals_scipy(p: float, d1: int, d2: int) -> None:
    assert f_quantile(p, d1, d2) == pytest.approx(stats.f.ppf(p, d1, d2), rel=1e-9)


@pytest.mark.parametrize("a, b", [(0.5, 0.5), (1, 7), (4.5, 200), (20, 1500), (2, 2)])
def test_regularized_beta_equals_scipy(a: float, b: float) -> None:
    for z in (0.0, 1e-6, 0.01, 0.3, 0.5, 0.77, 0.999, 1.0):
        assert regularized_beta(a, b, z) == pytest.approx(special.betainc(a, b, z), abs=1e-13)


def test_bad_arguments_are_refused() -> None:
    for args in ((0.0, 1, 1), (1.0, 1, 1), (0.5, 0, 1), (0.5, 1, -2)):
        with pytest.raises(ValueError):
            f_quantile(*args)

"""Scaling laws fitted to time to train against accelerators (scipy ``curve_fit``).

With ``r = N / N0`` (``N0`` the smallest count fitted) and ``T0`` its time:

* Amdahl: ``T(N) = T0 * ((1 - p) + p / r)``, parallel fraction ``p`` in [0, 1];
* Universal Scalability Law (Gunther): throughput ``X(r) = r / (1 + s(r-1) + k r(r-1))``,
  so ``T(N) = T0 * (1 + s(r-1) + k r(r-1)) / r`` with contention ``s`` and coherency ``k``
  >= 0 (k > 0 makes time rise again past an optimum);
* ideal linear scaling, the baseline: ``T(N) = T_prev * N_prev / N`` from the nearest
  smaller measured configuration.

Fits use the fastest system at each accelerator count of one accelerator family and
minimise relative error (log time). The package's one fitter of these laws: the plan's
model (``gpuscale.planning.pooled``) replaced the laws it once fitted itself, and
``benchmarks/advise_accuracy.py`` scores the advice against these as baselines.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable

import numpy as np
from scipy.optimize import OptimizeWarning, curve_fit


def amdahl(r: np.ndarray, t0: float, p: float) -> np.ndarray:
    return t0 * ((1 - p) + p / r)


def usl(r: np.ndarray, t0: float, s: float, k: float) -> np.ndarray:
    return t0 * (1 + s * (r - 1) + k * r * (r - 1)) / r


LAWS: dict[str, tuple[Callable[..., np.ndarray], list[float], tuple[list[float], list[float]]]] = {
    "amdahl": (amdahl, [1.0, 0.9], ([0.0, 0.0], [np.inf, 1.0])),
    "usl": (usl, [1.0, 0.01, 0.0001], ([0.0, 0.0, 0.0], [np.inf, 1.0, 1.0])),
}


def fit_law(
    law: str, n: np.ndarray, t: np.ndarray, n0: float
) -> Callable[[np.ndarray], np.ndarray]:
    """Fit ``law`` to (accelerators, minutes); return T as a function of accelerators."""
    fn, guess, bounds = LAWS[law]
    r = np.asarray(n, float) / n0
    guess = [float(t[0]) * (n[0] / n0), *guess[1:]]

    def log_model(r: np.ndarray, *args: float) -> np.ndarray:
        return np.log(np.maximum(fn(r, *args), 1e-12))

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", OptimizeWarning)  # exact fits: no covariance, fine
        params, _ = curve_fit(log_model, r, np.log(t), p0=guess, bounds=bounds, maxfev=20000)
    return lambda n_new: fn(np.asarray(n_new, float) / n0, *params)

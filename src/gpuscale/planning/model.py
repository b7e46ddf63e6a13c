"""The plan's model: time to train = samples to converge at the batch used / throughput.

For one accelerator family and workload, each measured system ``i`` (``N_i`` devices,
global batch ``B_i``, time ``T_i`` minutes, round ``R_i``) gives the minutes per expected
sample ``tau_i = T_i / E_R(B_i)``, with ``E_R(B) = E_min (1 + B / B_noise)`` fitted to the
RCPs of round ``R``'s ruleset (``gpuscale.analysis.critical_batch``; ``E = 1`` when the
workload has no RCPs: then convergence is not modelled). The throughput law is fitted on
the logarithm,

    ``log tau_i = d_{R_i} + log g(N_i / N_0; theta)``

with a free level ``d_R`` per round (software gets faster from round to round: each
round keeps its own level, and a plan uses the newest round's) and one shape ``g`` shared
by the rounds, one of

* ``ideal``: ``g = 1 / r``;
* ``power``: ``g = r^-alpha``, ``0 <= alpha <= 1.3``;
* ``amdahl``: ``g = (1 - p) + p / r``, ``0 <= p <= 1`` (the serial fraction is ``1 - p``);
* ``usl``: ``g = (1 + s (r - 1) + k r (r - 1)) / r`` (Gunther), ``s, k >= 0``.

For a given ``theta`` the best levels are the per-round means of the residuals (closed
form), so each law is fitted by a grid over its one or two parameters: numpy only, a few
milliseconds, no ``scipy.optimize`` on the report's path. The law used is the one with the
smallest leave-one-system-out error (mean absolute log error), not the best in-sample fit.
The law is then corrected by what the measurements say at their own counts
(:func:`anchor`: the newest round's mean residual at each measured count, interpolated in
log N between counts and fading as ``exp(-octaves)`` beyond them), and the leave-one-out
errors of law + correction give the interval (:func:`sigma_of`, :func:`widening`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from gpuscale.tables.workloads import round_key

LAWS: tuple[str, ...] = ("ideal", "power", "amdahl", "usl")
PARAMS = {"ideal": 0, "power": 1, "amdahl": 1, "usl": 2}
Z80 = 1.2815515655446004  # the 90% quantile of the standard normal: a central 80% interval
PRIOR_SIGMA = 0.12  # log error assumed before any leave-one-out error is seen ...
PRIOR_WEIGHT = 3.0  # ... worth this many errors
DRIFT_SIGMA = 0.08  # a new run (new round, new software) moves by this much in log
EXTRAPOLATION_WIDENING = 0.5  # sigma x (1 + this x octaves outside the measured counts)


def _grid(law: str) -> np.ndarray:
    """Candidate parameters of a law, one row each."""
    if law == "ideal":
        return np.zeros((1, 0))
    if law == "power":
        return np.linspace(0.0, 1.3, 131)[:, None]
    if law == "amdahl":
        return np.linspace(0.0, 1.0, 201)[:, None]
    s = np.concatenate([[0.0], np.logspace(-4, 0, 33)])
    k = np.concatenate([[0.0], np.logspace(-7, -1, 31)])
    return np.array(np.meshgrid(s, k)).reshape(2, -1).T


def log_shape(law: str, params: np.ndarray, r: np.ndarray) -> np.ndarray:
    """``log g(r)`` for each row of ``params`` (rows) and each ratio ``r`` (columns)."""
    r = np.asarray(r, float)[None, :]
    params = np.atleast_2d(np.asarray(params, float))
    if law == "ideal":
        return np.broadcast_to(-np.log(r), (max(len(params), 1), r.shape[1]))
    if law == "power":
        return -params[:, :1] * np.log(r)
    if law == "amdahl":
        p = params[:, :1]
        return np.log((1 - p) + p / r)
    s, k = params[:, :1], params[:, 1:2]
    return np.log((1 + s * (r - 1) + k * r * (r - 1)) / r)


@dataclass(frozen=True, slots=True)
class FittedLaw:
    """One law fitted to (devices, log minutes per expected sample, round)."""

    law: str
    params: tuple[float, ...]
    n0: float
    levels: dict[str, float] = field(default_factory=dict)

    def level(self, round_name: str | None = None) -> float:
        """The level of ``round_name``; of the newest fitted round not after it otherwise
        (the newest of all when None or older than every fitted round)."""
        ordered = sorted(self.levels, key=round_key)
        if round_name in self.levels:
            return self.levels[round_name]
        if round_name is not None:
            before = [r for r in ordered if round_key(r) <= round_key(round_name)]
            if before:
                return self.levels[before[-1]]
        return self.levels[ordered[-1]]

    def log_tau(self, devices: np.ndarray, round_name: str | None = None) -> np.ndarray:
        r = np.asarray(devices, float) / self.n0
        return self.level(round_name) + log_shape(self.law, np.array(self.params), r)[0]


def fit_law(law: str, devices: np.ndarray, log_tau: np.ndarray, rounds: list[str]) -> FittedLaw:
    """The grid point of ``law`` with the smallest squared log error, levels per round."""
    devices = np.asarray(devices, float)
    log_tau = np.asarray(log_tau, float)
    n0 = float(devices.min())
    names = sorted(set(rounds), key=round_key)
    member = np.array([[r == name for name in names] for r in rounds], float)  # n x rounds
    counts = member.sum(axis=0)
    grid = _grid(law)
    resid = log_tau[None, :] - log_shape(law, grid, devices / n0)  # candidates x n
    levels = resid @ member / counts  # candidates x rounds
    cost = ((resid - levels @ member.T) ** 2).sum(axis=1)
    best = int(np.argmin(cost))
    return FittedLaw(
        law,
        tuple(float(x) for x in grid[best]),
        n0,
        {name: float(levels[best, j]) for j, name in enumerate(names)},
    )


def eligible(law: str, devices: np.ndarray) -> bool:
    """A law is tried when the distinct device counts outnumber its parameters."""
    return len(np.unique(devices)) > PARAMS[law]


def loo_errors(
    law: str,
    devices: np.ndarray,
    log_tau: np.ndarray,
    rounds: list[str],
    anchored: bool = False,
) -> np.ndarray:
    """Leave-one-system-out log errors (predicted - measured) of ``law`` (with its
    :func:`anchor` when ``anchored``); a system whose round has no other system is
    predicted at the level of the newest earlier round (as a new round would be). NaN
    where too few systems remain."""
    devices = np.asarray(devices, float)
    errors = np.full(len(devices), math.nan)
    for i in range(len(devices)):
        keep = np.arange(len(devices)) != i
        if not keep.any() or not eligible(law, devices[keep]):
            continue
        kept_rounds = [r for r, k in zip(rounds, keep, strict=True) if k]
        fitted = fit_law(law, devices[keep], log_tau[keep], kept_rounds)
        at = devices[i : i + 1]
        predicted = float(fitted.log_tau(at, rounds[i])[0])
        if anchored:
            predicted += anchor(fitted, devices[keep], log_tau[keep], kept_rounds, at)[0]
        errors[i] = predicted - log_tau[i]
    return errors


def per_count(
    devices: np.ndarray, values: np.ndarray, rounds: list[str], how: str = "mean"
) -> tuple[np.ndarray, np.ndarray]:
    """(counts, value at each): at each measured count, the mean (or median) of the
    newest round's systems there."""
    devices = np.asarray(devices, float)
    values = np.asarray(values, float)
    counts = np.unique(devices)
    out = np.empty(len(counts))
    for j, count in enumerate(counts):
        at = devices == count
        newest = max((r for r, a in zip(rounds, at, strict=True) if a), key=round_key)
        pick = at & np.array([r == newest for r in rounds])
        out[j] = np.median(values[pick]) if how == "median" else np.mean(values[pick])
    return counts, out


def between(counts: np.ndarray, values: np.ndarray, targets: np.ndarray) -> np.ndarray:
    """Linear in log2 N between measured counts; outside them the nearest edge's value
    times ``exp(-octaves)`` beyond it (a correction fades with distance)."""
    x, t = np.log2(counts), np.log2(np.asarray(targets, float))
    inside = np.interp(t, x, values)
    beyond = np.maximum(x[0] - t, 0) + np.maximum(t - x[-1], 0)
    return inside * np.exp(-beyond)


def anchor(
    fitted: FittedLaw,
    devices: np.ndarray,
    log_tau: np.ndarray,
    rounds: list[str],
    targets: np.ndarray,
) -> np.ndarray:
    """The law's local correction at each target count: the mean residual (measured -
    law, at its own round's level) of the newest round's systems at each measured count,
    interpolated in log N between measured counts and fading as ``exp(-octaves)`` beyond
    them. The law gives the shape; the correction keeps what the measurements say about
    their own counts (at a measured count the plan is their mean, moved to the newest
    round's level)."""
    devices = np.asarray(devices, float)
    resid = np.array(
        [
            float(log_tau[i] - fitted.log_tau(devices[i : i + 1], rounds[i])[0])
            for i in range(len(devices))
        ]
    )
    counts, mean = per_count(devices, resid, rounds)
    return between(counts, mean, np.atleast_1d(targets))


@dataclass(frozen=True, slots=True)
class Choice:
    """The law chosen by leave-one-out error, fitted on everything, and its errors."""

    fitted: FittedLaw
    errors: np.ndarray  # leave-one-out log errors of the chosen law
    scores: dict[str, float]  # mean absolute leave-one-out log error of each law tried


def choose_law(
    devices: np.ndarray, log_tau: np.ndarray, rounds: list[str], laws: tuple[str, ...] = LAWS
) -> Choice:
    """The law with the smallest mean absolute leave-one-out log error (a simpler law
    wins ties within 0.002); ``ideal`` when no other law can be tested."""
    devices = np.asarray(devices, float)
    log_tau = np.asarray(log_tau, float)
    scores: dict[str, float] = {}
    errors: dict[str, np.ndarray] = {}
    for law in laws:
        if not eligible(law, devices):
            continue
        e = loo_errors(law, devices, log_tau, rounds)
        if np.isfinite(e).sum() < max(2, PARAMS[law] + 1) and law != "ideal":
            continue
        errors[law] = e
        finite = e[np.isfinite(e)]
        scores[law] = float(np.mean(np.abs(finite))) if len(finite) else math.inf
    best = "ideal"
    for law in scores:
        if scores[law] < scores.get(best, math.inf) - 0.002:
            best = law
    fitted = fit_law(best, devices, log_tau, rounds)
    return Choice(fitted, errors.get(best, np.array([])), scores)


def sigma_of(errors: np.ndarray) -> float:
    """The log-scale spread of a prediction: leave-one-out errors pooled with a prior
    (``PRIOR_SIGMA`` worth ``PRIOR_WEIGHT`` errors), plus the drift of a new run."""
    e = np.asarray(errors, float)
    e = e[np.isfinite(e)]
    k = len(e)
    within = (k * float(np.mean(e**2) if k else 0.0) + PRIOR_WEIGHT * PRIOR_SIGMA**2) / (
        k + PRIOR_WEIGHT
    )
    return math.sqrt(within + DRIFT_SIGMA**2)


def widening(devices: np.ndarray, measured: np.ndarray) -> np.ndarray:
    """``1 + EXTRAPOLATION_WIDENING x`` the octaves each count lies outside ``measured``."""
    devices = np.asarray(devices, float)
    low, high = float(np.min(measured)), float(np.max(measured))
    outside = np.maximum(np.log2(low / devices), 0) + np.maximum(np.log2(devices / high), 0)
    return 1 + EXTRAPOLATION_WIDENING * outside


def fit_batch(devices: np.ndarray, batch: np.ndarray) -> tuple[float, float]:
    """``(a, b)`` of ``log B = a + b log N`` by least squares, ``b`` clipped to [0, 1];
    with one device count, ``b = 1`` (the per-device batch kept, weak scaling)."""
    n = np.asarray(devices, float)
    b = np.asarray(batch, float)
    keep = np.isfinite(b) & (b > 0)
    n, b = np.log(n[keep]), np.log(b[keep])
    if not len(b):
        return math.nan, math.nan
    slope = 1.0
    if len(np.unique(n)) > 1:
        slope = float(np.clip(np.polyfit(n, b, 1)[0], 0.0, 1.0))
    return float(np.mean(b - slope * n)), slope

"""A result's runs resampled under the round's own scoring rule: the core of the intervals.

One run's time splits into convergence and pace, ``log t = m + c + e``: ``c`` the run's
samples (or epochs) to converge, ``e`` its minutes per sample, each as a deviation from
its result's mean (``m``). A replicate of a result draws as many runs as the result
has, failed ones included (a draw of a failed run fails), gives each drawn run a
convergence deviation from a *pool* and a pace deviation from the result's own runs, and
scores the replicate as the official rule does: the olympic average (``k`` runs dropped
at each end, failed runs counting as dropped at the slow end; more than ``k`` failures
give no score). The pool is where runs are few: the convergence deviations of every
result of the workload at that global batch and of the reference convergence points
(RCPs) at it, so a result whose five runs happened to converge at one epoch count is
given the spread its batch shows.

Deviations from a mean of ``m`` values are scaled by ``sqrt(m / (m - 1))``, so their
spread estimates the population's rather than understating it (the usual ``m - 1``), and
those of a result's own runs by :func:`small_sample_factor`, since a spread estimated from
five runs is itself uncertain.
Replicate scores are returned relative to their mean, so that the bootstrap world's true
score is the official one (see ``gpuscale.analysis.score_intervals`` for the intervals).
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass

import numpy as np

from gpuscale.analysis.f_distribution import f_quantile

# The smoothed bootstrap's kernel: each drawn run's log time gets Gaussian noise of this
# share of its deviations' spread, so that quantised convergence (whole epochs,
# evaluation steps) does not make an interval's end hinge on which atom a quantile falls
# on (in benchmarks/interval_coverage.py, coverage of T with 5 epoch-quantised runs was
# 91% without it, 92.5% at 0.25 and 94% at 0.35, the others staying within 94-96.5%).
SMOOTHING = float(os.environ.get("SMOOTHING", "0.35"))
# A pseudo-run at the next count below and above those a quantised batch shows (at most
# MAX_COUNTS distinct counts), of this weight against 1 for each run of the pool.
HULL = bool(int(os.environ.get("HULL", "0")))
LEAVE_OUT = bool(int(os.environ.get("LEAVE_OUT", "1")))
PRIOR_NEXT = float(os.environ.get("PRIOR_NEXT", "0.5"))
PRIOR = 0.5
MAX_COUNTS = 5
# The normal quantile of a two-sided 95% interval's upper end, Phi^-1(0.975).
Z_95 = 1.959963984540054


@dataclass(frozen=True, slots=True)
class ResultRuns:
    """The runs of one result: the counted runs' times (minutes) and samples (or epochs)
    to converge (NaN where unknown), how many runs failed, and the olympic drop count."""

    times_min: np.ndarray
    samples: np.ndarray
    failed: int = 0
    max_dropped: int = 1

    @property
    def runs(self) -> int:
        return len(self.times_min) + self.failed

    def convergence_deviations(self) -> np.ndarray | None:
        """Centred log samples to converge of the counted runs (scaled, see the module
        docstring); None where a counted run has no positive count."""
        samples = np.asarray(self.samples, float)
        if len(samples) == 0 or not (np.isfinite(samples) & (samples > 0)).all():
            return None
        return centred(np.log(samples))


def centred(values: np.ndarray) -> np.ndarray:
    """``values`` minus their mean, scaled by ``sqrt(m / (m - 1))`` (zeros for m < 2)."""
    values = np.asarray(values, float)
    m = len(values)
    if m < 2:
        return np.zeros(m)
    return (values - values.mean()) * np.sqrt(m / (m - 1))


def small_sample_factor(m: int) -> float:
    """How much wider than its estimated spread a result's own ``m`` runs are drawn, for
    the 95% intervals: ``t(0.975, m - 1) / z(0.975)`` (Student's t over the normal
    quantile; 1.42 for 5 runs, 1.15 for 10, 1 for m < 2; ``t(0.975, d)^2`` is
    ``F(0.95, 1, d)``). A spread estimated from few runs is itself uncertain, and a
    bootstrap that takes it as known covers less than its level (benchmarks/
    interval_coverage.py, every run at one epoch count: T covered 87.5% with 5 runs and
    91.9% with 10 without it)."""
    if m < 2:
        return 1.0
    return math.sqrt(f_quantile(0.95, 1, m - 1)) / Z_95


def olympic_rows(times: np.ndarray, max_dropped: int = 1) -> np.ndarray:
    """The olympic score of each row of ``times`` (``inf`` = a failed run): with failed
    runs sorted last, the official rule keeps sorted positions ``k .. n - k - 1``
    whenever at most ``k`` runs failed (NaN otherwise, as the official tool gives no
    score)."""
    n = times.shape[1]
    k = max_dropped
    if n < 2 * k + 1:
        return np.full(times.shape[0], np.nan)
    ordered = np.sort(times, axis=1)
    scores = ordered[:, k : n - k].mean(axis=1)
    scores[np.isinf(times).sum(axis=1) > k] = np.nan
    return scores


def official_score(result: ResultRuns) -> float:
    """The olympic score of the result's runs as they are (NaN where none)."""
    times = np.concatenate([result.times_min, np.full(result.failed, np.inf)])
    return float(olympic_rows(times[None, :], result.max_dropped)[0])


@dataclass(frozen=True, slots=True)
class PoolDraws:
    """The convergence law of a batch's pooled runs, to draw each replicate's runs from:
    ``values`` the pooled log deviations, ``spread`` their standard deviation over the
    ``size`` runs (the smoothing kernel's scale). Where the batch converges at a few
    counts, ``values`` are those counts' deviations (and the next ones'), ``counts``
    the counts themselves, ``alpha`` the Dirichlet parameters of their law (the runs at
    each plus a prior) and ``weights`` one law drawn per replicate, shared by every
    result at the batch (so that it cancels between them in a speedup); without
    ``weights`` the pooled runs are drawn uniformly."""

    values: np.ndarray
    spread: float
    size: int
    counts: np.ndarray | None = None
    alpha: np.ndarray | None = None
    weights: np.ndarray | None = None

    def draw(
        self, n_boot: int, n: int, rng: np.random.Generator, weights: np.ndarray | None = None
    ) -> np.ndarray:
        """``n_boot x n`` deviations, replicate ``b``'s from its law (``weights``, by
        default the shared ``self.weights``) over the counts some pooled run showed."""
        weights = self.weights if weights is None else weights
        if weights is None:
            return self.values[rng.integers(0, len(self.values), (n_boot, n))]
        cdf = np.cumsum(np.where(self.alpha >= 1, weights[:n_boot], 0.0), axis=1)
        cdf /= cdf[:, -1:]
        at = (rng.random((n_boot, n))[:, :, None] > cdf[:, None, :-1]).sum(axis=2)
        return self.values[at]

    def own_left_out(
        self, samples: np.ndarray, n_boot: int, rng: np.random.Generator
    ) -> np.ndarray | None:
        """Laws drawn from the pool without a result's own runs (``samples``): its
        score's error against a law its own runs did not pull toward them (with them, a
        result scored at the low count of two saw a law leaning low, and its interval
        stopped short of the truth). None where the pool's law is not drawn."""
        if self.alpha is None:
            return None
        own = (np.round(samples, 9)[:, None] == self.counts[None, :]).sum(axis=0)
        alpha = np.maximum(self.alpha - own, PRIOR)
        weights = rng.gamma(alpha, size=(n_boot, len(alpha)))
        return weights / weights.sum(axis=1, keepdims=True)

    def expected_scores(
        self, counted: int, runs: int, max_dropped: int, weights: np.ndarray | None = None
    ) -> np.ndarray | None:
        """Each replicate's law's (``weights``, by default the shared ones) expected
        olympic score of ``runs`` runs, ``counted`` of them counted (the others failed,
        sorted last), in units of ``exp(values)``: ``E[X_(j)] = a_1 + sum_i (a_i -
        a_(i-1)) P(Bin(counted, F(a_(i-1))) < j)`` over the kept positions ``j``. None
        without drawn laws."""
        weights = self.weights if weights is None else weights
        if weights is None:
            return None
        atoms = np.exp(self.values)
        below = np.cumsum(weights, axis=1)[:, :-1, None]  # F(a_(i-1))
        kept = np.arange(max_dropped, runs - max_dropped)  # 0-based positions j - 1
        cdf = np.zeros((*below.shape[:2], len(kept)))  # P(Bin(counted, F) <= j - 1)
        pmf = (1.0 - below) ** counted
        for i in range(counted):
            cdf += np.where(kept[None, None, :] >= i, pmf, 0.0)
            pmf = pmf * below / np.maximum(1.0 - below, 1e-300) * ((counted - i) / (i + 1))
        steps = np.diff(atoms)[None, :, None]
        return atoms[0] + (steps * cdf).sum(axis=1).mean(axis=1)


def pool_draws(
    groups: list[np.ndarray], n_boot: int, rng: np.random.Generator
) -> PoolDraws | None:
    """The law of the pooled runs, ``groups`` the log samples to converge at each batch
    pooled, each centred on its own mean (see :func:`centred`). Where one batch shows at
    most ``MAX_COUNTS`` distinct counts, the law is drawn per replicate over those counts
    and the next count below and above: ``Dirichlet(runs at each + PRIOR, PRIOR_NEXT
    at the next ones)``, so a pool that showed one count never gives a zero-width
    interval. None without runs."""
    groups = [np.asarray(g, float) for g in groups if len(g)]
    if not groups:
        return None
    values = np.concatenate([centred(g) for g in groups])
    spread = float(values.std())
    if len(groups) > 1 or len(values) < 2:
        return PoolDraws(values, spread, len(values))
    samples = np.round(np.exp(groups[0]), 9)
    atoms, seen = np.unique(samples, return_counts=True)
    if len(atoms) > MAX_COUNTS:
        return PoolDraws(values, spread, len(values))
    if len(atoms) > 1:
        step = float(np.diff(atoms).min())
    else:  # one count: 1 where it is a whole number above 1, else a quarter of it
        step = 1.0 if float(atoms[0]).is_integer() and atoms[0] > 1 else 0.25 * atoms[0]
    alpha = np.concatenate([[PRIOR_NEXT], seen + PRIOR, [PRIOR_NEXT]])
    atoms = np.concatenate([[atoms[0] - step], atoms, [atoms[-1] + step]])
    alpha, atoms = alpha[atoms > 0], atoms[atoms > 0]
    m = len(values)
    logs = (np.log(atoms) - np.mean(groups[0])) * np.sqrt(m / (m - 1))
    weights = rng.gamma(alpha, size=(n_boot, len(alpha)))
    weights /= weights.sum(axis=1, keepdims=True)
    return PoolDraws(logs, spread, m, np.round(atoms, 9), alpha, weights)


def replicate_ratios(
    result: ResultRuns, pool: PoolDraws | None, n_boot: int, rng: np.random.Generator
) -> np.ndarray:
    """``2 x n_boot`` replicate scores of a result divided by their mean (NaN where a
    replicate has no score; all NaN when fewer than half score): row 0 for its time,
    row 1 for a ratio with another result. ``pool``: the law to draw each run's
    convergence from (replicate ``b`` from its own drawn law, and its error against
    that law's expected score where the law is drawn); None draws whole run times from
    the result's own runs (their centred log times). The runs' own deviations are
    widened by :func:`small_sample_factor`: for row 1 at ``2 (m - 1)`` degrees of freedom,
    as Welch's for two results of ``m`` runs (each side at its own ``m - 1`` made a
    speedup's interval cover 98% with 5 runs)."""
    times = np.asarray(result.times_min, float)
    n, counted = result.runs, len(times)
    if counted < 1 or n < 2 * result.max_dropped + 1:
        return np.full((2, n_boot), np.nan)
    log_t = np.log(times)
    if pool is None or result.convergence_deviations() is None:
        conv = np.zeros((n_boot, n))
        own = centred(log_t)
        spread = float(own.std()) * small_sample_factor(counted)
    else:
        conv = pool.draw(n_boot, n, rng)
        own = centred(log_t - np.log(np.asarray(result.samples, float)))
        spread = pool.spread
    own = own[rng.integers(0, counted, (n_boot, n))]
    kernel = rng.normal(0.0, SMOOTHING * spread, conv.shape)
    failed = rng.integers(0, n, (n_boot, n)) >= counted  # a failed run drawn
    laws = [None, None]  # for the time: a law without the result's own runs
    if pool is not None and LEAVE_OUT:
        laws[0] = pool.own_left_out(np.asarray(result.samples, float), n_boot, rng)
    out = np.full((2, n_boot), np.nan)
    for row, df in enumerate((counted - 1, 2 * (counted - 1))):
        if laws[row] is not None:
            conv_row = pool.draw(n_boot, n, rng, laws[row])
        else:
            conv_row = conv
        truths = None if pool is None else pool.expected_scores(counted, n, result.max_dropped, laws[row])
        drawn = np.exp(log_t.mean() + conv_row + kernel + own * small_sample_factor(df + 1))
        drawn[failed] = np.inf
        scores = olympic_rows(drawn, result.max_dropped)
        if np.isnan(scores).mean() > 0.5:
            return np.full((2, n_boot), np.nan)
        if truths is not None:  # each replicate's error against its own law's true score
            scores = scores / truths
        out[row] = scores / np.nanmean(scores)
    return out


def result_ratios(
    result: ResultRuns, pool: PoolDraws | None, n_boot: int, rng: np.random.Generator
) -> np.ndarray:
    """The replicate ratios of a result (:func:`replicate_ratios`): with the pooled
    convergence spread, unless its own runs vary significantly more than the pool says, then with its own runs alone.
    Significantly: a one-sided F test at 5% of the variance of its log times against
    the pool's convergence variance plus its own runs' pace variance (degrees of freedom
    ``runs - 1`` and ``pool.size - 1``). Taking the wider of the two instead would widen
    every interval a little (coverage of E' rose to 98% in the simulation)."""
    if (
        pool is None
        or pool.size < 2
        or result.convergence_deviations() is None
        or (len(result.times_min) > 1 and _noisier_than_pool(result, pool))
    ):
        return replicate_ratios(result, None, n_boot, rng)
    return replicate_ratios(result, pool, n_boot, rng)


def _noisier_than_pool(result: ResultRuns, pool: PoolDraws) -> bool:
    """True where the result's log-time variance exceeds the pool's convergence variance
    plus its pace variance beyond the 95th percentile of ``F(runs - 1, pool.size - 1)``."""
    log_t = np.log(np.asarray(result.times_min, float))
    pace = log_t - np.log(np.asarray(result.samples, float))
    own = float(np.var(log_t, ddof=1))
    pooled = pool.spread**2 * pool.size / (pool.size - 1)
    expected = float(pooled + np.var(pace, ddof=1))
    if expected <= 0:
        return own > 0
    return own / expected > f_quantile(0.95, len(log_t) - 1, pool.size - 1)


def basic_interval(
    estimate: float, log_errors: np.ndarray, level: float = 0.95
) -> tuple[float, float]:
    """The basic (reflected) bootstrap interval on the log scale: ``estimate x exp(-q)``
    for the upper and lower quantiles ``q`` of the replicates' log errors (their log
    value minus the bootstrap world's true one). NaN where fewer than half are finite.

    It always holds ``estimate``: where the errors' quantiles are both of one sign (a
    bias correction larger than the spread, a skewed replicate distribution) the side
    that would exclude the estimate is widened to it, never the other narrowed. An
    interval that excludes the number it qualifies cannot be reported as its 95% range."""
    finite = log_errors[np.isfinite(log_errors)]
    if len(finite) < len(log_errors) / 2 or not np.isfinite(estimate):
        return float("nan"), float("nan")
    alpha = (1 - level) / 2
    q_low, q_high = np.quantile(finite, [alpha, 1 - alpha])
    q_low, q_high = min(float(q_low), 0.0), max(float(q_high), 0.0)
    if HULL:
        return float(estimate * np.exp(min(-q_high, q_low))), float(estimate * np.exp(max(-q_low, q_high)))
    return float(estimate * np.exp(-q_high)), float(estimate * np.exp(-q_low))

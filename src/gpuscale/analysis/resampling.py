"""A result's runs resampled under the round's own scoring rule: the core of the intervals.

One run's time splits into convergence and pace, ``log t = m + c + e``: ``c`` the run's
samples (or epochs) to converge, ``e`` its minutes per sample, each as a deviation from
its result's mean (``m``). A replicate of a result draws as many runs as the result
has, failed ones included (a draw of a failed run fails), gives each drawn run a
convergence deviation from a *pool* (``gpuscale.analysis.convergence_law``: every run of
the workload at that global batch and the reference convergence points (RCPs) at it, so
a result whose five runs happened to converge at one epoch count is given the spread its
batch shows) and a pace deviation from the result's own runs, and scores the replicate
as the official rule does: the olympic average (``k`` runs dropped at each end, failed
runs counting as dropped at the slow end; more than ``k`` failures give no score).

Deviations from a mean of ``m`` values are scaled by ``sqrt(m / (m - 1))``, so their
spread estimates the population's rather than understating it (the usual ``m - 1``), and
those of a result's own runs by :func:`small_sample_factor`, since a spread estimated from
five runs is itself uncertain.
Replicate scores are returned relative to their mean, so that the bootstrap world's true
score is the official one (see ``gpuscale.analysis.score_intervals`` for the intervals);
where the pool's law is drawn per replicate, each against its own law's expected score."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from gpuscale.analysis.convergence_law import PoolDraws, centred
from gpuscale.analysis.f_distribution import f_quantile

# The normal quantile of a two-sided 95% interval's upper end, Phi^-1(0.975).
Z_95 = 1.959963984540054


@dataclass(frozen=True, slots=True)
class ResultRuns:
    """The runs of one result: the counted runs' times (minutes) and samples (or epochs)
    to converge (NaN where unknown), how many runs failed, the olympic drop count, and
    how many counted runs logged a time that cannot be true (``untimed``: the runs
    table's ``time_flag``). An untimed run is one of the runs a replicate draws (it ran
    and counted) but its own time is never drawn: a draw of it takes another counted
    run's, a time it could have had (its logged one is no time at all)."""

    times_min: np.ndarray
    samples: np.ndarray
    failed: int = 0
    max_dropped: int = 1
    untimed: int = 0

    @property
    def runs(self) -> int:
        return len(self.times_min) + self.untimed + self.failed

    def convergence_deviations(self) -> np.ndarray | None:
        """Centred log samples to converge of the counted runs (scaled, see the module
        docstring); None where a counted run has no positive count."""
        samples = np.asarray(self.samples, float)
        if len(samples) == 0 or not (np.isfinite(samples) & (samples > 0)).all():
            return None
        return centred(np.log(samples))


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


def replicate_ratios(
    result: ResultRuns, pool: PoolDraws | None, n_boot: int, rng: np.random.Generator
) -> np.ndarray:
    """``3 x n_boot`` replicate scores of a result divided by their mean (NaN where a
    replicate has no score; all NaN when fewer than half score): row 0 for its time,
    row 1 for a ratio with another result, row 2 the share of its time's error that
    counts no pooled run showed would add (ones where the law is not drawn). ``pool``:
    the law to draw each run's convergence from (replicate ``b`` from its own drawn law;
    row 0 from a law without the result's own runs, and against that law's expected
    score over the counts shown); None draws whole run times from the result's own runs
    (their centred log times); row 1 from the deviations within each pooled result where
    the law is continuous (``PoolDraws.within``), and where it is quantised as row 0's:
    from a law without the result's own runs and against that law's expected score
    (drawn from the law with them, a pair whose scores differ put its off-count runs in
    the law, which then widened its own interval: 5 runs at two or three counts, S
    covered 97.3-97.7%; see docs/speed.md). The runs' own deviations are widened by
    :func:`small_sample_factor`: for row 1 at ``2 (m - 1)`` degrees of freedom, as
    Welch's for two results of ``m`` runs (each side at its own ``m - 1`` made a
    speedup's interval cover 98% with 5 runs). Where the law is drawn over two counts or
    more, row 0's log errors are widened by :func:`small_sample_factor` of the pool's
    ``N`` runs (1.03 for 40, 1.07 for 20): against its own law's score each replicate's
    error is that law's sampling error alone, the law's estimation left out, and where
    the score's 97.5% quantile fell inside an atom (10 runs at 6 or 7 epochs, P(7) =
    0.5: the results with 8 runs at 7 epochs, 4.4% of them) the blurred quantile stopped
    short of it two times in three; T covered 91.9%. At the pool's others (``N - m``,
    the runs the law is drawn from: 1.04 and 1.09) 3/4 epochs, p 0.5, 5 runs: 97.1%.
    Over one count the drawn law is that count: its estimation moves no replicate (the
    next counts are row 2's), and the error, the runs' pace, is widened already."""
    times = np.asarray(result.times_min, float)
    n, counted = result.runs, len(times)
    if counted < 1 or n < 2 * result.max_dropped + 1:
        return np.full((3, n_boot), np.nan)
    log_t = np.log(times)
    k = result.max_dropped
    if pool is None or result.convergence_deviations() is None:
        pool, conv = None, np.zeros((n_boot, n))  # whole run times from its own runs
        own = centred(log_t)
    else:
        conv = pool.draw(n_boot, n, rng)
        own = centred(log_t - np.log(np.asarray(result.samples, float)))
    own = own[rng.integers(0, counted, (n_boot, n))]
    as_counted = counted + result.untimed  # the runs a replicate draws as counted
    failed = rng.integers(0, n, (n_boot, n)) >= as_counted  # a failed run drawn
    left_out = None  # for the time: a law drawn without the result's own runs
    if pool is not None and pool.size >= 2 * counted:  # others' runs as many as its own
        left_out = pool.own_left_out(np.asarray(result.samples, float), n_boot, rng)
    out = np.full((3, n_boot), np.nan)
    out[2] = 1.0
    quantised = pool is not None and pool.weights is not None  # row 1 drawn as row 0
    for row, law in enumerate((left_out, left_out if quantised else None)):
        drawn_conv = conv if law is None else pool.draw(n_boot, n, rng, law)
        if row == 1 and pool is not None and pool.weights is None and pool.within is not None:
            drawn_conv = pool.draw(n_boot, n, rng, within=True)  # see the docstring
        df = (counted - 1) * (row + 1)
        drawn = np.exp(log_t.mean() + drawn_conv + own * small_sample_factor(df + 1))
        drawn[failed] = np.inf
        scores = olympic_rows(drawn, k)
        if np.isnan(scores).mean() > 0.5:
            return np.full((3, n_boot), np.nan)
        truths = None  # a ratio's where continuous: the batch's law cancels
        if pool is not None and (row == 0 or quantised):  # replicate law's true score
            truths = pool.expected_scores(as_counted, n, k, law, shown_only=True)
        if truths is not None:  # one per law, replicate b's law b mod their number
            scores = scores / np.resize(truths, n_boot)
        if truths is not None and row == 0:
            unseen = np.resize(truths / pool.expected_scores(as_counted, n, k, law), n_boot)
            out[2] = unseen / np.mean(unseen)
            if pool.seen is not None and pool.seen.sum() > 1:  # see the docstring
                logs = np.log(scores) - np.nanmean(np.log(scores))
                scores = np.exp(logs * small_sample_factor(pool.size))
        out[row] = scores / np.nanmean(scores)
    return out


def result_ratios(
    result: ResultRuns, pool: PoolDraws | None, n_boot: int, rng: np.random.Generator
) -> np.ndarray:
    """The replicate ratios of a result (:func:`replicate_ratios`): with the pooled
    convergence law, unless its own runs vary significantly more than the pool says,
    then with its own runs alone.
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
    if expected <= 1e-18:  # no spread in the pool or pace (rounding aside)
        return own > 1e-18
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
    return float(estimate * np.exp(-q_high)), float(estimate * np.exp(-q_low))

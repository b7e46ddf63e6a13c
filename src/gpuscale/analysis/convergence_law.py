"""The law of a batch's convergence, pooled over every run at the batch, for the intervals.

A result's runs are few; the runs of every result of the round at its global batch and
the reference convergence points (RCPs) at it are many, and they converge by one law
(the batch's hyperparameters fix it). ``gpuscale.analysis.resampling`` draws each
replicate run's convergence from this law. Two kinds:

* **continuous** (samples to converge vary freely): the pooled log samples, each batch's
  centred on its own mean, drawn uniformly; for a ratio, each result's centred on its own
  (``within``): the batch-centred pool holds the differences between the results, which
  are the very errors a speedup's interval measures, so a pair that happened to differ
  widened its own interval (5 runs, continuous laws: S covered 96.3-97.1% with them,
  94.3-95.6% without; ``benchmarks/interval_coverage.py``, 600 trials);
* **quantised** (one batch showing at most ``MAX_COUNTS`` distinct counts, ``MIN_RUNS``
  runs or more each on average: RetinaNet's whole epochs, evaluation steps): the law of
  the counts is itself estimated from the pool, so it is drawn once per replicate,
  ``Dirichlet(runs at each count + PRIOR, PRIOR_NEXT at the next count below and
  above)``, the same draw for every result at the batch where it is drawn with their own
  runs (a result holding more than half the pool). The pseudo-runs at the next counts are
  never drawn as runs; they enter each law's expected score
  (:meth:`PoolDraws.expected_scores`), so a pool that showed one count still gives an
  interval of some width: the truth may lie a little toward a count the pool did not
  show.

A result's time is scored against its own replicate law's expected olympic score (exact
for a law on a few counts), and its law is drawn without its own runs
(:meth:`PoolDraws.own_left_out`): a result that landed on the low count of two pulls the
pool's law toward it, and against that law its interval stopped short of the truth. A
speedup's replicates of a result are the same ones: drawn from the law with the pair's
own runs, a pair whose scores differed put its off-count runs in the law, which then
widened its own interval (5 runs at two or three counts: S covered 97.3-97.7%).
Constants calibrated in ``benchmarks/interval_coverage.py`` (simulation only, never on
the real runs checked in ``benchmarks/interval_real_check.py``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

# Dirichlet prior on each count the pool shows.
PRIOR = 0.5
# Weight of a pseudo-run at the next count below and above (against 1 per run): 0.2 made
# T cover 86.5% where 3 or 4 epochs had P(4) = 0.05 (10 runs), 0.5 made it 98.5% where
# every run converged at one count with 2% pace noise (5 runs).
PRIOR_NEXT = 0.25
MAX_COUNTS = 5
MIN_RUNS = 3
# Laws drawn per batch (replicate b takes law b mod LAWS): each costs an exact expected
# score per result; 250 kept `gpuscale report` within 5% of its CPU before.
LAWS = 250
_COMB = np.array([[math.comb(n, i) for i in range(65)] for n in range(65)], float)


def centred(values: np.ndarray) -> np.ndarray:
    """``values`` minus their mean, scaled by ``sqrt(m / (m - 1))`` (zeros for m < 2)."""
    values = np.asarray(values, float)
    m = len(values)
    if m < 2:
        return np.zeros(m)
    return (values - values.mean()) * np.sqrt(m / (m - 1))


@dataclass(frozen=True, slots=True)
class PoolDraws:
    """A batch's pooled convergence law: ``values`` log deviations to draw, ``spread``
    their standard deviation over the ``size`` pooled runs. Quantised: ``values`` are
    the counts' deviations (``counts`` the counts, the next ones included), ``seen``
    which counts a pooled run showed, ``alpha`` the Dirichlet parameters, ``weights``
    the law drawn for each replicate (shared by the batch's results). ``within``: the
    pooled runs' deviations from their own result's mean, drawn for a ratio where
    continuous (None: ``values``)."""

    values: np.ndarray
    spread: float
    size: int
    counts: np.ndarray | None = None
    seen: np.ndarray | None = None
    alpha: np.ndarray | None = None
    weights: np.ndarray | None = None
    within: np.ndarray | None = None

    def draw(
        self,
        n_boot: int,
        n: int,
        rng: np.random.Generator,
        weights: np.ndarray | None = None,
        *,
        within: bool = False,
    ) -> np.ndarray:
        """``n_boot x n`` deviations, replicate ``b``'s from its law (``weights``, by
        default the shared ones) over the counts the pool showed; uniform where
        continuous (from ``self.within`` with ``within``, where there is one)."""
        weights = self.weights if weights is None else weights
        if weights is None:
            values = self.within if within and self.within is not None else self.values
            return values[rng.integers(0, len(values), (n_boot, n))]
        cdf = np.cumsum(np.where(self.seen, weights, 0.0), axis=1)
        cdf = np.resize(cdf / cdf[:, -1:], (n_boot, cdf.shape[1]))  # replicate b: law b mod
        u = rng.random((n_boot, n))
        at = np.zeros((n_boot, n), dtype=np.intp)
        for column in cdf[:, :-1].T:  # a few counts: one comparison each
            at += u > column[:, None]
        return self.values[at]

    def own_left_out(
        self, samples: np.ndarray, n_boot: int, rng: np.random.Generator
    ) -> np.ndarray | None:
        """Laws drawn without a result's own runs (``samples``: each count they show
        loses their runs, down to ``PRIOR``); None where continuous."""
        if self.alpha is None or self.counts is None:
            return None
        own = (np.round(samples, 9)[:, None] == self.counts[None, :]).sum(axis=0)
        alpha = np.where(own > 0, np.maximum(self.alpha - own, PRIOR), self.alpha)
        weights = rng.gamma(alpha, size=(min(n_boot, LAWS), len(alpha)))
        return weights / weights.sum(axis=1, keepdims=True)

    def expected_scores(
        self,
        counted: int,
        runs: int,
        max_dropped: int,
        weights: np.ndarray | None = None,
        *,
        shown_only: bool = False,
    ) -> np.ndarray | None:
        """Each replicate law's (``weights``, by default the shared ones) expected
        olympic score of ``runs`` runs, ``counted`` of them counted (failed ones sorted
        last), in units of ``exp(values)``: ``E[X_(j)] = a_1 + sum_i (a_i - a_(i-1))
        P(Bin(counted, F(a_(i-1))) < j)``, averaged over the kept positions ``j``;
        ``shown_only``: over the counts some pooled run showed. None where continuous."""
        weights = self.weights if weights is None else weights
        if weights is None:
            return None
        if shown_only:
            weights = np.where(self.seen, weights, 0.0)
            weights = weights / weights.sum(axis=1, keepdims=True)
        atoms = np.exp(self.values)
        below = np.cumsum(weights, axis=1)[:, :-1, None]  # F(a_(i-1))
        i = np.arange(counted + 1)
        pmf = _COMB[counted, : counted + 1] * below**i * (1.0 - below) ** (counted - i)
        cdf = np.cumsum(pmf, axis=2)  # P(Bin(counted, F) <= i)
        kept = cdf[:, :, max_dropped : runs - max_dropped].mean(axis=2)  # i = j - 1
        return atoms[0] + kept @ np.diff(atoms)  # one per law: replicate b's is b mod LAWS


def pool_draws(
    groups: list[np.ndarray],
    n_boot: int,
    rng: np.random.Generator,
    parts: list[np.ndarray] | None = None,
) -> PoolDraws | None:
    """The law of the pooled runs, ``groups`` the log samples to converge at each batch
    pooled (see the module docstring; each centred as :func:`centred` centres); ``parts``
    the same runs by result (and RCP batch), for ``within``. None without runs."""
    groups = [np.asarray(g, float) for g in groups if len(g)]
    if not groups:
        return None
    values = np.concatenate([centred(g) for g in groups])
    parts = [np.asarray(g, float) for g in parts or () if len(g) >= 2]
    within = np.concatenate([centred(g) for g in parts]) if parts else None
    if within is not None and len(within) < 2:
        within = None
    continuous = PoolDraws(values, float(values.std()), len(values), within=within)
    if len(groups) > 1 or len(values) < 2:
        return continuous
    counts, seen = np.unique(np.round(np.exp(groups[0]), 9), return_counts=True)
    if len(counts) > MAX_COUNTS or len(values) < MIN_RUNS * len(counts):
        return continuous
    if len(counts) > 1:
        step = float(np.diff(counts).min())
    else:  # one count: 1 where it is a whole number above 1, else a quarter of it
        step = 1.0 if float(counts[0]).is_integer() and counts[0] > 1 else 0.25 * counts[0]
    alpha = np.concatenate([[PRIOR_NEXT], seen + PRIOR, [PRIOR_NEXT]])
    counts = np.concatenate([[counts[0] - step], counts, [counts[-1] + step]])
    shown = np.arange(len(counts)) % (len(counts) - 1) != 0  # not the next ones
    keep = counts > 0
    alpha, counts, shown = alpha[keep], counts[keep], shown[keep]
    m = len(values)
    logs = (np.log(counts) - np.mean(groups[0])) * np.sqrt(m / (m - 1))
    weights = rng.gamma(alpha, size=(min(n_boot, LAWS), len(alpha)))
    weights /= weights.sum(axis=1, keepdims=True)
    return PoolDraws(logs, continuous.spread, m, np.round(counts, 9), shown, alpha, weights)

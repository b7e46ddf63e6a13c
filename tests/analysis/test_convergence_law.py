"""The law of a batch's convergence (``gpuscale.analysis.convergence_law``): quantised
pools drawn per replicate, the expected olympic score exact, and no zero-width interval
where every pooled run converged at one count, a speedup's continuous spread drawn within
results (issue 59)."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest

from gpuscale.analysis.convergence_law import pool_draws
from gpuscale.analysis.metrics import scaling_table
from gpuscale.analysis.resampling import olympic_rows
from gpuscale.analysis.score_intervals import bootstrap_intervals

from .tables import scores
from .test_intervals import runs_of


def _enumerated(counts: list[float], weights: list[float], runs: int, failed: int) -> float:
    """The expected olympic score by enumerating every draw of the counted runs."""
    total = 0.0
    for draw in itertools.product(range(len(counts)), repeat=runs - failed):
        chance = float(np.prod([weights[i] for i in draw]))
        times = np.array([counts[i] for i in draw] + [np.inf] * failed)
        total += chance * float(olympic_rows(times[None, :], 1)[0])
    return total


@pytest.mark.parametrize(("runs", "failed"), [(5, 0), (5, 1), (6, 0), (4, 1)])
def test_the_expected_olympic_score_is_the_enumerated_one(runs: int, failed: int) -> None:
    """3, 4 or 5 epochs with 0.2 / 0.5 / 0.3 (the next counts at weight 0): the exact
    expectation against every draw enumerated, failed runs sorted last."""
    pool = pool_draws([np.log([3.0] * 4 + [4.0] * 10 + [5.0] * 6)], 10, np.random.default_rng(0))
    assert list(pool.counts) == [2.0, 3.0, 4.0, 5.0, 6.0]
    weights = np.array([[0.0, 0.2, 0.5, 0.3, 0.0]])
    values = np.exp(pool.values)  # the counts as the pool's scaled log deviations
    mine = pool.expected_scores(runs - failed, runs, 1, weights)[0]
    assert mine == pytest.approx(_enumerated(list(values), list(weights[0]), runs, failed))


def test_a_continuous_pool_is_drawn_uniformly_and_has_no_law() -> None:
    rng = np.random.default_rng(1)
    pool = pool_draws([np.log(rng.normal(4.0, 0.2, 40))], 100, rng)
    assert pool.weights is None and pool.expected_scores(5, 5, 1) is None
    assert set(pool.draw(100, 5, rng).ravel()) <= set(pool.values)


def test_a_pool_at_one_count_gives_no_zero_width_interval() -> None:
    """Four results, every run at 3 epochs, no pace noise: the time's interval still has
    a width (a count no run showed could move the truth), the speedup's holds its
    estimate."""
    paces = {"s1": 10.0, "s2": 5.1, "s4": 2.6, "s8": 1.4}
    runs = runs_of({name: [(3.0 * pace, 3.0)] * 5 for name, pace in paces.items()})
    frame = scores([(name, "H100", int(name[1:]), 3.0 * pace) for name, pace in paces.items()])
    table = scaling_table(frame, "bert")
    ci = bootstrap_intervals(table, runs, n_boot=1000, seed=0)
    low, high = ci["time_to_train_min_ci_low"], ci["time_to_train_min_ci_high"]
    assert ((high - low) / table["time_to_train_min"] > 0.005).all()
    assert (ci["speedup_ci_low"] <= table["speedup"]).all()
    assert (table["speedup"] <= ci["speedup_ci_high"]).all()
    assert isinstance(ci, pd.DataFrame)


def test_a_speedup_draws_the_spread_within_results_not_between() -> None:
    """Two results at one batch, each run within 2% of its result's mean but the second
    converging 10% later (a continuous law): the speedup's interval is the within-result
    noise (before: +-9%, the pair's own difference drawn as noise), the time's keeps the
    batch's pool."""
    spread = np.array([-0.02, -0.01, 0.0, 0.01, 0.02])
    conv = {"s1": 4.0 * (1 + spread), "s2": 4.4 * (1 + spread[::-1])}
    paces = {"s1": 10.0, "s2": 5.0}
    runs = runs_of({n: [(c * paces[n], c) for c in conv[n]] for n in paces})
    frame = scores([(n, "H100", int(n[1:]), float(conv[n][1:4].mean() * paces[n])) for n in paces])
    table = scaling_table(frame, "bert")
    ci = bootstrap_intervals(table, runs, n_boot=2000, seed=0)
    speedup = float(table["speedup"].iloc[1])
    low, high = ci["speedup_ci_low"].iloc[1] / speedup, ci["speedup_ci_high"].iloc[1] / speedup
    assert 0.96 < low < 1.0 < high < 1.04
    t_low, t_high = ci["time_to_train_min_ci_low"].iloc[1], ci["time_to_train_min_ci_high"].iloc[1]
    assert high - low < 0.6 * (t_high - t_low) / table["time_to_train_min"].iloc[1]

"""Samples to converge as a function of the global batch, and the gradient noise scale.

McCandlish, Kaplan, Amodei et al., "An Empirical Model of Large-Batch Training" (2018):
the samples needed to reach a target grow with the global batch ``B`` as

    ``E(B) = E_min * (1 + B / B_noise)``   (equivalently steps ``S = S_min (1 + B_noise / B)``)

so doubling the batch beyond ``B_noise`` (the critical batch) buys less than halving the
steps. Fitted per MLPerf workload from the reference convergence points that
``mlperf-logging`` ships (``rcp_checker/training_X.Y.0/rcps_<benchmark>.json``: each a
batch size and the samples, or epochs, its reference runs needed) by least squares on the
logarithm (relative error). For a model of one's own, ``B_noise`` is estimated by
``B_simple`` from gradient norms at two batch sizes (the paper's appendix A.1), which
``gpuscale bench`` records: with ``|G_b|^2`` the squared norm of one rank's gradient (its
``b`` samples) and ``|G_B|^2`` that of the all-reduced gradient (``B = b N`` samples),

    ``|G|^2 ~ (B |G_B|^2 - b |G_b|^2) / (B - b)``,  ``S ~ (|G_b|^2 - |G_B|^2) / (1/b - 1/B)``,
    ``B_simple = S / |G|^2``  (ratios of means over steps; a bootstrap over steps gives
    the interval).
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:  # the type alone: gpuscale.mlperf is read on demand (below)
    from gpuscale.mlperf.rcp import WorkloadRcps


@dataclass(frozen=True, slots=True)
class ConvergenceModel:
    """``E(B) = e_min (1 + B / b_noise)`` samples (or epochs) to converge at global batch B."""

    e_min: float
    b_noise: float
    source: str = ""

    def samples(self, batch: float) -> float:
        return self.e_min * (1 + batch / self.b_noise)

    def steps(self, batch: float) -> float:
        return self.samples(batch) / batch


def fit(batches: list[float], samples: list[float], source: str = "") -> ConvergenceModel | None:
    """Least squares of ``log E(B)`` over the points; None with fewer than two batch sizes.

    For a given ``B_noise`` the best ``log E_min`` is the mean of ``log E - log(1 + B /
    B_noise)`` (closed form), so the fit is one-dimensional in ``log B_noise``: a grid over
    it (from the smallest batch / e^10 to the largest x e^12), refined three times around
    the best point, to ~1e-5 in log. No ``scipy.optimize`` (0.5 s to import) on the
    report's path, where every workload's expected samples are computed."""
    b = np.asarray(batches, float)
    e = np.asarray(samples, float)
    keep = (b > 0) & (e > 0) & np.isfinite(b) & np.isfinite(e)
    b, log_e = b[keep], np.log(e[keep])
    if len(np.unique(b)) < 2:
        return None

    def best(log_noise: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(log E_min, sum of squared residuals) for each candidate log B_noise."""
        shape = np.log1p(b[None, :] / np.exp(log_noise)[:, None])
        log_min = (log_e[None, :] - shape).mean(axis=1)
        return log_min, ((log_min[:, None] + shape - log_e[None, :]) ** 2).sum(axis=1)

    low, high = math.log(float(b.min())) - 10, math.log(float(b.max())) + 12
    for _ in range(4):
        grid = np.linspace(low, high, 201)
        log_min, cost = best(grid)
        k = int(np.argmin(cost))
        step = grid[1] - grid[0]
        low, high = grid[k] - step, grid[k] + step
    e_min, b_noise = float(np.exp(log_min[k])), float(np.exp(grid[k]))
    if not (math.isfinite(e_min) and math.isfinite(b_noise) and e_min > 0 and b_noise > 0):
        return None
    return ConvergenceModel(e_min, b_noise, source)


def rcp_model(ruleset: str, benchmark: str) -> ConvergenceModel | None:
    """E(B) fitted to a benchmark's reference convergence points."""
    # lazy: gpuscale.mlperf loads the whole round reader (~0.3 s), kept off `gpuscale --help`
    from gpuscale.mlperf.rcp import rcp_points

    return _fitted(ruleset, benchmark, rcp_points(ruleset, benchmark))


def _fitted(
    ruleset: str, benchmark: str, points: tuple[tuple[float, float], ...]
) -> ConvergenceModel | None:
    """E(B) fitted to (batch, samples or epochs) points of a benchmark's RCP file."""
    if not points:
        return None
    batches, samples = zip(*points, strict=True)
    return fit(list(batches), list(samples), f"RCPs of {benchmark}, ruleset {ruleset}")


def rcp_model_for(workload: str, ruleset: str) -> ConvergenceModel | None:
    """E(B) of a workload (cross-round name, or a benchmark folder's) in a ruleset, found
    under any of the names its RCP file has had there (``mlperf.rcp.rcp_names``)."""
    # lazy: gpuscale.mlperf loads the whole round reader (~0.3 s), kept off `gpuscale --help`
    from gpuscale.mlperf.rcp import rcp_names

    for candidate in rcp_names(workload, ruleset):
        fitted = rcp_model(ruleset, candidate)
        if fitted is not None:
            return fitted
    return None


def rcp_fit(found: WorkloadRcps) -> ConvergenceModel | None:
    """E(B) fitted to a workload's RCPs as read (``mlperf.rcp.workload_rcps``), in epochs
    trained: the epochs logged less the ``epoch_num`` its logs count from (the original
    DLRM's RCPs, 1.76-2.00, are 0.76-1.00 epochs trained); the first name's points that
    fit, as :func:`rcp_model_for`; None where none do. The round's own analyses
    (:func:`round_rcp_model`) stay in the unit logged, as the results' samples to converge."""
    first = found.first_epoch_num
    trained = (
        (name, tuple((batch, epochs - first) for batch, epochs in points))
        for name, points in found.points
    )
    fits = (_fitted(found.ruleset, name, points) for name, points in trained)
    return next((model for model in fits if model is not None), None)


def _ruleset(round_name: str) -> str | None:
    """The ruleset (``4.1.0``) a round's results are checked against, None without one."""
    # lazy: gpuscale.mlperf loads the whole round reader (~0.3 s), kept off `gpuscale --help`
    from gpuscale.mlperf.rules import ruleset_for

    return ruleset_for(round_name)[0]


@functools.lru_cache(maxsize=128)
def round_rcp_model(round_name: str, benchmark: str) -> ConvergenceModel | None:
    """E(B) of a benchmark in a round's ruleset; None without RCPs for it."""
    ruleset = _ruleset(round_name)
    if not ruleset:
        return None
    return rcp_model_for(benchmark, ruleset)


# |log| change of the reference samples to converge (E_R at one batch) between two rounds'
# rules beyond which the benchmark is another definition: the plan's eras
# (``planning.systems``) and the trends' "the rules moved" (``analysis.trends``)
ERA_STEP = 0.1


@functools.lru_cache(maxsize=128)
def round_target(round_name: str, benchmark: str) -> float | None:
    """The quality target a round's ruleset sets for a benchmark (BERT: 0.712 in ruleset
    0.7.0, 0.720 from 1.0.0 on); None without a ruleset or a target for it."""
    # lazy: gpuscale.mlperf loads the whole round reader (~0.3 s), kept off `gpuscale --help`
    from gpuscale.mlperf.benchmarks import quality_target

    ruleset = _ruleset(round_name)
    return quality_target(ruleset, benchmark) if ruleset else None


def round_rcp_runs(round_name: str, benchmark: str) -> tuple[tuple[float, tuple[float, ...]], ...]:
    """(global batch, each reference run's samples or epochs to converge) of the RCPs of a
    benchmark in a round's ruleset, by increasing batch; empty without."""
    # lazy: gpuscale.mlperf loads the whole round reader (~0.3 s), kept off `gpuscale --help`
    from gpuscale.mlperf.rcp import rcp_runs

    ruleset = _ruleset(round_name)
    if not ruleset:
        return ()
    return rcp_runs(ruleset, benchmark)


@dataclass(frozen=True, slots=True)
class NoiseScale:
    """``B_simple`` (samples) and its 95% bootstrap interval, from ``steps`` steps; ``high``
    is infinite where too many resamples measured no signal to bound it above."""

    b_simple: float
    low: float
    high: float
    steps: int


def noise_scale(
    local_sq: list[float],
    global_sq: list[float],
    batch_small: float,
    batch_big: float,
    *,
    n_boot: int = 1000,
    seed: int = 0,
) -> NoiseScale | None:
    """``B_simple`` from per-step squared gradient norms (see the module docstring);
    None without two batch sizes, steps, or a positive true-gradient estimate, or when
    the two lists do not pair step for step (a damaged record)."""
    g_small = np.asarray(local_sq, float)
    g_big = np.asarray(global_sq, float)
    if g_small.shape != g_big.shape:
        return None
    keep = np.isfinite(g_small) & np.isfinite(g_big)
    g_small, g_big = g_small[keep], g_big[keep]
    if len(g_small) < 2 or not batch_big > batch_small > 0:
        return None

    def estimate(gs: np.ndarray, gb: np.ndarray) -> float:
        true_sq = (batch_big * gb.mean() - batch_small * gs.mean()) / (batch_big - batch_small)
        trace = (gs.mean() - gb.mean()) / (1 / batch_small - 1 / batch_big)
        if not trace > 0:
            return 0.0  # no measurable noise in this resample
        return float(trace / true_sq) if true_sq > 0 else math.inf  # no measurable signal

    value = estimate(g_small, g_big)
    if not (math.isfinite(value) and value > 0):
        return None
    rng = np.random.default_rng(seed)
    picks = rng.integers(0, len(g_small), size=(n_boot, len(g_small)))
    # every resample counts, unbounded ones too: dropping them pulled the upper end down
    # to the point estimate itself
    draws = np.sort([estimate(g_small[p], g_big[p]) for p in picks])
    low = draws[math.floor(0.025 * (len(draws) - 1))]
    high = draws[math.ceil(0.975 * (len(draws) - 1))]
    return NoiseScale(value, float(low), float(high), len(g_small))

"""The exact and estimated laws of a few-valued olympic score, for
``benchmarks/interval_coverage.py``: where runs converge at whole epoch counts (no pace
noise) the score takes a few values, and these say which coverages an interval can reach
at all (``exact_bounds``: a fixed width, and the interval from the exact law) and what
intervals from a law estimated from the runs cover (``estimated_law_bounds``)."""

from __future__ import annotations

import itertools
import math

import numpy as np
from scipy import stats

from gpuscale.analysis.convergence_law import PRIOR


def holds(low: float, high: float, truth: float) -> bool:
    """``truth`` within ``[low, high]`` up to rounding (a relative 1e-9): where every run
    of two systems converged at one count with no pace noise, the official speedup is
    their pace ratio, the truth itself, computed another way."""
    return low * (1 - 1e-9) <= truth <= high * (1 + 1e-9)


def olympic_law(counts: tuple, probs: tuple, runs: int) -> tuple[np.ndarray, np.ndarray]:
    """The exact law of the olympic score (one run dropped at each end) of ``runs`` runs
    whose counts are drawn from ``counts`` with ``probs``: (atoms ascending, their
    probabilities), by enumerating the multinomial vectors of runs at each count."""
    law: dict[float, float] = {}
    for vec in itertools.product(range(runs + 1), repeat=len(counts)):
        if sum(vec) != runs:
            continue
        terms = zip(probs, vec, strict=True)
        p = math.factorial(runs) * math.prod(q**v / math.factorial(v) for q, v in terms)
        ordered = sorted(c for c, v in zip(counts, vec, strict=True) for _ in range(v))
        atom = round(sum(ordered[1:-1]) / (runs - 2), 9)
        law[atom] = law.get(atom, 0.0) + p
    atoms = np.array(sorted(law))
    return atoms, np.array([law[a] for a in atoms])


def reachable(atoms: np.ndarray, probs: np.ndarray, truth: float, symmetric: bool) -> list:
    """Coverages an interval ``estimate x [a, b]`` with ``a <= 1 <= b`` fixed reaches
    when the estimate is ``pace x atom`` and the truth ``pace x truth``: it covers the
    atoms in ``[truth / b, truth / a]``, a closed range holding ``truth``, so each
    range from an atom (or the truth) below to one above gives one coverage;
    ``symmetric``: ranges ``[truth / b, truth * b]`` only (a ratio of two results of one
    law, whose interval for the swapped pair is the reciprocal)."""
    ends = np.unique(np.concatenate([atoms, [truth]]))
    cdf = np.concatenate([[0.0], np.cumsum(probs)])
    out = set()
    for low in ends[ends <= truth]:
        highs = [truth * truth / low] if symmetric else ends[ends >= truth]
        for high in highs:
            lo = np.searchsorted(atoms, low * (1 - 1e-9))
            hi = np.searchsorted(atoms, high * (1 + 1e-9), side="right")
            out.add(round(float(cdf[hi] - cdf[lo]), 6))
    return sorted(out)


def law_quantiles(errors: np.ndarray, probs: np.ndarray) -> tuple[float, float]:
    """The 2.5% and 97.5% quantiles of log errors ``errors`` (ascending) of law
    ``probs``, the low one at most 0 and the high one at least 0: the basic interval
    ``estimate x exp(-q)`` then holds its estimate (``resampling.basic_interval``)."""
    cdf = np.cumsum(probs)
    q_low = min(float(errors[np.searchsorted(cdf, 0.025 - 1e-12)]), 0.0)
    q_high = max(float(errors[np.searchsorted(cdf, 0.975 - 1e-12)]), 0.0)
    return q_low, q_high


def exact_law_interval(atoms: np.ndarray, probs: np.ndarray, truth: float) -> float:
    """Coverage of the basic interval from the exact law (the bootstrap that knew it):
    ``estimate x exp(-q)``, ``q`` the 2.5% and 97.5% quantiles of ``log(atom / truth)``
    (:func:`law_quantiles`)."""
    errors = np.log(atoms / truth)
    q_low, q_high = law_quantiles(errors, probs)
    inside = (errors >= q_low - 1e-12) & (errors <= q_high + 1e-12)
    return float(probs[inside].sum())


def ratio_law(atoms: np.ndarray, probs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The law of ``a / b`` for ``a`` and ``b`` drawn apart from (atoms, probs)."""
    ratios: dict[float, float] = {}
    for a, p in zip(atoms, probs, strict=True):
        for b, q in zip(atoms, probs, strict=True):
            ratios[round(a / b, 9)] = ratios.get(round(a / b, 9), 0.0) + p * q
    r_atoms = np.array(sorted(ratios))
    return r_atoms, np.array([ratios[a] for a in r_atoms])


ESTIMATED_TRIALS = 4000  # trials of the estimated laws' bound (exact per trial: fast)
BETA_DRAWS = 100  # laws mixed for the law without the pair (its Beta's quantiles)


def estimated_law_bounds(law: tuple, pace_cv: float, runs: int, rng, n_sys: int = 4) -> dict | None:
    """Where the score takes a few values over two counts (no pace noise): the speedup's
    coverage when its interval is the basic interval of the ratio's law computed from a
    law of the counts *estimated* from the trial's runs, not known (a width that varies
    with the data, as every bootstrap's does): ``S pool law``, the law the pool shows (the
    share of its runs at the higher count, the plain bootstrap's); ``S without the pair``,
    the law of the other systems' runs only, mixed over its uncertainty (a Beta with the
    convergence law's Dirichlet prior on each count, ``BETA_DRAWS`` quantiles), so that
    the pair's own off-count runs do not widen its interval. Each of the four systems'
    olympic scores drawn from the law, the speedups of the other three against the one at
    1 accelerator (truth: 1, one law). None where the law is not two counts or has a pace
    noise."""
    if law[0] != "epochs" or len(law[1]) != 2 or pace_cv:
        return None
    counts, (_, p_high) = law[1], law[2]
    cache: dict[tuple, tuple[np.ndarray, np.ndarray]] = {}

    def ratios_at(high: int, of: int, mixed: bool) -> tuple[np.ndarray, np.ndarray]:
        key = (high, of, mixed)
        if key not in cache:
            shares = (
                stats.beta.ppf((np.arange(BETA_DRAWS) + 0.5) / BETA_DRAWS,
                               high + PRIOR, of - high + PRIOR)
                if mixed else [high / of]
            )  # fmt: skip
            mix: dict[float, float] = {}
            for share in shares:
                atoms, probs = olympic_law(counts, (1 - share, share), runs)
                for a, q in zip(*ratio_law(atoms, probs), strict=True):
                    mix[a] = mix.get(a, 0.0) + q / len(shares)
            r = np.array(sorted(mix))
            cache[key] = (r, np.array([mix[a] for a in r]))
        return cache[key]

    held = {"S pool law": [], "S without the pair": []}
    for _ in range(ESTIMATED_TRIALS):
        high = rng.random((n_sys, runs)) < p_high
        scores = np.sort(np.where(high, counts[1], counts[0]), axis=1)[:, 1:-1].mean(axis=1)
        for s in range(1, n_sys):
            others = [o for o in range(n_sys) if o not in (0, s)]
            laws = {
                "S pool law": ratios_at(int(high.sum()), high.size, False),
                "S without the pair": ratios_at(int(high[others].sum()), runs * len(others), True),
            }  # fmt: skip
            for name, (r_atoms, r_probs) in laws.items():
                q_low, q_high = law_quantiles(np.log(r_atoms), r_probs)
                estimate = scores[0] / scores[s]
                held[name].append(holds(estimate * np.exp(-q_high), estimate * np.exp(-q_low), 1.0))
    return {name: float(np.mean(h)) for name, h in held.items()}


def closest(coverages: list) -> float:
    """The coverage of ``coverages`` closest to the goal's range, 92-97%."""
    c = np.asarray(coverages)
    off = np.maximum(0.92 - c, 0) + np.maximum(c - 0.97, 0)
    return float(c[np.lexsort((np.abs(c - 0.945), off))[0]])  # then nearest 94.5%


def exact_bounds(law: tuple, pace_cv: float, runs: int) -> dict | None:
    """Where the score's law has atoms (whole epochs, no pace noise): per T and S, the
    coverage closest to 92-97% any fixed-width interval reaches (``reachable``; S's
    symmetric) and that of the interval from the exact law; None where continuous (a
    fixed-width interval then reaches any coverage). Widths that vary with the data are
    not bounded by this: they can reach other coverages."""
    if law[0] != "epochs" or pace_cv:
        return None
    atoms, probs = olympic_law(law[1], law[2], runs)
    truth = float(atoms @ probs)
    r_atoms, r_probs = ratio_law(atoms, probs)
    return {
        "T attainable": closest(reachable(atoms, probs, truth, symmetric=False)),
        "S attainable": closest(reachable(r_atoms, r_probs, 1.0, symmetric=True)),
        "T exact law": exact_law_interval(atoms, probs, truth),
        "S exact law": exact_law_interval(r_atoms, r_probs, 1.0),
        "S same": float(
            r_probs[np.isclose(r_atoms, 1.0)].sum()
        ),  # P(estimate = truth): any interval covers then
    }

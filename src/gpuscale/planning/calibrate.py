"""The plan's intervals, calibrated by forecasting the past: each round from the rounds
before it, on the data the plan is fitted on.

:func:`backtest` fits on the rounds before each round ``R`` and predicts every system new
in ``R`` whose workload was measured before; each prediction is labelled with its class
(``gpuscale.planning.predict.count_class``: the count measured before for the family,
not measured inside or outside its counts, or the family never ran the workload).
:func:`intervals` turns the log errors into one half-width per class: the 80% quantile of
``|log error| / ((1 + widen x octaves outside) x evidence factor)`` (``predict.evidence``:
wider where the family's results are of few submitters and rounds; class (iii):
``predict.transfer_factor``, wider where the family ran few workloads) (a quantile, not a
standard deviation:
the errors have heavy tails, and the top 20% do not move it), pooled with a prior worth
``PRIOR_CASES`` errors so that a class with few cases is not given a narrow interval by
chance (``QUANTILE_RULES["pooled"]``; the other rules are compared by
``benchmarks/plan_interval_rules.py``). The prior is the class's width on development
forecasts no accuracy figure judges (``predict.prior_intervals``), scaled to the class (i)
width at hand (:func:`class_prior`).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Protocol

import numpy as np
import pandas as pd

from gpuscale.planning.fits import fit_all
from gpuscale.planning.intervals import CLASSES, DEFAULT_INTERVALS, EVIDENCE_PRIOR, EVIDENCE_PRIORS
from gpuscale.planning.predict import plannable, predict_point
from gpuscale.planning.records import Facts, Fits
from gpuscale.tables.workloads import round_key

PRIOR_CASES = 5.0
COVERAGE = 0.8
EVIDENCE_CASES = 10  # forecasts on each side (1-2 pairs, more) to calibrate the prior


class SystemRow(Protocol):
    """A row of ``DataFrame.itertuples`` over ``gpuscale.planning.systems.measured``: the
    fields a forecast of the system is scored against."""

    round: str
    workload: str
    accelerator_family: str
    accelerators: float  # a float column: int() below
    submitter: str
    system_name: str
    time_to_train_min: float


def case_of(row: SystemRow) -> Facts:
    """The facts of one measured system (a ``gpuscale.planning.systems`` row) a forecast
    of it is scored against."""
    return {
        "round": row.round,
        "workload": row.workload,
        "family": row.accelerator_family,
        "accelerators": int(row.accelerators),
        "submitter": row.submitter,
        "system": row.system_name,
        "measured": row.time_to_train_min,
    }


def backtest(systems: pd.DataFrame, fit: Callable[[pd.DataFrame], Fits]) -> pd.DataFrame:
    """One row per system new in a round after the first (``gpuscale.planning.systems``
    rows), predicted by ``fit`` of the rounds before it: ``round``, ``workload``,
    ``family``, ``accelerators``, ``measured``, ``time_to_train_min`` (its ``_low`` and
    ``_high``), ``class``, ``octaves_outside``, ``log_error`` (predicted - measured); a
    system whose family and workload cannot be planned from the rounds before has
    ``class`` ``"none"`` and no prediction."""
    rounds = sorted(systems["round"].unique(), key=round_key)
    out = []
    for target in rounds[1:]:
        train = systems[[round_key(r) < round_key(target) for r in systems["round"]]]
        fits = fit(train.reset_index(drop=True))
        for row in systems[systems["round"] == target].itertuples(index=False):
            base = case_of(row)
            w, f, n = base["workload"], base["family"], base["accelerators"]
            if w not in fits["workloads"]:
                out.append(base | {"count_class": "new workload"})
                continue
            if not plannable(fits, w, f):
                out.append(base | {"count_class": "none"})
                continue
            p = predict_point(fits, w, f, n)
            log_error = math.log(p["time_to_train_min"] / row.time_to_train_min)
            out.append(base | p | {"log_error": log_error})
    return pd.DataFrame(out)


def _evidence_prior(errors: np.ndarray, pairs: np.ndarray) -> float:
    """The prior (of ``EVIDENCE_PRIORS``) whose widening makes the 80% quantile cover the
    levels resting on 1-2 (submitter, round) pairs as it covers those resting on more
    (the smallest of the closest); ``EVIDENCE_PRIOR`` where either has under
    ``EVIDENCE_CASES`` forecasts."""
    few = pairs <= 2
    if min(few.sum(), (~few).sum()) < EVIDENCE_CASES:
        return EVIDENCE_PRIOR

    def gap(prior: float) -> float:
        scaled = errors / np.sqrt(1 + prior / np.maximum(pairs, 1))
        inside = scaled <= np.quantile(scaled, COVERAGE)
        return abs(inside[few].mean() - inside[~few].mean())

    return min(EVIDENCE_PRIORS, key=lambda prior: (round(gap(prior), 3), prior))


def plain(errors: np.ndarray, prior: float) -> float:
    """The 80% quantile of the errors alone (``prior`` where there are none): how the
    priors themselves are fitted, on forecasts of their own (``benchmarks/plan_priors.py``)."""
    return float(np.quantile(errors, COVERAGE)) if len(errors) else prior


def pooled(errors: np.ndarray, prior: float) -> float:
    """The 80% quantile of ``k`` errors (numpy's default, linear between order statistics:
    position ``1 + 0.8 (k - 1)``) pooled with ``prior`` worth ``PRIOR_CASES`` errors."""
    k = len(errors)
    return math.sqrt((k * plain(errors, prior) ** 2 + PRIOR_CASES * prior**2) / (k + PRIOR_CASES))


def unbiased(errors: np.ndarray, prior: float) -> float:
    """The order statistic at position ``0.8 (k + 1)`` of ``k`` errors (linear between
    two; numpy's ``weibull``): a new error exchangeable with them falls below it with
    probability 0.8 on average (``E F(X_(r)) = r / (k + 1)``), where the default position
    ``1 + 0.8 (k - 1)`` gives ``(0.8 k + 0.2) / (k + 1)``, 72.5% at ``k = 7``; ``prior``
    where ``k < 4`` (the position past the largest error)."""
    k = len(errors)
    if COVERAGE * (k + 1) > k:
        return prior
    return float(np.quantile(errors, COVERAGE, method="weibull"))


def conformal(errors: np.ndarray, prior: float) -> float:
    """Split conformal: the ``ceil(0.8 (k + 1))``-th smallest of ``k`` errors, below which
    a new exchangeable error falls with probability at least 0.8 (at most
    ``0.8 + 1 / (k + 1)``); ``prior`` where ``k < 4`` (no such error)."""
    rank = math.ceil(COVERAGE * (len(errors) + 1) - 1e-9)
    return prior if rank > len(errors) else float(np.sort(errors)[rank - 1])


QUANTILE_RULES: dict[str, Callable[[np.ndarray, float], float]] = {
    "pooled": pooled,
    "plain": plain,
    "unbiased": unbiased,
    "conformal": conformal,
}


def _class_errors(
    cases: pd.DataFrame, kind: str, widen: float
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Of ``kind``'s forecasts with a finite error: ``|log error| / (1 + widen x octaves
    outside)``, the (submitter, round) pairs each level rests on and each one's
    ``evidence_factor`` (class iii: the transfer's widening)."""
    if "log_error" not in cases:  # nothing forecast: one round, or none plannable
        return np.array([]), np.array([]), np.array([])
    mine = cases[cases["count_class"] == kind]
    octaves = mine["octaves_outside"].to_numpy(float)
    errors = np.abs(mine["log_error"].to_numpy(float)) / (1 + widen * octaves)
    pairs = np.array([e["pairs"] for e in mine["evidence"]], float)
    keep = np.isfinite(errors)
    return errors[keep], pairs[keep], mine["evidence_factor"].to_numpy(float)[keep]


def intervals(
    cases: pd.DataFrame, widen: float = DEFAULT_INTERVALS["widen"], rule: str = "pooled"
) -> dict:
    """Per class, the calibrated half-width (see the module docstring; ``rule`` of
    ``QUANTILE_RULES``), its evidence prior (``evidence_<class>``:
    :func:`_evidence_prior`) and how many cases each rests on (``cases_<class>``)."""
    out: dict[str, float] = {"widen": widen}
    for kind in CLASSES:
        errors, pairs, transfer = _class_errors(cases, kind, widen)
        if kind == "iii":  # widened by the workloads the transfer rests on, as planned
            prior_e = 0.0
            errors = errors / transfer
        else:
            prior_e = _evidence_prior(errors, pairs)
            errors = errors / np.sqrt(1 + prior_e / np.maximum(pairs, 1))
        out[kind] = QUANTILE_RULES[rule](errors, class_prior(kind, out))
        out[f"evidence_{kind}"] = prior_e
        out[f"cases_{kind}"] = len(errors)
    return out


def class_prior(kind: str, found: dict[str, float]) -> float:
    """The prior half-width of ``kind``: its development width (``DEFAULT_INTERVALS``),
    scaled to the class (i) width calibrated here where that rests on at least
    ``EVIDENCE_CASES`` forecasts. The development transitions (v0.7 -> v1.1 -> v3.0) span
    1.5 years each, three times the bundled rounds' half year, and the drift of a
    longer gap widens every class alike: their ratios to class (i) carry what differs by
    class, the forecasts at hand the scale."""
    prior = DEFAULT_INTERVALS[kind]
    if kind == "i" or found.get("cases_i", 0) < EVIDENCE_CASES:
        return prior
    return prior * found["i"] / DEFAULT_INTERVALS["i"]


def calibrated_fits(systems: pd.DataFrame, rule: str = "pooled") -> Fits:
    """:func:`gpuscale.planning.fits.fit_all` of ``systems`` with its intervals
    calibrated by :func:`backtest` on the same systems (each of their rounds after the
    first, from the rounds before it; ``rule`` of ``QUANTILE_RULES``)."""
    fits = fit_all(systems)
    # one round: no forecast (the priors alone)
    return {**fits, "intervals": intervals(backtest(systems, fit_all), rule=rule)}

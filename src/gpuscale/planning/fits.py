"""Every workload's fit, the families' speeds across workloads, and the intervals:
everything a plan needs, as one plain ``dict`` (JSON-able, cached per data version).

``speed``: a family that never ran a workload gets its level there from the others,
``level8_{f,w} = speed_f + speed_w`` fitted (robust least squares, each pair weighted by
its systems, at most 5) on the pairs that ran: ``level8`` is a family's ``log`` device-
minutes per expected sample at 8 devices at the workload's newest round, less the batch
term and the era's level (``gpuscale.planning.pooled``). ``pair_scale`` is the robust spread of the pairs'
leave-one-pair-out errors.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from gpuscale.planning.pooled import HUBER, PIN, Penalties, hat_values, robust_scale
from gpuscale.planning.predict import at_round
from gpuscale.planning.workload import fit_workload

MODEL_VERSION = "2"  # bump when the fit changes: cached fits of another version are refitted
PAIR_WEIGHT_CAP = 5.0


def level8(workload: dict[str, Any], family: str) -> float:
    """The family's fitted level at 8 devices at the workload's newest round (no batch
    term), ``log`` device-minutes per expected sample."""
    own = workload["families"][family]
    shape = hat_values(own["shape"], PIN) if own["shape"] else 0.0
    return own["level"] + at_round(own["round_level"], workload["round"]) + shape


def _additive(pairs: list[tuple[str, str, float, float]]) -> tuple[dict, dict, np.ndarray]:
    """(speed per family, speed per workload, residuals) of ``value = f + w`` (robust)."""
    families = sorted({p[0] for p in pairs})
    workloads = sorted({p[1] for p in pairs})
    design = np.zeros((len(pairs), len(families) + len(workloads)))
    for i, (f, w, _, _) in enumerate(pairs):
        design[i, families.index(f)] = 1
        design[i, len(families) + workloads.index(w)] = 1
    y = np.array([p[2] for p in pairs])
    base = np.minimum(np.array([p[3] for p in pairs]), PAIR_WEIGHT_CAP)
    weights = base.copy()
    ridge = 1e-6 * np.eye(design.shape[1])
    for _ in range(5):
        lhs = design.T @ (design * weights[:, None]) + ridge
        theta = np.linalg.solve(lhs, design.T @ (weights * y))
        resid = y - design @ theta
        scale = robust_scale(resid)
        weights = base * np.minimum(1.0, HUBER * scale / np.maximum(np.abs(resid), 1e-12))
    speed_f = {f: float(theta[i]) for i, f in enumerate(families)}
    speed_w = {w: float(theta[len(families) + i]) for i, w in enumerate(workloads)}
    return speed_f, speed_w, resid


def speeds(workloads: dict[str, dict[str, Any]], *, spread: bool = True) -> dict[str, Any]:
    """``speed`` (see the module docstring) from the workloads' fits (``pair_scale`` NaN
    unless ``spread``: it refits once per pair)."""
    pairs = [
        (f, w, level8(fit, f), float(len(fit["families"][f]["systems"])))
        for w, fit in workloads.items()
        for f in fit["families"]
    ]
    if not pairs:
        return {"family": {}, "workload": {}, "pair_scale": float("nan")}
    speed_f, speed_w, _ = _additive(pairs)
    errors = []
    for i, (f, w, value, _) in enumerate(pairs if spread else []):
        rest = pairs[:i] + pairs[i + 1 :]
        if sum(p[0] == f for p in rest) and sum(p[1] == w for p in rest):
            sf, sw, _ = _additive(rest)
            errors.append(sf[f] + sw[w] - value)
    return {
        "family": speed_f,
        "workload": speed_w,
        "pair_scale": robust_scale(np.array(errors)) if errors else float("nan"),
    }


def fit_all(systems: pd.DataFrame, pen: Penalties = Penalties()) -> dict[str, Any]:
    """The fits of every workload in ``systems`` (``gpuscale.planning.systems.measured``)
    and the families' speeds; ``intervals`` is left to the caller (calibration)."""
    workloads = {
        str(w): fit_workload(rows.reset_index(drop=True), pen)
        for w, rows in systems.groupby("workload")
    }
    return {"version": MODEL_VERSION, "workloads": workloads, "speed": speeds(workloads)}

"""Every workload's fit, the families' speeds across workloads, and the intervals:
everything a plan needs, as one plain ``dict`` (JSON-able, cached per data version).

``speed``: a family that never ran a workload gets its level there from the others,
``level8_{f,w} = speed_f + speed_w`` fitted (robust least squares, each pair weighted by
its systems, at most 5) on the pairs that ran: ``level8`` is a family's ``log`` device-
minutes per expected sample at 8 devices at the workload's newest round, less the batch
term and the era's level (``gpuscale.planning.pooled``). ``pair_scale`` is the robust
spread of the pairs' leave-one-pair-out errors; ``component`` the connected groups
(:func:`components`); ``transfer`` how far a family's level on the workloads it ran says
its level on another, in sample (:func:`transfer`: the shape of the class (iii) intervals
by the workloads a transfer rests on, ``gpuscale.planning.predict.transfer_factor``).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from gpuscale.planning.pooled import DEFAULT, HUBER, Penalties, robust_scale
from gpuscale.planning.predict import at_round, own_shape
from gpuscale.planning.records import Facts, Fits, WorkloadFit
from gpuscale.planning.shape import MODEL_VERSION, PIN
from gpuscale.planning.systems import fitted
from gpuscale.planning.workload import fit_workload
from gpuscale.tables.json_depth import JSON

PAIR_WEIGHT_CAP = 5.0


def level8(workload: WorkloadFit, family: str) -> float:
    """The family's fitted level at 8 devices at the workload's newest round (no batch
    term), ``log`` device-minutes per expected sample."""
    own = workload["families"][family]
    shape = own_shape(own, PIN)
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


def speeds(workloads: dict[str, WorkloadFit], *, spread: bool = True) -> Facts:
    """``speed`` (see the module docstring) from the workloads' fits (``pair_scale`` NaN
    unless ``spread``: it refits once per pair)."""
    pairs = [
        (f, w, level8(fit, f), float(len(fit["families"][f]["systems"])))
        for w, fit in workloads.items()
        for f in fit["families"]
    ]
    if not pairs:
        return {
            "family": {},
            "workload": {},
            "pair_scale": float("nan"),
            "component": {},
            "transfer": transfer(np.array([]), np.array([]), np.array([])),
        }
    speed_f, speed_w, _ = _additive(pairs)
    errors, rests_on, single = [], [], []
    for i, (f, w, value, _) in enumerate(pairs if spread else []):
        rest = pairs[:i] + pairs[i + 1 :]
        sources = [p for p in rest if p[0] == f]
        if sources and sum(p[1] == w for p in rest):
            sf, sw, _ = _additive(rest)
            errors.append(sf[f] + sw[w] - value)
            rests_on.append(len(sources))
            # from each one of the family's other workloads alone
            single += [p[2] - sw[p[1]] + sw[w] - value for p in sources]
    return {
        "family": speed_f,
        "workload": speed_w,
        "pair_scale": robust_scale(np.array(errors)) if errors else float("nan"),
        "component": components(pairs),
        "transfer": transfer(np.array(errors), np.array(rests_on), np.array(single)),
    }


TRANSFER_QUANTILE = 0.8
TRANSFER_MIN_PAIRS = 5  # fewer held-out pairs than this: no in-sample spread (NaN)


def transfer(errors: np.ndarray, rests_on: np.ndarray, single: np.ndarray) -> Facts:
    """How far a family's level on some workloads says its level on another, in sample
    (log units, 80% quantiles): ``spread``, of the leave-one-pair-out errors each divided
    by ``sqrt(1 + 1 / k)`` (``k`` the other workloads the family ran: the mean of ``k``
    workloads' family-workload interactions plus the target's own), ``one``, of the
    errors of the level from one other workload alone (every (source, target) pair of a
    family's workloads), and how many of each (``pairs``, ``single``); NaN where under
    ``TRANSFER_MIN_PAIRS`` held-out pairs."""
    out = {"pairs": len(errors), "single": len(single)}
    if len(errors) < TRANSFER_MIN_PAIRS:
        return out | {"spread": float("nan"), "one": float("nan")}
    scaled = np.abs(errors) / np.sqrt(1 + 1 / rests_on)
    return out | {
        "spread": float(np.quantile(scaled, TRANSFER_QUANTILE)),
        "one": float(np.quantile(np.abs(single), TRANSFER_QUANTILE)),
    }


def components(pairs: list[tuple[str, str, float, float]]) -> dict[str, int]:
    """The connected groups of the family-workload graph (an edge: a family ran the
    workload): ``{family: k, "workload:" + name: k}``. A family's speed on a workload it
    never ran is defined only within one group (no family links two groups' scales)."""
    parent: dict[str, str] = {}

    def root(node: str) -> str:
        while parent.setdefault(node, node) != node:
            node = parent[node]
        return node

    for f, w, _, _ in pairs:
        parent[root(f)] = root(f"workload:{w}")
    roots = sorted({root(n) for n in list(parent)})
    return {n: roots.index(root(n)) for n in sorted(parent)}


def fit_all(systems: pd.DataFrame, pen: Penalties = DEFAULT) -> Fits:
    """The fits of every workload in ``systems`` (``gpuscale.planning.systems.measured``)
    and the families' speeds; ``intervals`` is left to the caller (calibration)."""
    kept = fitted(systems)
    workloads = {
        str(w): fit_workload(rows.reset_index(drop=True), pen)
        | {"outliers": left_out(systems[systems["workload"] == w])}
        for w, rows in kept.groupby("workload")
    }
    return {"version": MODEL_VERSION, "workloads": workloads, "speed": speeds(workloads)}


def left_out(systems: pd.DataFrame) -> list[list[JSON]]:
    """The outliers of one workload's systems, left out of its fit: ``[round, submitter,
    system, devices, minutes, family, why]`` each."""
    if "outlier" not in systems:
        return []
    out = systems[systems["outlier"].fillna("").astype(str).to_numpy() != ""]
    return [
        [
            r.round,
            r.submitter,
            r.system_name,
            int(r.accelerators),
            float(r.time_to_train_min),
            r.accelerator_family,
            r.outlier,
        ]
        for r in out.itertuples(index=False)
    ]

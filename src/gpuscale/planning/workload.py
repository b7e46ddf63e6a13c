"""One workload's fit as plain data (JSON-able): what a plan at any count needs.

:func:`fit_workload` takes the workload's measured systems (``gpuscale.planning.systems``)
and returns a ``dict``:

* ``shape`` (the shared ``s`` at the knots), ``era_level`` (``e``), ``era`` (each round's),
  ``batch_slope`` (``c``: held at 0 where the free fit found it positive, a larger
  per-device batch slower per sample, which its mechanism cannot give; the free fit's in
  ``batch_slope_free``), ``scale`` (the robust standard deviation of the residuals),
  ``round`` (the newest round: plans are at its level), ``rcp`` (per round: ``e_min``,
  ``b_noise``, ``source`` of its RCPs, for the rounds that have them; None when
  convergence is not modelled), ``targets`` (per round: its quality target, None unknown),
  ``reference_batch`` (``B_ref``), ``batch_curve`` (the workload's global batch at each
  measured count: the median over families of each family's newest choice, made
  non-decreasing in the count, ``log2``: :func:`_batch_curve`);
* per family: ``level`` (``a_f``), ``round_level`` (``d_{f,R}``), ``shape`` (``u_f`` or
  None), ``batch`` (at each count it ran, the global batch its newest results there ran,
  the most common, else the fastest's: ``predict.submitted_batch``; ``log2``),
  ``counts`` (per count: ``anchor``, the newest round's mean residual there, its round and
  how many systems), ``systems`` (round, submitter, system, devices, minutes, batch).
"""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pandas as pd

from gpuscale.analysis.critical_batch import round_rcp_model
from gpuscale.planning.pooled import DEFAULT, Penalties, levels, robust_scale, solve
from gpuscale.planning.predict import ANCHOR_PRIOR, submitted_batch
from gpuscale.planning.records import BatchCurve, Facts, FamilyFit, Rcp, WorkloadFit
from gpuscale.tables.workloads import round_key


def _newest_at(rounds: list[str], counts: np.ndarray) -> dict[float, np.ndarray]:
    """Per device count: the positions of the newest round's systems there."""
    out = {}
    for n in np.unique(counts):
        at = np.flatnonzero(counts == n)
        newest = max((rounds[i] for i in at), key=round_key)
        out[float(n)] = np.array([i for i in at if rounds[i] == newest])
    return out


def _weighted_median(values: list[float], weights: list[int]) -> float:
    """The lower weighted median: the smallest value with at least half the weight at or
    below it."""
    ordered = sorted(zip(values, weights, strict=True))
    half, seen = sum(weights) / 2, 0
    for value, weight in ordered:
        seen += weight
        if seen >= half:
            return value
    return ordered[-1][0]


def _non_decreasing(values: list[float], weights: list[int]) -> list[float]:
    """The non-decreasing sequence nearest ``values`` in weighted absolute deviation
    (isotonic regression under L1, by pooling adjacent violators: each pool at its
    weighted median, Robertson, Wright & Dykstra 1988, ch. 1): a pool takes the value of
    its best-supported members, so one count's outlier moves no better-run count."""
    pools: list[tuple[list[float], list[int]]] = []
    for value, weight in zip(values, weights, strict=True):
        pools.append(([value], [weight]))
        while len(pools) > 1 and _weighted_median(*pools[-2]) > _weighted_median(*pools[-1]):
            (a, wa), (b, wb) = pools.pop(-2), pools.pop()
            pools.append((a + b, wa + wb))
    return [_weighted_median(*pool) for pool in pools for _ in pool[0]]


def _batch_curve(
    family: list[str], rounds: list[str], n: np.ndarray, log2_b: np.ndarray
) -> BatchCurve:
    """The workload's typical global batch per count: each family's newest median there,
    the median over families (``log2``; ``log2_b_median``), then made non-decreasing in
    the count (``log2_b``: isotonic regression weighted by how many families ran each
    count). Submitters' batches grow with the count; where a count few families ran falls
    below its neighbours (BERT at 6, run by two 6-GPU boxes at 96 beside 448 at 4 and 8),
    it pools with them, so no family's ratio taken there is carried to every count."""
    per_count: dict[float, list[float]] = {}
    for f in sorted(set(family)):
        mine = np.array([g == f for g in family])
        index = np.flatnonzero(mine)
        newest = _newest_at([rounds[i] for i in index], n[mine])
        for count, pick in newest.items():
            per_count.setdefault(count, []).append(float(np.median(log2_b[index[pick]])))
    counts = sorted(per_count)
    medians = [float(np.median(per_count[c])) for c in counts]
    ran = [len(per_count[c]) for c in counts]
    pooled = _non_decreasing(medians, ran)
    x = [math.log2(c) for c in counts]
    # beyond the counts run, the slope of the end counts' own medians (the pooling may
    # flatten an end that rose: GPT-3's 2,560-2,904 at 10,240-11,616 run as 1 per 4 devices)
    ends = [(0, 1), (-1, -2)] if len(x) > 1 else []
    return {
        "log2_n": x,
        "log2_b": [float(v) for v in pooled],
        "log2_b_median": medians,
        "families": ran,
        "end_slopes": [(medians[a] - medians[b]) / (x[a] - x[b]) for a, b in ends] or None,
    }


def _rcp(round_name: str, benchmark: str) -> Rcp | None:
    model = round_rcp_model(round_name, benchmark)
    if model is None:
        return None
    return {"e_min": model.e_min, "b_noise": model.b_noise, "source": model.source}


def _target(value: float) -> float | None:
    return float(value) if math.isfinite(value) else None


def _family_facts(rows: Facts, index: np.ndarray) -> FamilyFit:
    """A family's batch per count, anchors per count and its systems (``index``: its
    positions in ``rows``)."""
    rounds = [rows["round"][i] for i in index]
    n = rows["n"][index]
    systems = [
        [
            rows["round"][i],
            rows["submitter"][i],
            rows["system_name"][i],
            int(rows["n"][i]),
            float(rows["minutes"][i]),
            float(2 ** rows["log2_b"][i]),
        ]
        for i in index
    ]
    batch, counts = {}, {}
    for count, pick in _newest_at(rounds, n).items():
        at = index[pick]
        weight = rows["weight"][at]
        mean = float(np.sum(weight * rows["residual"][at]) / np.sum(weight))
        # the batch its newest results there ran (the most common, else the fastest's)
        ran = submitted_batch([systems[k] for k in pick])
        batch[count] = math.log2(ran) if ran else float(np.median(rows["log2_b"][at]))
        counts[str(int(count))] = {
            "anchor": mean * len(at) / (len(at) + ANCHOR_PRIOR),
            "round": rounds[pick[0]],
            "systems": len(at),
            "all_systems": int(np.sum(n == count)),
        }
    ordered = sorted(batch)
    return {
        "batch": {"log2_n": [math.log2(c) for c in ordered], "log2_b": [batch[c] for c in ordered]},
        "counts": counts,
        "systems": systems,
    }


def fit_workload(frame: pd.DataFrame, pen: Penalties = DEFAULT) -> WorkloadFit:
    """The fit of one workload's measured systems (see the module docstring)."""
    rows: Facts = {
        "family": frame["accelerator_family"].tolist(),
        "round": frame["round"].tolist(),
        "submitter": frame["submitter"].astype(str).tolist(),
        "system_name": frame["system_name"].astype(str).tolist(),
        "n": frame["accelerators"].to_numpy(float),
        "minutes": frame["time_to_train_min"].to_numpy(float),
        "log2_b": np.log2(frame["global_batch_size"].to_numpy(float)),
    }
    x = np.log2(rows["n"])
    era = frame["era"].to_numpy(int)
    args = (rows["family"], rows["round"], x, rows["log2_b"] - x, frame["log_y"].to_numpy(float))
    lay, theta, rows["residual"], rows["weight"] = solve(*args, era, pen)
    free = float(theta[lay.batch_at])
    if free > 0:  # a larger per-device batch slower per sample: not the term's mechanism
        held = replace(pen, batch=pen.pin)  # no batch effect (said: throughput.batch_sign)
        lay, theta, rows["residual"], rows["weight"] = solve(*args, era, held)
    newest = max(rows["round"], key=round_key)
    benchmark = str(frame["benchmark"].iloc[rows["round"].index(newest)])
    fitted = levels(lay, theta)
    if free > 0:
        fitted["batch_slope"] = 0.0  # held (its penalty leaves ~1e-8)
    family = np.array(rows["family"], dtype=object)
    for f in fitted["families"]:
        fitted["families"][f] |= _family_facts(rows, np.flatnonzero(family == f))
    modelled = bool(frame["expected_samples"].notna().all())
    by_round = dict(zip(frame["round"], frame["benchmark"], strict=True))
    aims = frame["quality_target"] if "quality_target" in frame else [math.nan] * len(frame)
    return {
        **fitted,
        "workload": str(frame["workload"].iloc[0]),
        "benchmark": benchmark,
        "benchmarks": sorted(set(frame["benchmark"].astype(str))),
        "round": newest,
        "era": {r: int(e) for r, e in zip(frame["round"], era, strict=True)},
        "reference_batch": float(frame["reference_batch"].iloc[0]),
        # the rounds with RCPs of their own (one without takes the nearest's: at_round)
        "rcp": {r: m for r, b in by_round.items() if (m := _rcp(r, b))} if modelled else None,
        # each round's quality target (None: unknown): rounds of two targets are pooled
        "targets": {r: _target(t) for r, t in zip(frame["round"], aims, strict=True)},
        "batch_curve": _batch_curve(rows["family"], rows["round"], rows["n"], rows["log2_b"]),
        "scale": robust_scale(rows["residual"]),
        "systems": len(family),
        # the batch slope the free fit found (``batch_slope`` is 0 where it was positive)
        "batch_slope_free": free,
    }

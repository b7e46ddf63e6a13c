"""K-means clusters of a benchmark's systems, to find behaviour patterns (as the study did).

Features, each standardised to zero mean and unit variance: ``log10(accelerators)``,
``log10(time_to_train_min)`` and ``normalized_efficiency``. k is chosen by the best
silhouette score over 2..6 (capped at n-1) unless given; K-means runs with a fixed seed
and 10 initialisations, so labels are deterministic, and labels are renumbered by the
clusters' mean accelerator count (then mean time): cluster 0 has the smallest mean, which
need not hold the smallest systems (v4.0 Llama2 70B LoRA: Gaudi2's and Juniper's slow
8-accelerator runs are cluster 0, the 4-accelerator systems cluster 1).

K-means is scikit-learn's ``KMeans(n_clusters=k, n_init=10, random_state=seed)``
(greedy k-means++ starts, Lloyd's algorithm, the run of least inertia kept) written
again in numpy, step for step and drawing the same random numbers, and the silhouette
its ``silhouette_score``: a workload's few dozen systems need no compiled library, and
scikit-learn's import (~1.5 CPU-s: benchmarks/results/import_costs.json) and per-fit
overhead (~0.1 s, mostly its OpenMP threads) were most of a report's clustering time. On
every workload of the bundled rounds the labels and scores equal scikit-learn's
(tests/analysis/test_clusters.py).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

STARTS = 10  # k-means++ starts (scikit-learn's n_init)
MAX_ITER = 300  # Lloyd iterations at most (scikit-learn's)
TOL = 1e-4  # total squared centre shift, relative to the features' mean variance


@dataclass(frozen=True, slots=True)
class Clustering:
    """Cluster label per row (aligned with the input table), the k used and its
    silhouette score (NaN when k was not chosen by silhouette)."""

    labels: np.ndarray
    k: int
    silhouette: float


def cluster_features(table: pd.DataFrame) -> np.ndarray:
    """The standardised feature matrix (rows as in ``table``): each column minus its mean,
    over its population standard deviation (a constant column is left at zero)."""
    raw = np.column_stack(
        [
            np.log10(table["accelerators"].astype(float)),
            np.log10(table["time_to_train_min"].astype(float)),
            table["normalized_efficiency"].astype(float),
        ]
    )
    spread = raw.std(axis=0)
    return (raw - raw.mean(axis=0)) / np.where(spread > 0, spread, 1.0)


def _squared_distances(points: np.ndarray, x: np.ndarray, x_norms: np.ndarray) -> np.ndarray:
    """Squared distances of each of ``points`` to each row of ``x`` (``|p|^2 - 2 p.x +
    |x|^2``, floored at 0: the expansion scikit-learn's k-means++ uses)."""
    squared = -2.0 * (points @ x.T) + (points**2).sum(axis=1)[:, None] + x_norms[None, :]
    return np.maximum(squared, 0.0)


def _plus_plus(x: np.ndarray, k: int, rng: np.random.RandomState) -> np.ndarray:
    """Greedy k-means++ starting centres (Arthur and Vassilvitskii 2007): the first a
    random point, each next one the best (least total squared distance to the nearest
    centre) of ``2 + ln k`` points drawn with probability proportional to their squared
    distance to the nearest centre chosen so far."""
    n = len(x)
    x_norms = (x**2).sum(axis=1)
    trials = 2 + int(np.log(k))
    first = rng.choice(n, p=np.full(n, 1.0 / n))
    centres = [x[first]]
    nearest = _squared_distances(x[[first]], x, x_norms)[0]
    potential = nearest.sum()
    for _ in range(1, k):
        draws = rng.uniform(size=trials) * potential
        picks = np.minimum(np.searchsorted(np.cumsum(nearest), draws), n - 1)
        candidates = np.minimum(nearest, _squared_distances(x[picks], x, x_norms))
        totals = candidates.sum(axis=1)
        best = int(np.argmin(totals))
        potential, nearest = totals[best], candidates[best]
        centres.append(x[picks[best]])
    return np.array(centres)


def _assign(x: np.ndarray, centres: np.ndarray) -> np.ndarray:
    """Each point's nearest centre (the first of equals), by ``|c|^2 - 2 x.c``."""
    return ((centres**2).sum(axis=1)[None, :] - 2.0 * (x @ centres.T)).argmin(axis=1)


def _moved(x: np.ndarray, centres: np.ndarray, labels: np.ndarray) -> np.ndarray:
    """The centres moved to their points' means. An empty centre takes the point farthest
    from its own centre (that point leaves its cluster's sum), as scikit-learn relocates."""
    k = len(centres)
    sums = np.zeros_like(centres)
    np.add.at(sums, labels, x)
    counts = np.bincount(labels, minlength=k).astype(float)
    empty = np.flatnonzero(counts == 0)
    if len(empty):
        far = ((x - centres[labels]) ** 2).sum(axis=1)
        if far.max() > 0:
            for cluster, point in zip(empty, np.argpartition(far, -len(empty))[::-1], strict=False):
                sums[labels[point]] -= x[point]
                counts[labels[point]] -= 1
                sums[cluster], counts[cluster] = x[point], 1
    biggest = int(np.argmax(counts))
    means = sums / np.where(counts > 0, counts, 1.0)[:, None]
    means[counts == 0] = means[biggest]
    return means


def _lloyd(x: np.ndarray, centres: np.ndarray, tol: float) -> tuple[np.ndarray, float]:
    """Lloyd's algorithm from ``centres``: assign, move, until the labels repeat or the
    centres' total squared shift is within ``tol``; the labels and their inertia."""
    previous = np.full(len(x), -1)
    converged = False
    for _ in range(MAX_ITER):
        labels = _assign(x, centres)
        moved = _moved(x, centres, labels)
        shift = float(((moved - centres) ** 2).sum())
        centres = moved
        if np.array_equal(labels, previous):
            converged = True
            break
        if shift <= tol:
            break
        previous = labels
    if not converged:  # the labels of the last centres
        labels = _assign(x, centres)
    return labels, float(((x - centres[labels]) ** 2).sum())


def kmeans(x: np.ndarray, k: int, *, starts: int = STARTS, seed: int = 0) -> np.ndarray:
    """The labels (0..k-1) of the least-inertia of ``starts`` Lloyd runs on the rows of
    ``x``, each from greedy k-means++ centres (scikit-learn's ``KMeans(n_clusters=k,
    n_init=starts, random_state=seed).fit_predict(x)``, the data centred first as it
    does)."""
    rng = np.random.RandomState(seed)
    x = x - x.mean(axis=0)
    tol = TOL * float(np.var(x, axis=0).mean())
    best: tuple[float, np.ndarray] | None = None
    for _ in range(starts):
        labels, inertia = _lloyd(x, _plus_plus(x, k, rng), tol)
        if best is None or (inertia < best[0] and not _same_partition(labels, best[1])):
            best = (inertia, labels)
    assert best is not None
    return best[1]


def _same_partition(a: np.ndarray, b: np.ndarray) -> bool:
    """Whether two labellings group the points alike (labels permuted)."""
    pairs = set(zip(a.tolist(), b.tolist(), strict=True))
    return len(pairs) == len(set(a.tolist())) == len(set(b.tolist()))


def silhouette(x: np.ndarray, labels: np.ndarray) -> float:
    """Mean silhouette of the points (Rousseeuw 1987): ``(b - a) / max(a, b)`` with ``a``
    a point's mean distance to the other points of its cluster and ``b`` its least mean
    distance to another cluster's points; 0 for a point alone in its cluster."""
    distance = np.sqrt(((x[:, None, :] - x[None, :, :]) ** 2).sum(-1))
    clusters, own = np.unique(labels, return_inverse=True)
    member = own[:, None] == np.arange(len(clusters))[None, :]  # (n, clusters)
    sizes = member.sum(axis=0)
    sums = distance @ member  # (n, clusters): summed distance to each cluster's points
    own_size = sizes[own]
    a = sums[np.arange(len(x)), own] / np.maximum(own_size - 1, 1)
    b = np.where(member, np.inf, sums / sizes).min(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        s = np.where(own_size > 1, (b - a) / np.maximum(a, b), 0.0)
    return float(np.nan_to_num(s).mean())


def cluster_systems(
    table: pd.DataFrame, k: int | None = None, *, k_max: int = 6, seed: int = 0
) -> Clustering:
    """K-means labels of a scaling table's systems (see the module docstring)."""
    n = len(table)
    distinct = len(table.drop_duplicates(["accelerators", "time_to_train_min"]))
    if n < 3 or distinct < 3:
        return Clustering(labels=np.zeros(n, dtype=int), k=1, silhouette=float("nan"))
    x = cluster_features(table)
    if k is not None:
        k = max(1, min(k, distinct))
        labels = kmeans(x, k, seed=seed)
        return Clustering(labels=_ordered(labels, table), k=k, silhouette=float("nan"))
    best: tuple[float, int, np.ndarray] | None = None
    for candidate in range(2, min(k_max, distinct - 1) + 1):
        labels = kmeans(x, candidate, seed=seed)
        if len(np.unique(labels)) < 2:
            continue  # no silhouette for one cluster
        score = silhouette(x, labels)
        if best is None or score > best[0]:
            best = (score, candidate, labels)
    if best is None:
        labels = kmeans(x, 2, seed=seed)
        return Clustering(labels=_ordered(labels, table), k=2, silhouette=float("nan"))
    return Clustering(labels=_ordered(best[2], table), k=best[1], silhouette=best[0])


def _ordered(labels: np.ndarray, table: pd.DataFrame) -> np.ndarray:
    """Renumber clusters by mean accelerator count (then mean time, for ties)."""
    frame = pd.DataFrame(
        {
            "label": labels,
            "n": table["accelerators"].to_numpy(float),
            "t": table["time_to_train_min"].to_numpy(float),
        }
    )
    order = frame.groupby("label")[["n", "t"]].mean().sort_values(["n", "t"]).index
    mapping = {old: new for new, old in enumerate(order)}
    return np.array([mapping[label] for label in labels], dtype=int)

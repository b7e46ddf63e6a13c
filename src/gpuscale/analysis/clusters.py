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
(tests/analysis/test_clusters.py). The starts run side by side (each matrix product
still one start's, as alone: its last digits depend on its shape), which halves the
time of the clusterings :func:`leave_one_out` repeats to say how the clusters hold.
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
    """Cluster label per row (aligned with the input table), the k used, its silhouette
    score (NaN when k was not chosen by silhouette) and its :class:`Stability`."""

    labels: np.ndarray
    k: int
    silhouette: float
    # how the clusters hold with each system left out (``leave_one_out``; None: not asked,
    # or one cluster)
    stability: Stability | None = None


def cluster_features(table: pd.DataFrame) -> np.ndarray:
    """The standardised feature matrix (rows as in ``table``): each column minus its mean,
    over its population standard deviation (a constant column is left at zero)."""
    return _standardised(_raw_features(table))


def _standardised(raw: np.ndarray) -> np.ndarray:
    """The features of :func:`_raw_features` (accelerators and time as log10), each
    column minus its mean over its population standard deviation (a constant one: 0)."""
    raw = np.column_stack([np.log10(raw[:, 0]), np.log10(raw[:, 1]), raw[:, 2]])
    spread = raw.std(axis=0)
    return (raw - raw.mean(axis=0)) / np.where(spread > 0, spread, 1.0)


def _squared_distances(points: np.ndarray, x: np.ndarray, x_norms: np.ndarray) -> np.ndarray:
    """Squared distances of each start's ``points`` (starts, m, features) to each row of
    ``x`` (``|p|^2 - 2 p.x + |x|^2``, floored at 0: the expansion scikit-learn's
    k-means++ uses)."""
    squared = -2.0 * _products(points, x) + (points**2).sum(axis=2)[:, :, None] + x_norms
    return np.maximum(squared, 0.0)


def _products(points: np.ndarray, x: np.ndarray) -> np.ndarray:
    """``p @ x.T`` of each start's ``points`` (starts, m, features), one product a start:
    a matrix product's last digits depend on its shape, so each is the one a start alone
    computes."""
    return np.stack([p @ x.T for p in points])


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


def kmeans(x: np.ndarray, k: int, *, starts: int = STARTS, seed: int = 0) -> np.ndarray:
    """The labels (0..k-1) of the least-inertia of ``starts`` Lloyd runs on the rows of
    ``x``, each from greedy k-means++ centres (scikit-learn's ``KMeans(n_clusters=k,
    n_init=starts, random_state=seed).fit_predict(x)``, the data centred first as it
    does). The starts run side by side, each its own numbers as alone."""
    rng = np.random.RandomState(seed)
    x = x - x.mean(axis=0)
    tol = TOL * float(np.var(x, axis=0).mean())
    best: tuple[float, np.ndarray] | None = None
    for labels, inertia in _lloyd_all(x, _plus_plus_all(x, k, starts, rng), tol):
        if best is None or (inertia < best[0] and not _same_partition(labels, best[1])):
            best = (inertia, labels)
    assert best is not None
    return best[1]


def _plus_plus_all(x: np.ndarray, k: int, starts: int, rng: np.random.RandomState) -> np.ndarray:
    """Greedy k-means++ starting centres (Arthur and Vassilvitskii 2007) of each start,
    (starts, k, features): the first a random point, each next one the best (least total
    squared distance to the nearest centre) of ``2 + ln k`` points drawn with probability
    proportional to their squared distance to the nearest centre chosen so far. Each
    start draws, in turn, one uniform number for its first centre (as
    ``RandomState.choice`` with equal weights does) and ``2 + ln k`` for each next one."""
    n = len(x)
    x_norms = (x**2).sum(axis=1)
    trials = 2 + int(np.log(k))
    draws = rng.random_sample((starts, 1 + (k - 1) * trials))
    cdf = np.full(n, 1.0 / n).cumsum()
    cdf /= cdf[-1]
    first = cdf.searchsorted(draws[:, 0], side="right")
    centres = np.empty((starts, k, x.shape[1]))
    centres[:, 0] = x[first]
    nearest = _squared_distances(x[first][:, None, :], x, x_norms)[:, 0]  # (starts, n)
    potential = nearest.sum(axis=1)
    every = np.arange(starts)
    for step in range(1, k):
        wanted = draws[:, 1 + (step - 1) * trials : 1 + step * trials] * potential[:, None]
        # the first point whose running total reaches each draw (a search of the sums)
        reached = np.cumsum(nearest, axis=1)[:, None, :] < wanted[:, :, None]
        picks = np.minimum(reached.sum(axis=2), n - 1)  # (starts, trials)
        distances = _squared_distances(x[picks], x, x_norms)  # (starts, trials, n)
        candidates = np.minimum(nearest[:, None, :], distances)
        totals = candidates.sum(axis=2)
        best = totals.argmin(axis=1)
        potential, nearest = totals[every, best], candidates[every, best]
        centres[:, step] = x[picks[every, best]]
    return centres


def _lloyd_all(x: np.ndarray, centres: np.ndarray, tol: float) -> list[tuple[np.ndarray, float]]:
    """Lloyd's algorithm from each start's ``centres`` (starts, k, features): assign,
    move, until the labels repeat or the centres' total squared shift is within ``tol``;
    each start's labels and their inertia."""
    n_starts = len(centres)
    centres = centres.copy()
    labels_of = np.full((n_starts, len(x)), -1)
    converged = np.zeros(n_starts, dtype=bool)
    running = np.arange(n_starts)
    for _ in range(MAX_ITER):
        if not len(running):
            break
        now = centres[running]
        products = np.stack([x @ c.T for c in now])  # as _assign
        labels = ((now**2).sum(axis=2)[:, None, :] - 2.0 * products).argmin(axis=2)
        moved = _moved_all(x, now, labels)
        shift = ((moved - now) ** 2).reshape(len(running), -1).sum(axis=1)
        centres[running] = moved
        repeated = (labels == labels_of[running]).all(axis=1)
        converged[running[repeated]] = True
        labels_of[running] = labels
        running = running[~repeated & (shift > tol)]
    out = []
    for start in range(n_starts):
        # not converged: the labels of the last centres
        labels = labels_of[start] if converged[start] else _assign(x, centres[start])
        out.append((labels, float(((x - centres[start][labels]) ** 2).sum())))
    return out


def _moved_all(x: np.ndarray, centres: np.ndarray, labels: np.ndarray) -> np.ndarray:
    """:func:`_moved` of each start (centres (starts, k, features), labels (starts,
    points)): the sums of a start's points taken in their order, as alone; a start with
    an empty cluster moved by :func:`_moved` itself."""
    n_starts, k, d = centres.shape
    bins = (np.arange(n_starts)[:, None] * k + labels).ravel()
    sums = np.zeros((n_starts * k, d))
    np.add.at(sums, bins, np.tile(x, (n_starts, 1)))
    counts = np.bincount(bins, minlength=n_starts * k).astype(float)
    means = (sums / np.where(counts > 0, counts, 1.0)[:, None]).reshape(n_starts, k, d)
    for start in np.flatnonzero((counts.reshape(n_starts, k) == 0).any(axis=1)):
        means[start] = _moved(x, centres[start], labels[start])
    return means


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
    labels, k, score = _chosen(_raw_features(table), k, k_max=k_max, seed=seed)
    if k == 1:
        return Clustering(labels=labels, k=1, silhouette=score)
    return Clustering(labels=_ordered(labels, table), k=k, silhouette=score)


def _raw_features(table: pd.DataFrame) -> np.ndarray:
    """``accelerators``, ``time_to_train_min`` and ``normalized_efficiency`` as floats."""
    columns = ("accelerators", "time_to_train_min", "normalized_efficiency")
    return np.column_stack([table[c].astype(float).to_numpy() for c in columns])


def _chosen(
    raw: np.ndarray, k: int | None, *, k_max: int, seed: int
) -> tuple[np.ndarray, int, float]:
    """The labels (in k-means' own numbering), k and silhouette of ``cluster_systems``
    on the rows of ``raw`` (:func:`_raw_features`): one cluster where fewer than three
    systems, or distinct (accelerators, time) points, are there to split."""
    n = len(raw)
    distinct = len(np.unique(raw[:, :2], axis=0)) if n else 0
    if n < 3 or distinct < 3:
        return np.zeros(n, dtype=int), 1, float("nan")
    x = _standardised(raw)
    if k is not None:
        k = max(1, min(k, distinct))
        return kmeans(x, k, seed=seed), k, float("nan")
    best: tuple[float, int, np.ndarray] | None = None
    for candidate in range(2, min(k_max, distinct - 1) + 1):
        labels = kmeans(x, candidate, seed=seed)
        if len(np.unique(labels)) < 2:
            continue  # no silhouette for one cluster
        score = silhouette(x, labels)
        if best is None or score > best[0]:
            best = (score, candidate, labels)
    if best is None:
        return kmeans(x, 2, seed=seed), 2, float("nan")
    return best[2], best[1], best[0]


def rand_index(a: np.ndarray, b: np.ndarray) -> float:
    """The share of pairs of points that two labellings treat alike, both in one cluster
    or both apart (Rand 1971, "Objective criteria for the evaluation of clustering
    methods", JASA 66:846-850); 1.0 for fewer than two points. Labels need not match."""
    upper = np.triu_indices(len(a), 1)
    together_a = (a[:, None] == a[None, :])[upper]
    together_b = (b[:, None] == b[None, :])[upper]
    return float((together_a == together_b).mean()) if len(together_a) else 1.0


@dataclass(frozen=True, slots=True)
class Stability:
    """How a clustering holds when one system is left out: for each row of the table
    (its position), the Rand index between the clusters of the other systems reclustered
    as ``cluster_systems`` does (k chosen again) and their clusters with every system,
    and the k chosen without it."""

    agreement: np.ndarray
    k: np.ndarray
    full_k: int

    @property
    def median(self) -> float:
        return float(np.median(self.agreement))

    @property
    def least(self) -> float:
        return float(self.agreement.min())

    @property
    def most(self) -> float:
        return float(self.agreement.max())

    @property
    def moved_most(self) -> list[int]:
        """The rows whose leaving out agrees least with every system's clusters."""
        return np.flatnonzero(self.agreement == self.agreement.min()).tolist()

    @property
    def k_seen(self) -> list[int]:
        """Every k chosen with one system left out."""
        return sorted(set(self.k.tolist()))

    @property
    def k_changed(self) -> int:
        """How many leavings-out chose another k than every system's clustering."""
        return int((self.k != self.full_k).sum())


def leave_one_out(
    table: pd.DataFrame,
    clustering: Clustering,
    k: int | None = None,
    *,
    k_max: int = 6,
    seed: int = 0,
) -> Stability | None:
    """:class:`Stability` of ``clustering`` (``cluster_systems(table, k, k_max=k_max,
    seed=seed)``), each system left out in turn; None where it is one cluster (nothing to
    hold). Costs a clustering per system (v4.1 BERT's 29 systems: ~0.13 CPU-s)."""
    if clustering.k <= 1:
        return None
    raw = _raw_features(table)
    agreement, ks = np.empty(len(raw)), np.empty(len(raw), dtype=int)
    for row in range(len(raw)):
        kept = np.arange(len(raw)) != row
        labels, ks[row], _ = _chosen(raw[kept], k, k_max=k_max, seed=seed)
        agreement[row] = rand_index(clustering.labels[kept], labels)
    return Stability(agreement=agreement, k=ks, full_k=clustering.k)


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

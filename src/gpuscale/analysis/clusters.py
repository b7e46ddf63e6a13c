"""K-means clusters of a benchmark's systems, to find behaviour patterns (as the study did).

Features, each standardised to zero mean and unit variance: ``log10(accelerators)``,
``log10(time_to_train_min)`` and ``normalized_efficiency``. k is chosen by the best
silhouette score over 2..6 (capped at n-1) unless given; K-means runs with a fixed seed
and 10 initialisations, so labels are deterministic, and labels are renumbered by the
clusters' mean accelerator count: cluster 0 always holds the smallest systems.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd


@dataclass(frozen=True, slots=True)
class Clustering:
    """Cluster label per row (aligned with the input table), the k used and its
    silhouette score (NaN when k was not chosen by silhouette)."""

    labels: np.ndarray
    k: int
    silhouette: float


def cluster_features(table: pd.DataFrame) -> np.ndarray:
    """The standardised feature matrix (rows as in ``table``)."""
    from sklearn.preprocessing import StandardScaler  # imported when used: ~1 s

    raw = np.column_stack(
        [
            np.log10(table["accelerators"].astype(float)),
            np.log10(table["time_to_train_min"].astype(float)),
            table["normalized_efficiency"].astype(float),
        ]
    )
    return StandardScaler().fit_transform(raw)


def cluster_systems(
    table: pd.DataFrame, k: int | None = None, *, k_max: int = 6, seed: int = 0
) -> Clustering:
    """K-means labels of a scaling table's systems (see the module docstring)."""
    # lazy: scikit-learn (about 2 s to import), only when clusters are fitted
    from sklearn.cluster import KMeans
    from sklearn.metrics import silhouette_score

    n = len(table)
    distinct = len(table.drop_duplicates(["accelerators", "time_to_train_min"]))
    if n < 3 or distinct < 3:
        return Clustering(labels=np.zeros(n, dtype=int), k=1, silhouette=float("nan"))
    x = cluster_features(table)
    if k is not None:
        k = max(1, min(k, distinct))
        labels = KMeans(n_clusters=k, n_init=10, random_state=seed).fit_predict(x)
        return Clustering(labels=_ordered(labels, table), k=k, silhouette=float("nan"))
    best: tuple[float, int, np.ndarray] | None = None
    for candidate in range(2, min(k_max, distinct - 1) + 1):
        labels = KMeans(n_clusters=candidate, n_init=10, random_state=seed).fit_predict(x)
        score = float(silhouette_score(x, labels))
        if best is None or score > best[0]:
            best = (score, candidate, labels)
    if best is None:
        labels = KMeans(n_clusters=2, n_init=10, random_state=seed).fit_predict(x)
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

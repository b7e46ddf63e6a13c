"""K-means and silhouette written in numpy (``gpuscale.analysis.clusters``) against
scikit-learn's, which they replace in the analysis: the same labels and scores on every
workload of the bundled rounds, under both reference rules, at every k the analysis
tries; and on random data with duplicate points and empty clusters to relocate."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from threadpoolctl import threadpool_limits

from gpuscale.analysis.clusters import cluster_features, kmeans, silhouette
from gpuscale.analysis.metrics import scaling_table
from gpuscale.tables import RoundTables

sklearn_cluster = pytest.importorskip("sklearn.cluster")
sklearn_metrics = pytest.importorskip("sklearn.metrics")
sklearn_preprocessing = pytest.importorskip("sklearn.preprocessing")


def sklearn_labels(x: np.ndarray, k: int) -> np.ndarray:
    with threadpool_limits(1):  # its OpenMP threads cost more than a few dozen points
        return sklearn_cluster.KMeans(n_clusters=k, n_init=10, random_state=0).fit_predict(x)


@pytest.fixture(scope="module")
def feature_sets(bundled: RoundTables) -> list[tuple[str, pd.DataFrame, int]]:
    """(name, scaling table, distinct points) of every workload of the bundled rounds."""
    out = []
    scores = bundled.scores
    for round_name in sorted(scores["round"].unique()):
        in_round = scores[scores["round"] == round_name]
        for workload in sorted(in_round["workload"].dropna().unique()):
            for reference in ("study", "family"):
                table = scaling_table(in_round, workload, reference=reference)
                distinct = len(table.drop_duplicates(["accelerators", "time_to_train_min"]))
                if distinct >= 3:
                    name = f"{round_name} {workload} {reference}"
                    out.append((name, table, distinct))
    return out


def test_features_are_standardised_as_sklearn_does(feature_sets) -> None:
    for name, table, _ in feature_sets:
        raw = np.column_stack(
            [
                np.log10(table["accelerators"].astype(float)),
                np.log10(table["time_to_train_min"].astype(float)),
                table["normalized_efficiency"].astype(float),
            ]
        )
        expected = sklearn_preprocessing.StandardScaler().fit_transform(raw)
        assert np.allclose(cluster_features(table), expected), name


@pytest.mark.slow
def test_labels_and_silhouettes_equal_sklearn_on_the_bundled_rounds(feature_sets) -> None:
    cases = differ = 0
    for name, table, distinct in feature_sets:
        x = cluster_features(table)
        for k in range(2, min(6, distinct - 1) + 1):
            cases += 1
            ours, theirs = kmeans(x, k), sklearn_labels(x, k)
            if not np.array_equal(ours, theirs):
                differ += 1
                print(name, k, ours, theirs)
                continue
            assert silhouette(x, ours) == pytest.approx(
                sklearn_metrics.silhouette_score(x, theirs), abs=1e-12
            ), (name, k)
    assert cases > 300  # every round, workload and rule: not a vacuous pass
    assert differ == 0


@pytest.mark.parametrize("seed", range(8))
def test_random_data_with_duplicates_agrees(seed: int) -> None:
    rng = np.random.default_rng(seed)
    points = rng.normal(size=(12, 3))
    x = np.concatenate([points, points[:6], points[:3]])  # repeated points, as systems repeat
    for k in (2, 3, 5, 8):
        assert np.array_equal(kmeans(x, k, seed=seed), sklearn_labels_seeded(x, k, seed)), k
        labels = kmeans(x, k, seed=seed)
        if len(set(labels.tolist())) > 1:
            # scikit-learn's distance between equal points is sqrt of a rounding error
            # (~1e-8), not 0: the scores differ in the ninth digit
            assert silhouette(x, labels) == pytest.approx(
                sklearn_metrics.silhouette_score(x, labels), abs=1e-7
            )


def sklearn_labels_seeded(x: np.ndarray, k: int, seed: int) -> np.ndarray:
    with threadpool_limits(1):
        return sklearn_cluster.KMeans(n_clusters=k, n_init=10, random_state=seed).fit_predict(x)


def test_a_singleton_cluster_scores_zero() -> None:
    x = np.array([[0.0], [0.1], [0.2], [5.0]])
    labels = np.array([0, 0, 0, 1])
    assert silhouette(x, labels) == pytest.approx(sklearn_metrics.silhouette_score(x, labels))

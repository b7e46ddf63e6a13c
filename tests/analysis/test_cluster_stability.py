"""How the K-means clusters hold with each system left out (``clusters.leave_one_out``):
the Rand index (Rand 1971) on pairs, a split that one point decides, a well-separated
table, and the v4.1 RetinaNet figure a reviewer gave (2 clusters, 6 without NVIDIA's
Eos_n316, agreement 0.59), as the JSON and ``analyze --explain`` carry it."""

from __future__ import annotations

import numpy as np
import pandas as pd

from gpuscale.analysis.clusters import cluster_systems, leave_one_out, rand_index
from gpuscale.analysis.document import as_json
from gpuscale.analysis.terminal import cluster_lines
from gpuscale.tables.analysis_request import AnalysisOptions

COLUMNS = ["accelerators", "time_to_train_min", "normalized_efficiency"]


def test_the_rand_index_counts_pairs_treated_alike_whatever_the_labels() -> None:
    # pairs (0,1) and (1,2), (1,3) differ; (0,2), (0,3), (2,3) agree: 3 of 6
    assert rand_index(np.array([0, 0, 1, 1]), np.array([0, 1, 1, 1])) == 0.5
    assert rand_index(np.array([0, 0, 1, 2]), np.array([5, 5, 3, 4])) == 1.0
    assert rand_index(np.array([0, 0, 0]), np.array([0, 1, 2])) == 0.0
    assert rand_index(np.array([3]), np.array([1])) == 1.0


def test_a_split_one_point_decides_agrees_less_without_it() -> None:
    """Six systems 10-15 min apart and one far faster: the far one is a cluster of its
    own; without it the six are split 3 and 3, so 9 of their 15 pairs are put apart
    (agreement 6/15); without any other the clusters stand."""
    line = [(8, minutes, 1.0) for minutes in (10.0, 11.0, 12.0, 13.0, 14.0, 15.0)]
    table = pd.DataFrame([*line, (512, 1.0, 0.2)], columns=COLUMNS)
    clustering = cluster_systems(table)
    assert clustering.k == 2 and clustering.labels.tolist() == [0] * 6 + [1]
    stability = leave_one_out(table, clustering)
    assert stability is not None
    assert stability.agreement.tolist() == [1.0] * 6 + [0.4]
    assert (stability.least, stability.median, stability.most) == (0.4, 1.0, 1.0)
    assert stability.moved_most == [6] and stability.k_seen == [2] and stability.k_changed == 0


def test_well_separated_clusters_hold_whichever_system_is_left_out() -> None:
    groups = [(2, 100.0, 1.0), (64, 4.0, 0.8), (2048, 0.2, 0.5)]
    jitter = (1.0, 1.01, 0.99, 1.005)
    rows = [(n, t * j, e * (2 - j)) for n, t, e in groups for j in jitter]
    table = pd.DataFrame(rows, columns=COLUMNS)
    clustering = cluster_systems(table)
    assert clustering.k == 3
    stability = leave_one_out(table, clustering)
    assert stability is not None
    assert stability.least == 1.0 and stability.k_seen == [3] and stability.k_changed == 0


def test_one_cluster_has_no_stability() -> None:
    table = pd.DataFrame([(8, 10.0, 1.0), (8, 10.0, 1.0)], columns=COLUMNS)
    clustering = cluster_systems(table)
    assert clustering.k == 1 and leave_one_out(table, clustering) is None


def test_v41_retinanet_becomes_six_clusters_without_eos_n316(study_analysis) -> None:
    """The reviewer's figure: under the study's rule v4.1 RetinaNet's 2 clusters become 6
    without Eos_n316 (2,528 H100s), 178 of the other 25 systems' 300 pairs treated alike
    (0.59); without any other system they stand (k 2, agreement 1)."""
    (result,) = [r for r in study_analysis["study"] if r.workload == "retinanet"]
    stability = result.clustering.stability
    assert result.clustering.k == 2 and len(result.table) == 26
    assert stability.least == 178 / 300 and stability.median == 1.0
    [row] = stability.moved_most
    assert result.table["system_name"].iloc[row] == "Eos_n316"
    assert stability.k[row] == 6 and stability.k_seen == [2, 6] and stability.k_changed == 1
    # analyze -f json carries every number of it, keyed by the system
    [doc] = [d for d in as_json([result], AnalysisOptions()) if d["benchmark"] == "retinanet"]
    held = doc["clusters"]["leave_one_out"]
    assert [s["agreement"] for s in held["systems"]] == stability.agreement.tolist()
    assert [s["k"] for s in held["systems"]] == stability.k.tolist()
    assert held["least_without"] == [
        {
            "org": "NVIDIA",
            "system_id": result.table["system_id"].iloc[row],
            "accelerators": 2528,
            "agreement": 178 / 300,
            "k": 6,
        }
    ]
    assert (held["agreement_least"], held["agreement_median"], held["k_seen"]) == (
        178 / 300,
        1.0,
        [2, 6],
    )
    # analyze --explain says it under the table, as the report does
    assert cluster_lines(result) == [
        "clusters: K-means k 2 (silhouette 0.69); leaving one system out: agreement "
        "0.59-1.00, median 1.00; k 2-6 (another in 1 of 26); least without NVIDIA "
        "Eos_n316 (2,528 x H100-SXM5-80GB)"
    ]

"""Clusters are told apart by colour-blind readers: a minimum colour distance between the
cluster colours under normal vision and simulated colour-vision deficiencies, and a marker
shape per cluster in every cluster figure."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from matplotlib.colors import to_rgb

from gpuscale.analysis import AnalysisOptions, analyze
from gpuscale.mlperf import RoundTables
from gpuscale.report.figures import FIGURES, overview
from gpuscale.report.style import CLUSTER_MARKERS, CLUSTER_PALETTE, FAMILY_PALETTE, cluster_colour

from ..analysis.tables import runs_for, scores

# Machado, Oliveira and Fernandes (2009), severity 1.0, on linear RGB.
SIMULATIONS = {
    "normal vision": np.eye(3),
    "protanopia": np.array(
        [
            [0.152286, 1.052583, -0.204868],
            [0.114503, 0.786281, 0.099216],
            [-0.003882, -0.048116, 1.051998],
        ]
    ),
    "deuteranopia": np.array(
        [
            [0.367322, 0.860646, -0.227968],
            [0.280085, 0.672501, 0.047413],
            [-0.011820, 0.042940, 0.968881],
        ]
    ),
    "tritanopia": np.array(
        [
            [1.255528, -0.076749, -0.178779],
            [-0.078411, 0.930809, 0.147602],
            [0.004733, 0.691367, 0.303900],
        ]
    ),
}
MIN_DISTANCE = 20.0  # CIE76 Delta E: clearly different at a glance (2.3 is "just noticeable")


def _lab(colour: str, simulation: np.ndarray) -> np.ndarray:
    srgb = np.array(to_rgb(colour))
    linear = np.where(srgb <= 0.04045, srgb / 12.92, ((srgb + 0.055) / 1.055) ** 2.4)
    linear = np.clip(simulation @ linear, 0.0, 1.0)
    xyz = np.array([[0.4124, 0.3576, 0.1805], [0.2126, 0.7152, 0.0722], [0.0193, 0.1192, 0.9505]])
    xyz = xyz @ linear / np.array([0.95047, 1.0, 1.08883])
    f = np.where(xyz > 216 / 24389, np.cbrt(xyz), (24389 / 27 * xyz + 16) / 116)
    return np.array([116 * f[1] - 16, 500 * (f[0] - f[1]), 200 * (f[1] - f[2])])


def min_distance(colours: list[str]) -> dict[str, float]:
    return {
        name: min(
            float(np.linalg.norm(_lab(a, m) - _lab(b, m)))
            for a, b in itertools.combinations(colours, 2)
        )
        for name, m in SIMULATIONS.items()
    }


def test_cluster_colours_stay_apart_for_colour_blind_readers() -> None:
    for k in range(2, len(CLUSTER_PALETTE) + 1):
        distances = min_distance([cluster_colour(c) for c in range(k)])
        assert min(distances.values()) >= MIN_DISTANCE, (k, distances)


def test_the_distance_check_can_fail() -> None:
    """Three shades of one sequential map (navy, slate, grey: the old cluster shades)."""
    assert min(min_distance(["#00224e", "#2f426d", "#5e626e"]).values()) < MIN_DISTANCE


def test_cluster_colours_are_not_family_colours() -> None:
    assert not set(CLUSTER_PALETTE) & set(FAMILY_PALETTE[:7])


@pytest.fixture(scope="module")
def clustered():
    rows = [(f"s{n}", "H100", n, 400.0 / n**0.8) for n in (2, 2, 4, 8, 16, 64, 256, 1024)]
    rows = [(f"{sid}_{i}", f, n, t) for i, (sid, f, n, t) in enumerate(rows)]
    frame = scores(rows)
    tables = RoundTables(frame.iloc[:0], runs_for(frame), frame, frame.iloc[:0])
    return analyze(tables, ["bert"], AnalysisOptions(n_boot=100, k=3))[0]


def _shapes(collection) -> list[bytes]:
    return [path.vertices.round(6).tobytes() for path in collection.get_paths()]


@pytest.mark.parametrize("name", ["systems", "time_vs_cost", "overview"])
def test_each_cluster_has_its_own_marker_shape(clustered, name) -> None:
    chart = overview([clustered]) if name == "overview" else FIGURES[name](clustered)
    gid = next(iter(chart.labels))
    collection = next(c for ax in chart.figure.axes for c in ax.collections if c.get_gid() == gid)
    shapes = _shapes(collection)
    clusters = (
        clustered.table.groupby(["accelerator_family", "accelerators"])["cluster"].min().tolist()
        if name == "systems"
        else clustered.table["cluster"].tolist()
    )
    assert len(shapes) == len(clusters)
    by_cluster = {c: {s for s, k in zip(shapes, clusters, strict=True) if k == c} for c in clusters}
    assert all(len(v) == 1 for v in by_cluster.values())  # one shape per cluster
    assert len({next(iter(v)) for v in by_cluster.values()}) == len(by_cluster)  # all differ
    assert len(set(CLUSTER_MARKERS)) == len(CLUSTER_MARKERS)

"""Figures plot the table's data; SVG tooltips name the systems and are escaped."""

from __future__ import annotations

import numpy as np
import pytest

from gpuscale.analysis import AnalysisOptions, analyze
from gpuscale.mlperf import RoundTables
from gpuscale.report.figures import FIGURES, overview
from gpuscale.report.svg import chart_svg

from ..analysis.tables import runs_for, scores

EVIL = "<script>alert(1)</script>"


@pytest.fixture(scope="module")
def result():
    rows = [
        ("a2", "A5000", 2, 100.0),
        ("b2", "A5000", 2, 120.0),
        ("h8", "H100", 8, 10.0),
        ("h16", "H100", 16, 5.5),
        ("h64", "H100", 64, 2.0),
        ("h128", "H100", 128, 1.4),
    ]
    frame = scores(rows)
    frame.loc[frame.system_id == "h16", "system_name"] = EVIL
    tables = RoundTables(
        systems=frame.iloc[0:0], runs=runs_for(frame), scores=frame, problems=frame.iloc[0:0]
    )
    return analyze(tables, ["bert"], AnalysisOptions(n_boot=200))[0]


def offsets(figure, gid):
    for ax in figure.axes:
        for collection in ax.collections:
            if collection.get_gid() == gid:
                return collection.get_offsets()
    raise AssertionError(f"no collection {gid}")


def test_efficiency_points_are_the_tables(result) -> None:
    chart = FIGURES["efficiency"](result)
    plotted = np.vstack([offsets(chart.figure, gid) for gid in sorted(chart.labels)])
    expected = result.table[["accelerators", "normalized_efficiency"]].to_numpy(float)
    assert sorted(map(tuple, plotted)) == sorted(map(tuple, expected))
    assert chart.figure.axes[0].get_xscale() == "log"


def test_time_vs_cost_points_and_labels(result) -> None:
    chart = FIGURES["time_vs_cost"](result)
    plotted = offsets(chart.figure, "points-all")
    assert np.allclose(plotted, result.table[["gpu_hours", "time_to_train_min"]].to_numpy(float))
    assert len(chart.labels["points-all"]) == len(result.table)


def test_systems_figure_sizes_count_shared_configurations(result) -> None:
    chart = FIGURES["systems"](result)
    labels = chart.labels["points-grouped"]
    assert any("A5000, 2 accelerators: 2 system(s)" in label for label in labels)
    assert len(labels) == 5  # (A5000, 2) shared by two systems


def test_every_figure_has_axis_labels(result) -> None:
    for make in FIGURES.values():
        ax = make(result).figure.axes[0]
        assert ax.get_xlabel() and ax.get_title()
    assert overview([result]).figure.axes[0].get_title()


def test_svg_tooltips_escape_untrusted_names(result) -> None:
    chart = FIGURES["efficiency"](result)
    svg = chart_svg(chart, "t")
    assert svg.count("<title>") == len(result.table)
    assert EVIL not in svg and "&lt;script&gt;alert(1)&lt;/script&gt;" in svg


def test_decomposition_figure_plots_the_three_factors(result) -> None:
    chart = FIGURES["decomposition"](result)
    assert len(chart.labels) == 3
    plotted = offsets(chart.figure, "points-2")[:, 1]
    assert sorted(plotted) == pytest.approx(sorted(result.table["normalized_efficiency"]))
    # Tooltips name the factor on one line (the legend's label wraps)
    assert all(label.startswith("E' ") for label in chart.labels["points-2"])
    assert all(label.startswith("throughput efficiency ") for label in chart.labels["points-0"])

"""Trends across rounds: renamed benchmarks joined, new and retired ones flagged."""

from __future__ import annotations

import pandas as pd
import pytest

from gpuscale.analysis.trends import TREND_COLUMNS, trends

from .tables import scores


def round_scores(
    name: str, benchmark: str, workload: str, rows: list[tuple[str, str, int, float]]
) -> pd.DataFrame:
    frame = scores(rows, workload=workload)
    frame["round"] = name
    frame["benchmark"] = benchmark
    return frame


def test_renamed_new_and_retired() -> None:
    frame = pd.concat(
        [
            round_scores(
                "v4.0", "ssd", "retinanet", [("a", "H100", 8, 30.0), ("b", "H100", 64, 6.0)]
            ),
            round_scores("v4.1", "ssd", "retinanet", [("a", "H100", 8, 28.0)]),
            round_scores(
                "v5.0", "retinanet", "retinanet", [("a", "H100", 8, 25.0), ("c", "H100", 16, 14.0)]
            ),
            round_scores("v4.0", "gpt3", "gpt3", [("g", "H100", 512, 50.0)]),
            round_scores("v5.0", "rgat", "rgat", [("r", "H100", 8, 5.0)]),
        ],
        ignore_index=True,
    )
    out = trends(frame)
    assert tuple(out.columns) == TREND_COLUMNS
    retina = out[out.workload == "retinanet"].set_index("round")
    assert list(retina.index) == ["v4.0", "v4.1", "v5.0"]
    assert retina.loc["v5.0", "note"] == "renamed from ssd"
    assert retina.loc["v4.0", "best_time_at_common_min"] == 30.0
    assert retina.loc["v4.0", "largest_accelerators"] == 64
    assert retina.loc["v4.0", "normalized_efficiency_at_largest"] == pytest.approx(30 / 6 / 8)
    assert "retired after v4.0" in out[out.workload == "gpt3"]["note"].iloc[0]
    assert "new in v5.0" in out[out.workload == "rgat"]["note"].iloc[0]


def test_bundled_rounds_in_order() -> None:
    from gpuscale import load_round

    out = trends(load_round().scores, ["bert"])
    rounds = out[out.accelerator_family == "H100-SXM5-80GB"]["round"].tolist()
    assert rounds == sorted(rounds, key=lambda r: tuple(map(int, r[1:].split("."))))
    # Each figure is the fastest scored system at that count (more accelerators are not
    # always faster: v3.0's 4 x 4 A100 nodes trained slower than one 8 x A100 node).
    scores = load_round().scores
    for row in out.itertuples():
        mine = scores[
            (scores["round"] == row.round)
            & (scores["workload"] == "bert")
            & (scores["accelerator_family"] == row.accelerator_family)
        ]
        at_largest = mine[mine["accelerators"] == row.largest_accelerators]
        assert row.best_time_at_largest_min == at_largest["time_to_train_min"].min()
        assert (
            row.largest_accelerators
            == mine.dropna(subset=["time_to_train_min"])["accelerators"].max()
        )

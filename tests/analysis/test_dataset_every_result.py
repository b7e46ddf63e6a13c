"""`gpuscale dataset` has one row per result `gpuscale scores` lists, each with its official
score, in every bundled round: Intel's `16-nodes-SPR-pytorch-open` BERT of v3.0 and v3.1
(31.06 min, logs that contradict their folder) had no row, and no note said so."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

from gpuscale.analysis.dataset import dataset
from gpuscale.cli import app
from gpuscale.tables import RoundTables

KEY = ["round", "org", "system_id", "benchmark"]


def _joined(results: pd.DataFrame, scores: pd.DataFrame) -> pd.DataFrame:
    """The results beside the scores, one row each (an outer join on the result's key)."""
    columns = [*KEY, "time_to_train_min"]
    return scores[columns].merge(
        results[columns],
        on=KEY,
        how="outer",
        suffixes=("_scores", "_dataset"),
        indicator=True,
        validate="one_to_one",
    )


def test_every_result_of_scores_is_a_row_with_its_score(bundled: RoundTables) -> None:
    results, runs = dataset(bundled)
    scores = bundled.scores
    assert results.groupby("round").size().to_dict() == scores.groupby("round").size().to_dict()
    joined = _joined(results, scores)
    assert (joined["_merge"] == "both").all(), joined[joined["_merge"] != "both"]
    assert joined["time_to_train_min_dataset"].to_numpy() == pytest.approx(
        joined["time_to_train_min_scores"].to_numpy(), nan_ok=True
    )
    assert len(runs) == len(bundled.runs)  # one row per result file
    intel = results[
        (results["system_id"] == "16-nodes-SPR-pytorch-open") & (results["benchmark"] == "bert")
    ]
    assert intel["round"].tolist() == ["v3.0", "v3.1"]
    assert intel["time_to_train_min"].round(2).tolist() == [31.06, 31.06]
    assert (intel["log_flag"] != "").all()  # why analyses leave it out, on its row


@pytest.mark.slow
def test_the_command_writes_every_result_into_a_folder_with_a_space(
    bundled: RoundTables, tmp_path: Path
) -> None:
    out = tmp_path / "my reports" / "ds"
    out.parent.mkdir()
    written = CliRunner().invoke(app, ["dataset", "--out", str(out)])
    assert written.exit_code == 0, written.output
    results = pd.read_parquet(out / "results.parquet")
    assert len(results) == len(bundled.scores)
    assert (_joined(results, bundled.scores)["_merge"] == "both").all()
    assert len(pd.read_csv(out / "results.csv")) == len(bundled.scores)

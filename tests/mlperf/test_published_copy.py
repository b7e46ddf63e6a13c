"""A copy of a bundled round read from a path (``training_results_v4.1 (1)``) is listed as
that round only where it scores as the bundled tables do: a copy with a log renamed away
was titled "official scores" with a score of its own; it is listed as the user's folder,
with a warning that says how many results differ and the first."""

from __future__ import annotations

import math
import shutil
from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

from gpuscale.cli import app
from gpuscale.mlperf import bundled, load
from gpuscale.mlperf.ingest import read_round
from gpuscale.mlperf.published_copy import differences

from .logbuilder import RoundBuilder

ROUND = "training_results_v4.1"


def _round(parent: Path) -> Path:
    rb = RoundBuilder(name=ROUND)
    rb.system("Acme", "box8").runs("Acme", "box8", "bert", [30, 31, 32, 33, 34, 35, 36, 37, 38, 39])
    rb.system("Acme", "box16").runs(
        "Acme", "box16", "bert", [20, 21, 22, 23, 24, 25, 26, 27, 28, 29]
    )
    return rb.write_dir(parent)


@pytest.fixture
def published(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> pd.DataFrame:
    """The small round's scores stand for the bundled v4.1's."""
    scores = read_round(_round(tmp_path / "published")).scores
    monkeypatch.setattr(load, "bundled_rounds", lambda: ["v4.1"])
    monkeypatch.setattr(bundled, "load_round", lambda name: read_round(_round(tmp_path / "again")))
    return scores


def test_a_copy_scoring_as_published_stays_the_round(tmp_path: Path, published) -> None:
    copy = shutil.copytree(_round(tmp_path / "src"), tmp_path / f"{ROUND} (1)")
    tables = load.read_paths([Path(copy)])
    assert set(tables.scores["round"]) == {"v4.1"}
    assert "not as published" not in set(tables.problems["kind"])


def test_a_copy_with_a_log_renamed_away_is_listed_as_the_users_folder(
    tmp_path: Path, published
) -> None:
    copy = Path(shutil.copytree(_round(tmp_path / "src"), tmp_path / f"{ROUND} (1)"))
    logs = copy / "Acme" / "results" / "box8" / "bert"
    fastest = min(logs.glob("result_*.txt"), key=lambda p: int(p.stem.split("_")[1]))
    fastest.rename(logs / "run_0.txt")  # no longer a run log the rules read
    tables = load.read_paths([copy])
    assert set(tables.scores["round"]) == {f"{ROUND} (1) (v4.1)"}
    said = tables.problems[tables.problems["kind"] == "not as published"]["message"]
    assert len(said) == 1 and said.iloc[0].startswith("1 result of the 2 it shares ")
    mine = tables.scores.set_index("system_id")["time_to_train_min"]
    theirs = published.set_index("system_id")["time_to_train_min"]
    assert mine["box16"] == theirs["box16"] and mine["box8"] != theirs["box8"]
    # the command titles it as the user's, and warns on stderr
    result = CliRunner().invoke(app, ["scores", str(copy)], env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    assert "official scores" not in result.stdout
    assert "warning: 1 result of the 2 it shares with the published v4.1" in result.stderr


def test_differences_are_shared_results_scored_otherwise() -> None:
    """s1 within 1e-9 and s3 unscored in both are the same; s2 moved and s6 scored only in
    the copy differ; s4 and s5, held by one side only, change no published score."""
    key = {"org": ["A"] * 5, "benchmark": ["bert"] * 5}
    read = pd.DataFrame(
        {
            **key,
            "system_id": ["s1", "s2", "s3", "s4", "s6"],
            "time_to_train_min": [10.0, 20.0, math.nan, 40.0, 60.0],
        }
    )
    kept = pd.DataFrame(
        {
            **key,
            "system_id": ["s1", "s2", "s3", "s5", "s6"],
            "time_to_train_min": [10.0 * (1 + 1e-12), 21.0, math.nan, 50.0, math.nan],
        }
    )
    found = differences(read, kept).set_index("system_id")
    assert sorted(found.index) == ["s2", "s6"]
    assert tuple(found.loc["s2"][["time_to_train_min", "published_min"]]) == (20.0, 21.0)
    assert found.loc["s6", "time_to_train_min"] == 60.0 and math.isnan(
        found.loc["s6", "published_min"]
    )

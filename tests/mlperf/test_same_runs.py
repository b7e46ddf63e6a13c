"""One result under two system names in a round (the same runs to the millisecond) is
one result: both rows stay in ``scores`` (the official tables list both), the second is
marked ``same_runs_as`` with a ``same runs`` problem row, and scores' default view, the
analysis, the dataset and the plan count it once."""

from __future__ import annotations

import csv
import io
from pathlib import Path

import pytest
from typer.testing import CliRunner

from gpuscale.analysis import scaling_table
from gpuscale.analysis.dataset import dataset
from gpuscale.cli import app
from gpuscale.mlperf.ingest import read_round
from gpuscale.planning.systems import measured
from gpuscale.tables import RoundTables

from .logbuilder import RoundBuilder

TIMES = [10.0, 12.0, 11.0, 13.0, 9.0, 10.5, 11.5, 12.5, 10.2, 11.1]


@pytest.fixture(scope="module")
def twin_round(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """box8 and box8-POWER hold the same runs; box8b (same count) other runs."""
    rb = RoundBuilder()
    for name in ("box8", "box8-POWER", "box8b"):
        rb.system("Acme", name)
    rb.runs("Acme", "box8", "bert", TIMES).runs("Acme", "box8-POWER", "bert", TIMES)
    rb.runs("Acme", "box8b", "bert", [t * 1.1 for t in TIMES])
    return rb.write_dir(tmp_path_factory.mktemp("twins"))


@pytest.fixture(scope="module")
def tables(twin_round: Path) -> RoundTables:
    return read_round(twin_round)


def test_the_second_name_is_marked_and_named_in_problems(tables: RoundTables) -> None:
    scores = tables.scores.set_index("system_id")
    assert len(scores) == 3  # both rows kept: the official tables list both
    assert scores.loc["box8-POWER", "same_runs_as"] == "Acme/box8"
    assert scores.loc["box8", "same_runs_as"] == scores.loc["box8b", "same_runs_as"] == ""
    same = tables.problems[tables.problems["kind"] == "same runs"]
    assert same["path"].tolist() == ["Acme/results/box8-POWER/bert"]
    assert "the same 10 runs" in same["message"].iloc[0]
    assert "Acme/box8" in same["message"].iloc[0]


def test_analysis_dataset_and_plan_count_it_once(tables: RoundTables) -> None:
    assert len(scaling_table(tables.scores, "bert")) == 2
    assert len(scaling_table(tables.scores, "bert", duplicates=True)) == 3
    results, runs = dataset(tables)
    assert sorted(results["system_id"]) == ["box8", "box8b"]
    assert set(runs["system_id"]) == {"box8", "box8b"} and len(runs) == 20
    assert results.attrs["same_runs_left_out"] == 1
    assert sorted(measured(tables.scores)["system_name"]) == ["box8", "box8b"]


def test_scores_lists_it_once_and_says_so(twin_round: Path) -> None:
    runner = CliRunner()
    shown = runner.invoke(app, ["scores", str(twin_round), "-f", "csv"])
    assert shown.exit_code == 0, shown.output
    listed = [r["system_id"] for r in csv.DictReader(io.StringIO(shown.stdout))]
    assert sorted(listed) == ["box8", "box8b"]
    assert "1 result listed once" in shown.stderr
    both = runner.invoke(app, ["scores", str(twin_round), "-f", "csv", "--duplicates"])
    assert both.exit_code == 0
    assert len(list(csv.DictReader(io.StringIO(both.stdout)))) == 3


def test_the_one_with_an_energy_result_is_kept() -> None:
    """Dell's v4.1 Llama2 pair: the -POWER row carries the energy, so it is kept."""
    from gpuscale import load_round

    v41 = load_round("v4.1")
    dell = v41.scores[v41.scores["system_id"].str.startswith("8xXE9680x8H100-SXM-80GB")]
    dell = dell[dell["workload"] == "llama2_70b_lora"].set_index("system_id")
    assert dell.loc["8xXE9680x8H100-SXM-80GB", "same_runs_as"] == (
        "Dell/8xXE9680x8H100-SXM-80GB-POWER"
    )
    assert dell.loc["8xXE9680x8H100-SXM-80GB-POWER", "same_runs_as"] == ""

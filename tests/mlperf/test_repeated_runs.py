"""One run published twice in a result (two result files with the same start and stop to
the millisecond): scored as MLCommons scores it, counted in ``repeated_runs``, said as a
``fewer runs`` problem and in a note where it is scored and analysed; analyses keep it,
as they keep a result scored from fewer result files."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from gpuscale.analysis import scaling_table
from gpuscale.cli import app
from gpuscale.mlperf.ingest import read_round
from gpuscale.tables import RoundTables

from .logbuilder import RoundBuilder

MINUTES = [10.0, 12.0, 11.0, 13.0, 9.0, 10.5, 11.5, 12.5, 10.2, 11.1]


@pytest.fixture(scope="module")
def twice(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """box8's result_9 is its result_0 again, byte for byte; box16 has ten distinct runs."""
    rb = RoundBuilder().system("Acme", "box8").system("Acme", "box16", nodes="2")
    rb.runs("Acme", "box8", "bert", MINUTES).runs("Acme", "box16", "bert", MINUTES)
    folder = "Acme/results/box8/bert"
    rb.raw(f"{folder}/result_9.txt", rb.files[f"{folder}/result_0.txt"])
    return rb.write_dir(tmp_path_factory.mktemp("twice"))


@pytest.fixture(scope="module")
def tables(twice: Path) -> RoundTables:
    return read_round(twice)


def test_a_run_published_twice_is_counted_and_said(tables: RoundTables, golden) -> None:
    scores = tables.scores.set_index("system_id")
    assert scores["repeated_runs"].to_dict() == {"box8": 1, "box16": 0}
    # scored as the official tool scores it: all ten files, 10.0 twice, the olympic mean
    # of the sorted times without the fastest (9.0) and the slowest (13.0)
    times = sorted([*MINUTES[:9], MINUTES[0]])
    assert scores.loc["box8", "time_to_train_min"] == pytest.approx(sum(times[1:-1]) / 8)
    said = tables.problems[tables.problems["message"].str.contains("repeat")]
    assert said["path"].tolist() == ["Acme/results/box8/bert"]
    assert said["kind"].tolist() == ["fewer runs"]
    assert "(9 distinct, 10 required)" in said["message"].iloc[0]
    golden.check("mlperf/repeated_runs", "problem", said["message"].iloc[0])


def test_distinct_runs_make_no_such_problem(tmp_path: Path) -> None:
    """Runs with their own start times (every fixture's, as every real run's) repeat
    nothing, whatever their times to train."""
    rb = RoundBuilder().system("Acme", "box").runs("Acme", "box", "bert", [10.0] * 10)
    tables = read_round(rb.write_dir(tmp_path))
    assert tables.scores["repeated_runs"].tolist() == [0]
    assert not tables.problems["message"].str.contains("repeat").any()


def test_scores_and_analyze_say_it_and_the_analysis_keeps_it(
    twice: Path, tables: RoundTables, golden
) -> None:
    assert set(scaling_table(tables.scores, "bert")["system_id"]) == {"box8", "box16"}
    runner = CliRunner()
    for command in ("scores", "analyze"):
        done = runner.invoke(app, [command, str(twice), "-f", "csv"])
        assert done.exit_code == 0, done.output
        notes = [n for n in done.stderr.splitlines() if "repeat" in n]
        assert len(notes) == 1 and "v4.1 Acme/box8 bert" in notes[0], done.stderr
        golden.check("mlperf/repeated_runs", f"{command}: note", notes[0])


def test_the_bundled_results_with_a_run_published_twice() -> None:
    """v4.0 Sustainable Metal Cloud's 1xSMC DLRM DCNv2 (AC and DC folders): ten files,
    five runs (``_06`` and ``_raw_06``...); v4.1 tinycorp's tinybox_green BERT: result_3
    and result_8. No other bundled result repeats a run."""
    from gpuscale import load_round

    scores = load_round().scores
    found = scores[scores["repeated_runs"] > 0]
    assert {
        (r.round, r.org, r.system_id, r.benchmark, r.repeated_runs)
        for r in found.itertuples(index=False)
    } == {
        ("v4.0", "smc-ac-power", "1xSMC-H100-SXM-80GB", "dlrm_dcnv2", 5),
        ("v4.0", "smc-dc-power", "1xSMC-H100-SXM-80GB", "dlrm_dcnv2", 5),
        ("v4.1", "tinycorp", "tinybox_green", "bert", 1),
    }
    # scored as MLCommons scores them (the official v4.1 table: 360.516 min)
    tiny = found[found["org"] == "tinycorp"].iloc[0]
    assert tiny["time_to_train_min"] == pytest.approx(360.5165, abs=1e-3)

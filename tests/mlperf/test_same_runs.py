"""One result under two system names in a round (the same runs to the millisecond) is
one result: both rows stay in ``scores`` (the official tables list both), the second is
marked ``same_runs_as`` with a ``same runs`` problem row; the analysis and the plan
count it once, and the dataset keeps both rows, the second marked."""

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
from gpuscale.tables.republished import counted_in_analyses, runs_counted_once

from .logbuilder import RoundBuilder

TIMES = [10.0, 12.0, 11.0, 13.0, 9.0, 10.5, 11.5, 12.5, 10.2, 11.1]
DELL = "8xXE9680x8H100-SXM-80GB"  # v4.1: its Llama2 runs are listed under a second name too
DELL_POWER = f"{DELL}-POWER"


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
    assert [p.split("/") for p in same["path"]] == [["Acme", "results", "box8-POWER", "bert"]]
    assert "the same 10 runs" in same["message"].iloc[0]
    assert "Acme/box8" in same["message"].iloc[0]


def test_analysis_dataset_and_plan_count_it_once(tables: RoundTables) -> None:
    assert len(scaling_table(tables.scores, "bert")) == 2
    assert len(scaling_table(tables.scores, "bert", duplicates=True)) == 3
    results, runs = dataset(tables)  # every result a row, the twin naming whose runs
    assert sorted(results["system_id"]) == ["box8", "box8-POWER", "box8b"]
    assert results.set_index("system_id").loc["box8-POWER", "same_runs_as"] == "Acme/box8"
    assert sorted(counted_in_analyses(results)["system_id"]) == ["box8", "box8b"]
    counted = runs_counted_once(runs, results)
    assert set(counted["system_id"]) == {"box8", "box8b"} and len(counted) == 20
    assert sorted(measured(tables.scores)["system_name"]) == ["box8", "box8b"]


def test_scores_lists_both_names_and_which_is_which(twin_round: Path, golden) -> None:
    """The official tables list both names: so does `scores`, by default, the twin named
    in `same_runs_as`; `--duplicates` lists only the pair."""
    runner = CliRunner()
    shown = runner.invoke(app, ["scores", str(twin_round), "-f", "csv"])
    assert shown.exit_code == 0, shown.output
    rows = {r["system_id"]: r for r in csv.DictReader(io.StringIO(shown.stdout))}
    assert sorted(rows) == ["box8", "box8-POWER", "box8b"]
    assert rows["box8-POWER"]["same_runs_as"] == "Acme/box8"
    assert rows["box8"]["same_runs_as"] == rows["box8b"]["same_runs_as"] == ""
    assert "1 result" in shown.stderr  # the twin, counted
    golden.check(
        "mlperf/same_runs", "scores: stderr", shown.stderr, paths={str(twin_round): "<round>"}
    )
    pair = runner.invoke(app, ["scores", str(twin_round), "-f", "csv", "--duplicates"])
    assert pair.exit_code == 0
    listed = sorted(r["system_id"] for r in csv.DictReader(io.StringIO(pair.stdout)))
    assert listed == ["box8", "box8-POWER"]


def test_the_plain_name_is_the_one_analysed() -> None:
    """Dell's v4.1 Llama2 pair: the plain name (the one the study names) is analysed, the
    -POWER row names it; both stay in scores and the energy row stays too."""
    from gpuscale import load_round
    from gpuscale.analysis.energy_per_result import energy_table

    v41 = load_round("v4.1")
    dell = v41.scores[v41.scores["system_id"].str.startswith(DELL)]
    same_runs_as = dell[dell["workload"] == "llama2_70b_lora"].set_index("system_id")[
        "same_runs_as"
    ]
    assert same_runs_as.to_dict() == {DELL: "", DELL_POWER: f"Dell/{DELL}"}
    analysed = set(scaling_table(v41.scores, "llama2_70b_lora")["system_id"])
    assert DELL in analysed and DELL_POWER not in analysed
    energy = energy_table(v41)
    assert DELL_POWER in set(energy["system_id"])


def test_every_power_measurement_of_shared_runs_is_an_energy_row() -> None:
    """v4.0 Sustainable Metal Cloud: the same Llama2 runs measured at the wall (AC) and
    at the node (DC) are two energy rows at each count, and a finding compares them."""
    from gpuscale import load_round
    from gpuscale.analysis.energy_per_result import energy_table, measured_twice

    v40 = load_round("v4.0")
    energy = energy_table(v40)
    llama = energy[(energy["workload"] == "llama2_70b_lora") & energy["org"].str.startswith("smc")]
    scopes = llama.groupby("accelerators")["power_scope"].apply(sorted).to_dict()
    assert scopes == {8: ["AC", "DC"], 64: ["AC", "DC"], 512: ["AC", "DC"]}
    pairs = measured_twice(energy)
    pairs = pairs[pairs["workload"] == "llama2_70b_lora"]
    assert pairs["accelerators"].tolist() == [8, 64, 512]
    assert (pairs["first_scope"] == "AC").all() and (pairs["second_scope"] == "DC").all()
    by_count = llama.pivot_table(index="accelerators", columns="power_scope", values="energy_kj")
    expected = (by_count["DC"] / by_count["AC"]).to_numpy()
    assert pairs["energy_ratio"].to_numpy() == pytest.approx(expected)
    assert (pairs["energy_ratio"] < 1).all()  # the DC point sees less than the wall


def test_energy_lists_the_ac_and_dc_measurements() -> None:
    runner = CliRunner()
    shown = runner.invoke(app, ["energy", "--round", "v4.0", "-b", "llama2_70b_lora", "-f", "csv"])
    assert shown.exit_code == 0, shown.output
    rows = list(csv.DictReader(io.StringIO(shown.stdout)))
    smc = [(r["accelerators"], r["power_scope"]) for r in rows if "SMC" in r["system_name"]]
    assert sorted(smc) == sorted((n, s) for n in ("8", "64", "512") for s in ("AC", "DC"))


def test_duplicates_lists_only_the_pairs_of_one_benchmark() -> None:
    """Dell's v4.1 64-GPU system ran other benchmarks under its plain name too: only the
    Llama2 pair is a pair, not its RetinaNet row."""
    runner = CliRunner()
    shown = runner.invoke(app, ["scores", "--round", "v4.1", "--duplicates", "-f", "csv"])
    rows = list(csv.DictReader(io.StringIO(shown.stdout)))
    assert [(r["system_id"], r["benchmark"]) for r in rows] == [
        (DELL, "llama2_70b_lora"),
        (DELL_POWER, "llama2_70b_lora"),
    ]

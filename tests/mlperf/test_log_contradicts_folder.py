"""BERT logs copied into a `retinanet` folder: scored as MLCommons scores the folder
(its official table would list it), flagged on the row with why, and kept out of the
analysis, the plan and the energy table, as implausible samples are; the dataset keeps its
row, flagged, as it keeps every result."""

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

from .logbuilder import result_log
from .synthetic_rounds import ruleset_round

pytest.importorskip("mlperf_logging")
runner = CliRunner()
VIEW = "mlperf/log_contradicts_folder"
COPIED = "gb200_n1"  # its retinanet folder holds BERT logs


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    rb = ruleset_round("5.0.0", ["retinanet"])
    for rel in [r for r in rb.files if f"/{COPIED}/retinanet/" in r]:
        del rb.files[rel]
    for i in range(10):
        log = result_log(benchmark="bert", ruleset="5.0.0", minutes=3 + 0.1 * i, seed=i)
        rb.raw(f"Acme/results/{COPIED}/retinanet/result_{i}.txt", log)
    return rb.write_dir(tmp_path_factory.mktemp("copied"))


@pytest.fixture(scope="module")
def tables(root: Path) -> RoundTables:
    return read_round(root)


def test_scored_and_flagged_with_the_reason(tables: RoundTables, golden) -> None:
    row = tables.scores.set_index("system_id").loc[COPIED]
    assert row["time_to_train_min"] == pytest.approx(3.45, rel=0.05)  # scored, as MLCommons
    assert "10 of 10" in row["log_flag"] and "'bert'" in row["log_flag"]
    golden.check(VIEW, "log_flag of 10 bert logs in a retinanet folder", row["log_flag"])
    others = tables.scores[tables.scores["system_id"] != COPIED]
    assert (others["log_flag"] == "").all()


def test_kept_out_of_every_analysis(tables: RoundTables) -> None:
    from gpuscale.analysis.energy_per_result import energy_table

    assert COPIED not in set(scaling_table(tables.scores, "retinanet")["system_id"])
    assert COPIED not in set(
        scaling_table(tables.scores, "retinanet", duplicates=True)["system_id"]
    )
    assert len(scaling_table(tables.scores, "retinanet")) == 3
    assert COPIED not in set(measured(tables.scores)["system_name"])
    results, runs = dataset(tables)  # its row and runs kept, the flag saying why
    row = results.set_index("system_id").loc[COPIED]
    assert row["log_flag"] == tables.scores.set_index("system_id").loc[COPIED, "log_flag"]
    assert row["time_to_train_min"] == pytest.approx(3.45, rel=0.05)
    assert (runs["system_id"] == COPIED).sum() == 10
    assert COPIED not in set(counted_in_analyses(results)["system_id"])
    assert COPIED not in set(runs_counted_once(runs, results)["system_id"])
    assert COPIED not in set(energy_table(tables)["system_id"])


def test_scores_lists_it_and_analyze_says_why_it_is_left_out(root: Path, golden) -> None:
    shown = runner.invoke(app, ["scores", str(root), "-f", "csv"])
    rows = {r["system_id"]: r for r in csv.DictReader(io.StringIO(shown.stdout))}
    assert rows[COPIED]["time_to_train_min"] and rows[COPIED]["log_flag"]
    analysed = runner.invoke(app, ["analyze", str(root), "-b", "retinanet", "-f", "csv"])
    assert analysed.exit_code == 0, analysed.output
    listed = {r["system_id"] for r in csv.DictReader(io.StringIO(analysed.stdout))}
    assert COPIED not in listed and len(listed) == 3
    said = " ".join(analysed.stderr.split())
    assert f"Acme/{COPIED}" in said
    golden.check(VIEW, "analyze: stderr", said, paths={str(root): "<round>"})


def test_a_workload_of_flagged_results_only_is_said_so(tmp_path: Path, golden) -> None:
    """Every RetinaNet result flagged: analyze and plan say why there is nothing (the
    flag), not that no system matches nor that the workload is not in the rounds loaded."""
    rb = ruleset_round("5.0.0", ["bert"])
    for i in range(10):
        log = result_log(benchmark="bert", ruleset="5.0.0", minutes=3 + 0.1 * i, seed=i)
        rb.raw(f"Acme/results/{COPIED}/retinanet/result_{i}.txt", log)
    only = rb.write_dir(tmp_path)
    analysed = runner.invoke(app, ["analyze", str(only), "-b", "retinanet"])
    assert analysed.exit_code == 2
    assert "log_flag" in analysed.stderr and "rounds loaded" not in analysed.stderr
    planned = runner.invoke(app, ["plan", str(only), "-w", "retinanet", "-a", "GB200", "-n", "8"])
    assert planned.exit_code == 2
    assert "log_flag" in planned.stderr and "rounds loaded" not in planned.stderr
    where = {str(only): "<round>"}
    golden.check(VIEW, "analyze of flagged results only", analysed.stderr, paths=where)
    golden.check(VIEW, "plan of flagged results only", planned.stderr, paths=where)


def test_the_plan_says_which_result_it_left_out(root: Path) -> None:
    from gpuscale.planning import PlanRequest, plan_for

    scores = read_round(root).scores
    result = plan_for(PlanRequest(workload="retinanet", accelerator="GB200", devices=(16,)), scores)
    assert any(f"Acme/{COPIED}" in note for note in result.notes)
    assert all(s["system"] != COPIED for s in result.systems)

"""A user's results folder where one system's BERT runs lie in ``BERT``, the others' in
``bert``: the two folders are two benchmarks of the scores table, and each is still
asked for by its own name. ``-b bert`` analyses the ``bert`` systems, and ``analyze`` of
the whole round runs, where both were refused as "ambiguous: BERT, bert; be more
specific" with no more specific name to give."""

from __future__ import annotations

import csv
import io
from pathlib import Path

import pytest
from typer.testing import CliRunner

from gpuscale.cli import app
from gpuscale.names import UnknownNameError, resolve_workloads

from .synthetic_rounds import ruleset_round

pytest.importorskip("mlperf_logging")
runner = CliRunner()
MOVED = "gb200_n1"  # its bert runs lie in a folder named BERT


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    rb = ruleset_round("5.0.0", ["bert"])
    for rel in [r for r in rb.files if f"/{MOVED}/bert/" in r]:
        rb.files[rel.replace(f"/{MOVED}/bert/", f"/{MOVED}/BERT/")] = rb.files.pop(rel)
    return rb.write_dir(tmp_path_factory.mktemp("case"))


def test_each_folder_is_named_by_its_own_name() -> None:
    folders = ["bert", "BERT", "ssd"]
    assert resolve_workloads(["bert"], folders) == ["bert"]
    assert resolve_workloads(["BERT"], folders) == ["BERT"]
    assert resolve_workloads(["RetinaNet"], folders) == ["retinanet"]
    with pytest.raises(UnknownNameError, match="ambiguous: BERT, bert"):
        resolve_workloads(["Bert"], folders)  # neither name as written


def test_analyze_reads_the_bert_folder_by_its_name(root: Path) -> None:
    scored = runner.invoke(app, ["scores", str(root), "-f", "csv"])
    rows = list(csv.DictReader(io.StringIO(scored.stdout)))
    assert {(r["system_id"], r["benchmark"]) for r in rows if r["time_to_train_min"]} == {
        (MOVED, "BERT"),
        *((r["system_id"], "bert") for r in rows if r["system_id"] != MOVED),
    }
    analysed = runner.invoke(app, ["analyze", str(root), "-b", "bert", "-f", "csv"])
    assert analysed.exit_code == 0, analysed.output
    listed = {r["system_id"] for r in csv.DictReader(io.StringIO(analysed.stdout))}
    assert listed == {r["system_id"] for r in rows} - {MOVED} and len(listed) == 3


def test_analyze_of_the_whole_round_runs(root: Path) -> None:
    analysed = runner.invoke(app, ["analyze", str(root), "-f", "csv"])
    assert analysed.exit_code == 0, analysed.output
    listed = {r["system_id"] for r in csv.DictReader(io.StringIO(analysed.stdout))}
    assert len(listed) == 3 and MOVED not in listed
    assert "ambiguous" not in analysed.stderr

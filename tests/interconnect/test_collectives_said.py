"""What a finished `gpuscale collectives` run says beside its verdict: the results file's
lines it could not read, and the file the sweep was appended to (a real sweep of two gloo
processes, 1 KiB, one call per size)."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from gpuscale.cli import app

NARROW = {"COLUMNS": "70"}  # a sweep table drops columns
TINY = ["--backend", "gloo", "--nproc", "2", "--max-bytes", "1K", "--iters", "1"]


@pytest.mark.slow
def test_a_sweep_says_the_lines_it_skipped_and_where_it_was_appended(tmp_path: Path) -> None:
    """A user walk: a file whose last line was cut short was read (its problems collected)
    and never said, and a run that succeeded never said which file it appended to."""
    pytest.importorskip("torch")
    out = tmp_path / "coll.jsonl"
    header = {"schema": "gpuscale.collectives/2", "kind": "sweep", "sweep_id": "old"}
    out.write_text(json.dumps(header) + "\n" + '{"schema": "gpuscale.collectives/2", "ki\n')
    result = CliRunner().invoke(app, ["collectives", *TINY, "--warmup", "0", "--out", str(out)])
    assert result.exit_code == 0, result.output
    said = " ".join(result.output.split())  # folded at the terminal's width
    assert f"warning: {out}:2: not a JSON record" in said, said
    assert said.count("not a JSON record") == 1
    tail = result.output.strip().splitlines()[-1]
    assert tail.startswith("sweep ") and tail.endswith(f"result rows appended to {out}"), tail


@pytest.mark.slow
def test_json_and_csv_write_the_verdict_records_alone_on_stdout(tmp_path: Path) -> None:
    """``-f json``: stdout one document, each verdict's record whole (what it was judged
    against, the change since the sweep before); ``-f csv``: a row per collective; the
    sweep's own words (the file appended to) on stderr, no nccl-tests table."""
    pytest.importorskip("torch")
    out, ops = tmp_path / "coll.jsonl", ["--ops", "all_reduce,broadcast", "--warmup", "0"]
    runner = CliRunner()
    result = runner.invoke(app, ["collectives", *TINY, *ops, "--out", str(out), "-f", "json"])
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    assert [v["op"] for v in doc["verdicts"]] == ["all_reduce", "broadcast"]
    first = doc["verdicts"][0]
    assert first["verdict"] == "no reference" and first["reference"].startswith("CPU processes")
    assert first["change"] is None and doc["not_run"] == [] and doc["sweep_id"]
    assert f"result rows appended to {out}" in result.stderr
    result = runner.invoke(app, ["collectives", *TINY, *ops, "--out", str(out), "-f", "csv"])
    assert result.exit_code == 0, result.output
    rows = list(csv.DictReader(io.StringIO(result.stdout)))
    assert [r["op"] for r in rows] == ["all_reduce", "broadcast"]
    # compared with the sweep before (its id), or not for this one's single call per size
    changes = {
        (r["change_kind"], r["change_against"], r["change_too_few"], r["change_iters"])
        for r in rows
    }
    assert changes == {("too few calls", doc["sweep_id"], "latest", "1")}
    # the terminal's sweep tables: their dropped columns are in the file, not in -f csv
    table = runner.invoke(app, ["collectives", *TINY, *ops, "--out", str(out)], env=NARROW)
    said = " ".join(table.stdout.split())
    assert table.exit_code == 0 and "(not shown, for width: " in said, table.output
    assert "its row in the --out file)" in said and "-f csv" not in said

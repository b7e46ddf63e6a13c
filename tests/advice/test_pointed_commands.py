"""A sentence that points at a command for a column names a command that prints it (a new
user's walk: the advice's weak-evidence warning said the evidence_notes were in
`gpuscale analyze --bench FILE -f csv`, whose 20 columns leave them out)."""

from __future__ import annotations

import csv
import io
import json
import re
import shlex
import shutil
from pathlib import Path

from typer.testing import CliRunner

import gpuscale
from gpuscale.bench.evidence import labels
from gpuscale.bench.results import bench_table, read_results
from gpuscale.cli import app

TESTS = Path(__file__).parents[1]


def _run(command: list[str]) -> list[dict[str, str]]:
    """``command`` (``gpuscale ...``) run in-process: its CSV on stdout, as rows."""
    assert command[0] == "gpuscale"
    result = CliRunner().invoke(app, command[1:])
    assert result.exit_code == 0, result.output
    return list(csv.DictReader(io.StringIO(result.stdout)))


def test_the_weak_evidence_warning_names_a_command_that_prints_the_notes(
    tmp_path: Path,
) -> None:
    path = tmp_path / "my results.jsonl"  # a name the shell must quote
    shutil.copy(TESTS / "advice" / "cpu_tiny_model_gloo.jsonl", path)
    advice = gpuscale.advise(bench=path)
    (warning,) = [w for w in advice.decision.warnings if w.startswith("WARNING: weak evidence")]
    # the command is said in full under --explain (the default view's warning is short)
    (full,) = [line for line in advice.explanation if line.startswith("Weak evidence: ")]
    (command,) = re.findall(r"`(gpuscale analyze [^`]*)`", full)
    # a FILE placeholder stands for the results file
    rows = _run([str(path) if word == "FILE" else word for word in shlex.split(command)])
    assert rows and "evidence_notes" in rows[0]
    assert any(r["evidence_notes"] for r in rows)
    said = warning[warning.index("(") :]  # the kinds the warning names: the weak runs'
    table = bench_table(read_results(path)[0])
    kinds = labels(table.loc[table["evidence"] == "weak", "evidence_kinds"])
    assert kinds and all(kind in said for kind in kinds)


def test_the_power_sentence_names_where_energy_source_is_printed() -> None:
    path = TESTS / "report" / "h100_paths.jsonl"  # NVML-measured watts at N = 1
    advice = gpuscale.advise(bench=path)
    (power,) = [line for line in advice.explanation if line.startswith("Power: measured")]
    assert "the energy_source column of -f csv" in power
    rows = _run(["gpuscale", "advise", "--bench", str(path), "-f", "csv"])
    assert rows and all(r["energy_source"] for r in rows)


def test_the_bench_tables_width_note_says_where_the_other_columns_are() -> None:
    """The note under a narrow bench table said only "-f csv prints these 20 columns":
    evidence_notes is not among them; it says how to reach every column, and does."""
    path = str(TESTS / "advice" / "cpu_tiny_model_gloo.jsonl")
    # the whole table is --explain's (the default answers with a few columns)
    asked = ["analyze", "--bench", path, "--explain"]
    shown = CliRunner().invoke(app, asked, env={"COLUMNS": "100"})
    assert shown.exit_code == 0, shown.output
    # under a table (columns dropped for width) or a record a line per column (none dropped)
    (note,) = [line for line in shown.output.splitlines() if "--columns takes any" in line]
    counted = int(re.search(r"--columns takes any of all (\d+), evidence_notes", note).group(1))
    whole = CliRunner().invoke(app, ["analyze", "--bench", path, "-f", "json"])
    runs = json.loads(whole.stdout)["bench"]["runs"]
    assert all(len(run) == counted and "evidence_notes" in run for run in runs)
    chosen = _run(
        ["gpuscale", "analyze", "--bench", path, "--columns", "evidence_notes", "-f", "csv"]
    )
    assert chosen and list(chosen[0]) == ["evidence_notes"]

"""A `gpuscale bench` or `collectives` results file given where a round goes (``gpuscale
analyze results.jsonl``) is named for what it is and the option that reads it, for every
command that reads rounds; it was "not a directory or a .tar/.tar.gz/.tar.xz/.zip
archive", with no word of --bench."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from gpuscale.cli import app

from ..builders import sweep_rows, write_jsonl

runner = CliRunner()
BENCH = Path(__file__).parents[1] / "report" / "h100_paths.jsonl"
COMMANDS = [["plan", "-a", "H100", "-w", "bert"], ["analyze", "-b", "bert"], ["report"], ["scores"]]


@pytest.mark.parametrize("command", [*COMMANDS, ["ingest"]])
def test_a_bench_file_given_as_a_round_is_said_to_go_to_bench(command, tmp_path) -> None:
    path = tmp_path / "my results.jsonl"  # a path with a space: quoted to paste
    shutil.copy(BENCH, path)
    result = runner.invoke(app, [*command, str(path)])
    assert result.exit_code == 2, result.output
    said = (
        f"'{path}' holds `gpuscale bench` results, not an MLPerf round: give it as --bench '{path}'"
    )
    assert said in result.stderr and "Traceback" not in result.output


@pytest.mark.parametrize("command", COMMANDS)
def test_a_collectives_file_given_as_a_round_is_said_to_go_to_advise(command, tmp_path) -> None:
    rows = [{"schema": "gpuscale.collectives/2", **r} for r in sweep_rows(10.0, 5.0)]
    path = write_jsonl(tmp_path / "sweep.jsonl", rows)
    result = runner.invoke(app, [*command, str(path)])
    assert result.exit_code == 2, result.output
    assert f"give it as --collectives {path} to gpuscale advise" in result.stderr

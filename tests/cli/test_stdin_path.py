"""A path of ``-`` (standard input in many tools) names no file here: every command that
reads a file says so, rather than "no such file (`gpuscale bench --out -` writes one)",
which would write a file named ``-``."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

import gpuscale.cli


@pytest.mark.parametrize(
    "args",
    [
        ["advise", "--bench", "-"],
        ["analyze", "--bench", "-"],
        ["topo", "--file", "-"],
        ["advise", "--params", "7M", "--step-ms", "2", "--batch", "8", "--collectives", "-"],
    ],
    ids=["advise", "analyze", "topo", "collectives"],
)
def test_a_path_of_dash_is_said_to_be_no_stdin(args: list[str]) -> None:
    result = CliRunner().invoke(gpuscale.cli.app, args)
    assert result.exit_code == 2, result.output
    (said,) = result.stderr.strip().splitlines()
    assert said.startswith("error: -: standard input is not read") and "writes one" not in said
    assert result.stdout == ""

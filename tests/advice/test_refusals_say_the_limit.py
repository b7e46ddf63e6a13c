"""Two refusals of advise that said what was wrong but not what is right: a global batch
one device cannot take gives the most it takes (its largest per-device batch x the most
accumulation steps), and a --collectives file holding no collectives measurement says
what such a file holds and the command that writes it (``gpuscale collectives --out``,
an option that command has)."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from gpuscale.advice.calibration import Run
from gpuscale.cli import app

ASKED = ("--params", "7e9", "--step-ms", "900")


def _refused(*args: str) -> str:
    result = CliRunner().invoke(app, ["advise", *ASKED, *args], env={"COLUMNS": "200"})
    assert result.exit_code != 0
    assert "Traceback" not in result.output
    return " ".join(result.output.split())


def test_global_batch_over_the_limit_gives_the_limit(golden) -> None:
    said = _refused("--batch", "32", "--global-batch", "65536")
    most = 32 * Run(batch=32).max_accum  # the per-device batch given x the most micro-steps
    assert most == 2048
    assert f"at most {most:,}" in said and "65,536" in said
    golden.check("advice/refusals", "advise --global-batch over one device's limit", said)


def test_global_batch_at_the_limit_is_advised() -> None:
    args = ["advise", *ASKED, "--batch", "32", "--global-batch", "2048", "-f", "json"]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output


def test_run_refuses_a_global_batch_over_its_limit() -> None:
    with pytest.raises(ValueError, match="at most 256"):
        Run(batch=8, max_accum=4, max_batch=64, global_batch=257)


def test_not_a_collectives_file_says_what_it_should_hold(tmp_path: Path, golden) -> None:
    path = tmp_path / "notes.txt"
    path.write_text("hello\n")
    said = _refused("--batch", "32", "--collectives", str(path))
    assert "gpuscale collectives --out FILE" in said and "all_reduce" in said
    golden.check(
        "advice/refusals",
        "advise --collectives on a file of no measurement",
        said,
        paths={str(tmp_path): "<tmp>"},
    )
    # the command named has the option named
    help_text = CliRunner().invoke(app, ["collectives", "--help"], env={"COLUMNS": "200"})
    assert "--out" in help_text.output

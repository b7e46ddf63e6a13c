"""What the CLI prints does not depend on the terminal's width or on when rich reads it
(no sentence split at the width, no table cut though COLUMNS=400)."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from gpuscale.cli import app
from gpuscale.cli.output import PIPED_WIDTH, out

runner = CliRunner()


def test_the_width_is_read_when_printing(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("COLUMNS", raising=False)
    assert not out.is_terminal and out.width == PIPED_WIDTH
    monkeypatch.setenv("COLUMNS", "400")  # after gpuscale was imported
    assert out.width == 400


@pytest.mark.parametrize("columns", ["40", "97", "400"])
def test_a_sentence_is_never_split_at_the_width(columns: str) -> None:
    base = [
        "advise",
        "--explain",
        "--params",
        "7M",
        "--step-ms",
        "20",
        "--interconnect",
        "pcie-phb",
    ]
    result = runner.invoke(
        app, [*base, "--workload", "bert", "--ruleset", "4.1"], env={"COLUMNS": columns}
    )
    assert result.exit_code == 0, result.output
    line = next(x for x in result.stdout.splitlines() if "ruleset 4.1.0" in x)
    assert line.startswith("- ") and line.endswith(").")  # the whole sentence, one line

"""``report --out`` names the report's folder (its index.html and the figure files it
links): a new user's ``--out x.html`` made a folder named x.html; a page's name is refused
in one line before any work, nothing written, the folder to give named."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from gpuscale.cli import app
from gpuscale.report.request import ReportRequest
from gpuscale.tables.requests import FieldError


@pytest.mark.parametrize("name", ["x.html", "x.HTM"])
def test_a_page_name_is_refused_as_out(tmp_path: Path, name: str) -> None:
    with pytest.raises(FieldError) as refused:
        ReportRequest(out=tmp_path / name)
    assert (refused.value.field, refused.value.value) == ("out", tmp_path / name)
    assert f"out={str(tmp_path / 'x')!r}" in str(refused.value)  # the folder to give
    assert ReportRequest(out=tmp_path / "x").out == tmp_path / "x"


def test_the_command_refuses_it_before_any_work_and_writes_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(app, ["report", "--out", "reports/x.html"])
    assert result.exit_code == 2
    assert list(tmp_path.iterdir()) == []
    said = [line for line in result.output.splitlines() if line.strip()]
    assert len(said) == 1 and said[0].endswith("--out reports/x")


def test_report_advise_takes_every_strategy_advise_takes(tmp_path: Path) -> None:
    """`report --advise --strategy` and `advise --strategy` take the same strategies."""
    from gpuscale.hardware.memory import STRATEGIES
    from gpuscale.tables.refusals import FieldError

    for strategy in STRATEGIES:
        asked = ReportRequest(out=tmp_path / "r", advise=True, strategy=strategy)
        assert asked.strategy == strategy
    with pytest.raises(FieldError) as refused:
        ReportRequest(out=tmp_path / "r", advise=True, strategy="zero3")
    assert refused.value.field == "strategy"

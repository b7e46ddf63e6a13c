"""What a user sees where nothing would be said: ``report --open`` with no browser to open
it says so (not exit 0 in silence), and ``print(gpuscale.advise(...))`` prints the advice,
not the dataclass (~10 KB)."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

import gpuscale
from gpuscale.cli import app


def test_open_says_so_when_no_browser_opens_the_report(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("webbrowser.open", lambda _uri: False)
    out = tmp_path / "rep"
    result = CliRunner().invoke(app, ["report", "-b", "bert", "--out", str(out), "--open"])
    assert result.exit_code == 0, result.output
    assert f"no browser found to open it; open {out / 'index.html'} yourself" in result.stderr


def test_printing_an_advice_says_the_advice() -> None:
    advice = gpuscale.advise(params=7e6, step_ms=2, batch=64, link="pcie-phb")
    shown = str(advice)
    assert shown.splitlines() == [f"- {line}" for line in advice.explanation]
    assert "Advice(" not in shown and "DataFrame" not in shown
    # a notebook's repr: the answer and the fields to read, each still on the object
    assert repr(advice).startswith("Advice:") and ".predictions" in repr(advice)
    assert len(repr(advice)) < 1000 and advice.predictions is not None

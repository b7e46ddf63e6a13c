"""Slips a new user types, each refused alike on every command, in one line, before
anything is read: a value typed empty (``topo --gpu ''`` listed the catalogue, ``--bench
''`` read ``.``), an option typed as a Python keyword (``step_ms=10``: offered as
``--step-ms 10``). Run from a folder with a space in its name, as a user would."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import typer.main
from typer.testing import CliRunner

from gpuscale.cli import app

COMMANDS = typer.main.get_command(app).commands  # type: ignore[attr-defined]


def _valued(name: str) -> list[tuple[str, str]]:
    """(field, option) of each option of a command that takes a value."""
    params = COMMANDS[name].params
    return [
        (p.name, p.opts[0])
        for p in params
        if p.param_type_name == "option" and not p.is_flag and not p.hidden
    ]


def _one_line(args: list[str]) -> str:
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 2, (args, result.output)
    assert "Traceback" not in result.output
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), (args, result.stderr)
    return lines[0]


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_every_option_and_argument_refuses_an_empty_value_alike(
    name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    here = tmp_path / "my work"
    here.mkdir()
    monkeypatch.chdir(here)
    given = [[option, ""] for _, option in _valued(name)]
    if any(p.param_type_name == "argument" for p in COMMANDS[name].params):
        given.append([""])
    assert given, name
    for args in given:
        line = _one_line([name, *args])
        shown = args[0] if len(args) == 2 else "PATHS"
        assert line == f"error: {shown}: empty: give a value, or leave it out", line


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_an_option_typed_as_a_keyword_is_offered_as_the_option(
    name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    here = tmp_path / "my work"
    here.mkdir()
    monkeypatch.chdir(here)
    field, option = _valued(name)[-1]
    line = _one_line([name, f"{field}=7"])
    assert line.startswith(f"error: {field}=7: "), line
    assert re.findall(r"'(--[a-z-]+) 7'", line) == [option], line
    assert CliRunner().invoke(app, [name, f"{field}=7", "--help"]).exit_code == 0  # help wins


@pytest.mark.parametrize(
    ("args", "offered"),
    [
        (["advise", "--params", "7b", "--step_ms=10"], "--step-ms 10"),
        (["plan", "-w", "bert", "--price_per_device_hour=2"], "--price 2"),
    ],
)
def test_an_unknown_option_with_its_value_is_offered_with_it(args: list[str], offered: str) -> None:
    line = _one_line(args)
    assert f"'{offered}'" in line and "no such option" in line, line

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


@pytest.fixture
def here(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A working folder with a space in its name, the current one for the test."""
    folder = tmp_path / "my work"
    folder.mkdir()
    monkeypatch.chdir(folder)
    return folder


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
def test_every_option_and_argument_refuses_an_empty_value_alike(name: str, here: Path) -> None:
    given = [[option, ""] for _, option in _valued(name)]
    if any(p.param_type_name == "argument" for p in COMMANDS[name].params):
        given.append([""])
    assert given, name
    required = {"plan": {"--workload", "--accelerator"}}.get(name, set())
    for args in given:
        line = _one_line([name, *args])
        shown = args[0] if len(args) == 2 else "PATHS"
        # "leave it out" only where the command runs without the option
        told = (
            "give a value (it is required)"
            if shown in required
            else "give a value, or leave it out"
        )
        assert line == f"error: {shown}: empty: {told}", line


@pytest.mark.parametrize(("option", "other"), [("--workload", "-a"), ("--accelerator", "-w")])
def test_an_empty_required_option_is_not_offered_as_one_to_leave_out(
    option: str, other: str, here: Path
) -> None:
    line = _one_line(["plan", option, "", other, "bert" if other == "-w" else "H100"])
    assert line == f"error: {option}: empty: give a value (it is required)", line
    left_out = _one_line(["plan", other, "bert" if other == "-w" else "H100"])
    assert left_out.startswith(f"error: {option}: required ("), left_out  # as left out: refused


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_an_option_typed_as_a_keyword_is_offered_as_the_option(name: str, here: Path) -> None:
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


@pytest.mark.parametrize(
    "args",
    [
        ["advise", "--params", "7b", "--step-ms", "100", "--explain=1"],
        ["report", "--png=1"],
        ["report", "--open=yes"],
        ["scores", "--all-columns=true"],
    ],
)
def test_a_flag_given_a_value_is_told_it_takes_none(args: list[str]) -> None:
    flag = args[-1].split("=")[0]
    assert _one_line(args) == f"error: {flag} takes no value: give {flag} alone"


def test_a_yes_no_flag_given_a_value_names_both_spellings() -> None:
    line = _one_line(["report", "--no-cache=0"])
    assert line == "error: --no-cache takes no value: give --cache or --no-cache alone"


@pytest.mark.parametrize(
    "args",
    [
        ["advise", "--step_ms=10", "--help"],
        ["advise", "--help", "--explain=1"],
        ["report", "--png=1", "--open=yes", "--help"],
    ],
)
def test_help_beside_a_slip_the_parser_refuses_is_shown(args: list[str]) -> None:
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0 and "Usage:" in result.stdout, result.output
    assert "error:" not in result.output


@pytest.mark.parametrize(
    "name",
    sorted(
        n for n, c in COMMANDS.items() if all(p.param_type_name != "argument" for p in c.params)
    ),
)
def test_an_empty_word_where_a_command_takes_no_argument_is_refused_as_empty(
    name: str, here: Path
) -> None:
    line = _one_line([name, ""])
    assert line.startswith("error: '': empty: give a value, or leave it out ("), line
    assert line.endswith(f" {name} takes no arguments)"), line


def test_a_path_that_is_none_is_refused_before_the_bench_table(here: Path) -> None:
    bench = Path(__file__).parents[1] / "report" / "h100_paths.jsonl"
    (here / "results.jsonl").write_text(bench.read_text())
    result = CliRunner().invoke(app, ["analyze", "v5.0", "--bench", "results.jsonl"])
    assert result.exit_code == 2 and result.stdout == "", result.output
    assert result.stderr.splitlines() == [
        "error: v5.0: no such file or directory (a round? give it with --round v5.0)"
    ]


@pytest.mark.parametrize(
    ("args", "offered"),
    [
        (["plan", "-n", "8", "-n", "16"], "-n 8,16"),
        (
            ["plan", "-w", "bert", "--devices=8", "-n", "16,32", "--devices", "64"],
            "--devices 8,16,32,64",
        ),
        (["scores", "--columns", "a", "--columns", "b"], "--columns a,b"),
        (["bench", "--nproc", "1", "--nproc", "2"], "--nproc 1,2"),
        (["collectives", "--nproc", "1", "--nproc", "2"], None),  # one number: no list
    ],
)
def test_a_list_option_given_twice_is_offered_as_one_list(
    args: list[str], offered: str | None
) -> None:
    line = _one_line(args)
    assert "given twice" in line or "given 3 times" in line, line
    if offered is None:
        assert "a list" not in line, line
    else:
        assert line.endswith(f"(a list in one value: '{offered}')"), line

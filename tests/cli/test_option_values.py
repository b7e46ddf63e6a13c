"""Every numeric option of every command, given a value it refuses, gets one specific line
naming the option, the value and what it must be: never the option's whole help, a field
name the command line does not have, another option's name, a traceback or a hang."""

from __future__ import annotations

import pytest
import typer.main
from typer.testing import CliRunner

from gpuscale.cli import app

# What each command needs besides the option tried, so only that option is refused.
BASE = {
    "analyze": ["-b", "bert"],
    "advise": ["--params", "7M", "--step-ms", "20"],
    "plan": ["-w", "bert", "-a", "H100"],
    "bench": ["--backend", "gloo", "--nproc", "1", "--models", "mlp-0.2m"],
    "collectives": ["--backend", "gloo", "--nproc", "2"],
    "report": [],
}
# Options that take numbers as text (sizes, byte sizes, counts, lists of counts).
NUMBERS_AS_TEXT = {
    "--params",
    "--flops-per-sample",
    "--noise-scale",
    "--samples",
    "--max-params",
    "--min-params",
    "--memory-limit",
    "--min-bytes",
    "--max-bytes",
    "--nproc",
    "--devices",
}


def numeric_options() -> list[tuple[str, str, str]]:
    """(command, option, its help) of every option taking a number."""
    found = []
    for name, command in typer.main.get_command(app).commands.items():
        for param in command.params:
            if param.param_type_name != "option" or param.is_flag or name not in BASE:
                continue
            option = max(param.opts, key=len)
            kind = param.metavar or str(param.bare_type())  # a number taken as text: <int>
            if any(t in kind for t in ("int", "float")) or option in NUMBERS_AS_TEXT:
                found.append((name, option, param.help or ""))
    return found


OPTIONS = numeric_options()


def _given(command: str, option: str, value: str, tmp_path):  # type: ignore[no-untyped-def]
    """``command`` run with what it needs and ``option`` given ``value``."""
    if command in ("bench", "collectives"):
        pytest.importorskip("torch")
    args = list(BASE[command])
    if option in args:  # the option tried replaces the base's value
        at = args.index(option)
        del args[at : at + 2]
    if command in ("bench", "collectives", "report"):
        args += ["--out", str(tmp_path / "out")]
    given = [f"{option}={value}"] if option.startswith("--") else [option, value]
    return CliRunner().invoke(app, [command, *args, *given])


def test_the_options_found_are_every_commands_numbers() -> None:
    commands = {c for c, _, _ in OPTIONS}
    assert commands == set(BASE)
    assert len(OPTIONS) > 40


@pytest.mark.parametrize(("command", "option", "help_text"), OPTIONS, ids=lambda x: str(x)[:24])
def test_a_refused_value_is_one_line_naming_the_option(
    command: str, option: str, help_text: str, tmp_path
) -> None:
    result = _given(command, option, "-5", tmp_path)
    said = result.stderr.strip()
    assert result.exit_code == 2, (result.exit_code, result.output)
    assert result.exception is None or isinstance(result.exception, SystemExit), said
    assert "Traceback" not in said
    lines = said.splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"error: {option} -5"), said
    assert "_" not in lines[0].split(":")[1], said  # an option, never a field name
    assert help_text.split(".")[0] not in lines[0], said  # never the option's help


@pytest.mark.parametrize(("command", "option", "help_text"), OPTIONS, ids=lambda x: str(x)[:24])
def test_text_that_is_no_number_is_one_line_naming_the_option(
    command: str, option: str, help_text: str, tmp_path
) -> None:
    """``--steps abc`` got Typer's usage box ("Input should be a valid integer, unable to
    parse string as an integer"; a user walk): one line, as a number out of range."""
    result = _given(command, option, "abc", tmp_path)
    said = result.stderr.strip().splitlines()
    assert result.exit_code == 2, (result.exit_code, result.output)
    assert len(said) == 1 and said[0].startswith(f"error: {option} abc: "), said

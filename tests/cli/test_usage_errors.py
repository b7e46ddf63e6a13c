"""The option parser's errors are the project's one kind: one ``error:`` line on stderr
naming the closest valid name, exit status 2, nothing on stdout (Click and Typer drew a
4-6 line box: ``Usage:``, ``Try ... --help``, the message framed). An abbreviation of a
choice is refused, the choice it begins named (``--backend glo`` was gloo in silence)."""

from __future__ import annotations

import re

import pytest
import typer.main
from typer.testing import CliRunner

from gpuscale.cli import app
from gpuscale.names import UnknownNameError, resolve_choice
from gpuscale.tables.requests import one_named
from gpuscale.tables.spelling import OPTION_SYNONYMS

COMMANDS = typer.main.get_command(app).commands  # type: ignore[attr-defined]


def _one_error_line(args: list[str]) -> str:
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 2, result.output
    assert result.stdout == ""
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    return lines[0]


def _misspelt(name: str) -> tuple[str, str]:
    """(command, a long option of it with one letter dropped) that no other option is."""
    options = [o for p in COMMANDS[name].params for o in getattr(p, "opts", [])]
    longest = max((o for o in options if o.startswith("--")), key=len)
    return longest, longest[:4] + longest[5:]


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_an_unknown_option_of_every_command_names_the_closest(name: str) -> None:
    meant, typed = _misspelt(name)
    line = _one_error_line([name, typed, "1"])
    assert line.startswith(f"error: {typed}: no such option")
    assert f"(did you mean {meant!r}?)" in line


def test_the_walks_lines() -> None:
    """``advise --stepms 5``, ``gpuscale foo``, ``analyz``, a missing value, an option of
    the app itself: each one line."""
    assert "(did you mean '--step-ms'?)" in _one_error_line(["advise", "--stepms", "5"])
    assert "(did you mean 'analyze'?)" in _one_error_line(["analyz"])
    line = _one_error_line(["foo"])
    assert "'foo': no such command" in line and "analyze" in line  # the commands listed
    assert "'-w'" in _one_error_line(["plan", "-w"])  # a value missing
    assert _one_error_line(["--bogus"]).startswith("error: --bogus: no such option")


@pytest.mark.parametrize(
    ("args", "offered"),
    [
        (["scores", "-r", "v1.1"], ["--round"]),  # analyze's -r is --reference; scores has none
        (["energy", "-r", "v0.7"], ["--round"]),
        (["plan", "-q"], []),  # no long option of plan begins with q
    ],
)
def test_an_unknown_short_option_names_the_long_ones_its_letter_begins(
    args: list[str], offered: list[str]
) -> None:
    line = _one_error_line(args)
    assert re.match(rf"error: {args[1]}: no such option of \S+ {args[0]}\b", line)
    assert re.findall(r"'(--[a-z-]+)'", line) == offered


@pytest.mark.parametrize(
    "name", sorted(n for n, c in COMMANDS.items() if any(p.required for p in c.params))
)
def test_a_missing_argument_says_what_to_give(name: str, golden) -> None:
    """A command run without its required argument (``gpuscale ingest`` alone, or with
    ``--round v5.0`` as other commands take it) is told what the argument is, its help,
    not only its name."""
    [param] = [p for p in COMMANDS[name].params if p.required]
    line = _one_error_line([name])
    assert repr(param.name) in line
    assert param.help.rstrip(".")[1:] in line  # its help, first letter lowered
    golden.check("cli/usage_errors", f"{name} without its argument", line)


@pytest.mark.parametrize(
    ("args", "meant"),
    [
        (["bench", "--backend", "glo"], "gloo"),
        (["plan", "-w", "bert", "-a", "H100", "-f", "j"], "json"),
        (["analyze", "-b", "bert", "--division", "clo"], "closed"),
        (["advise", "--params", "1e8", "--strategy", "fsd"], "fsdp"),
    ],
)
def test_an_abbreviated_choice_is_refused_naming_it(args: list[str], meant: str) -> None:
    line = _one_error_line(args)
    assert f"give {meant} in full" in line, line


def test_no_choice_is_read_from_a_proper_prefix() -> None:
    """The two readers of every choice (``one_named`` under ``gpuscale.names``,
    ``resolve_choice`` there): any case is the name, no proper prefix is."""
    choices = ["auto", "nccl", "gloo", "closed", "open", "all", "json", "csv", "table"]
    for choice in choices:
        assert one_named(choice.upper(), choices) == choice
        assert resolve_choice(choice.upper(), choices, "choice") == choice
        for end in range(1, len(choice)):
            assert one_named(choice[:end], choices) is None
            with pytest.raises(UnknownNameError, match="in full"):
                resolve_choice(choice[:end], choices, "choice")


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_the_first_words_of_an_option_name_the_options_they_begin(name: str) -> None:
    """``advise --device A100``: a truncated option names every option of the command it
    begins, not "did you mean '--max-devices'?"."""
    options = [o for p in COMMANDS[name].params for o in getattr(p, "opts", [])]
    for option in (o for o in options if o.startswith("--") and "-" in o[2:]):
        typed = option[: option.index("-", 2)]
        if typed in options or typed[2:] in OPTION_SYNONYMS:  # --gpus: test_option_spellings
            continue
        begun = [o for o in options if o.startswith(typed)]
        line = _one_error_line([name, typed, "1"])
        assert all(repr(o) in line for o in begun), (line, begun)
        assert line.count("'--") == len(begun), line


@pytest.mark.parametrize(
    ("args", "typed"),
    [
        (["nosuch"], "'nosuch'"),
        (["scores", "--explain"], "--explain"),
        (["scores", "--out", "x"], "--out"),
        (["report", "--threshold", "3"], "--threshold"),
    ],
)
def test_a_name_like_no_valid_one_gets_no_guess(args: list[str], typed: str) -> None:
    """No 'bench' offered for 'nosuch', '--help' for '--explain' or '--round' for '--out'
    (as difflib at 0.5 would, the dashes counted as a match)."""
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 2 and typed in result.stderr
    assert "did you mean" not in result.stderr


def test_the_python_reference_gets_the_guess_the_cli_gives() -> None:
    from gpuscale import load_round
    from gpuscale.analysis.metrics import ReferenceNotFoundError, scaling_table

    with pytest.raises(ReferenceNotFoundError, match="did you mean 'family'"):
        scaling_table(load_round("v4.1").scores, "bert", reference="famly")


def test_a_bare_gpuscale_prints_its_commands_and_no_empty_error() -> None:
    from typer.testing import CliRunner

    from gpuscale.cli import app

    result = CliRunner().invoke(app, [])
    assert result.exit_code == 2  # as Click ends a group given no command
    assert "advise" in result.stdout and "plan" in result.stdout  # the commands listed
    assert "error" not in result.stderr

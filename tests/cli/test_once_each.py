"""A single-valued option given twice is refused, in one line naming it, by every command
and before anything runs, where Click keeps the last value alone, silently
(``analyze --bench ladder.jsonl --bench paths.jsonl`` would show paths.jsonl's rows
alone). Options given repeatedly on purpose (``--step-ms``
with ``--batch``, ``--family``, the MLPerf ``-b``) and flags are not refused."""

from __future__ import annotations

import pytest
import typer.main
from typer.testing import CliRunner

from gpuscale.cli import app

COMMANDS = typer.main.get_command(app).commands  # type: ignore[attr-defined]


def _options(single: bool) -> list[tuple[str, object]]:
    """(command, option) of every command's valued option taking one value (``single``),
    or of every option taken repeatedly."""
    found = []
    for name, command in COMMANDS.items():
        for param in command.params:
            if param.param_type_name != "option" or param.is_flag or param.count:
                continue
            if param.multiple != single:
                found.append((name, param))
    return found


SINGLE = _options(single=True)
REPEATED = _options(single=False)


def test_every_command_has_single_valued_options() -> None:
    """The options of that command are among those tried (else the test below tries nothing)."""
    tried = {(name, p.opts[0]) for name, p in SINGLE}
    assert {("analyze", "--bench"), ("report", "--bench"), ("advise", "--bench")} <= tried
    assert {name for name, _ in SINGLE} == set(COMMANDS)


@pytest.mark.parametrize(("name", "param"), SINGLE, ids=[f"{n} {p.opts[0]}" for n, p in SINGLE])
def test_a_single_valued_option_given_twice_is_refused(name: str, param: object) -> None:
    """``CMD --opt A --opt B`` (the option's last spelling the second time: ``--power 3
    --power-w 4`` is the same option twice) exits 2 before running, one line on stderr
    naming the option and that it was given twice, nothing on stdout."""
    first, second = param.opts[0], param.opts[-1]  # type: ignore[attr-defined]
    result = CliRunner().invoke(app, [name, first, "a1", second, "b2"])
    assert result.exit_code == 2, result.output
    assert result.stdout == ""
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("error: ")
    assert any(f"{o} given twice" in lines[0] for o in param.opts)  # type: ignore[attr-defined]
    assert "give it once" in lines[0]


def test_the_walk_analyze_bench_twice() -> None:
    """That command: neither file read, the refusal names --bench; two options
    given twice are both named in the one line."""
    result = CliRunner().invoke(app, ["analyze", "--bench", "a.jsonl", "--bench", "b.jsonl"])
    assert result.exit_code == 2
    assert result.stderr.strip() == (
        "error: --bench given twice: it takes one value (the last would be used alone); "
        "give it once"
    )
    both = CliRunner().invoke(app, ["advise", *["-f", "json", "--bench", "x", "-f", "csv"] * 2])
    assert both.exit_code == 2
    line = both.stderr.strip()
    assert "--bench given twice" in line and "--format given 4 times" in line
    assert line.endswith("give each once")


@pytest.mark.parametrize(("name", "param"), REPEATED, ids=[f"{n} {p.opts[0]}" for n, p in REPEATED])
def test_an_option_taken_repeatedly_is_not_refused(name: str, param: object) -> None:
    """Given twice, an option that takes several values is read as before (the command's
    own parser, as the command reads it)."""
    from gpuscale.tables.requests import given_once_each

    command = COMMANDS[name]
    ctx = command.make_context(name, [], resilient_parsing=True)
    opt = param.opts[0]  # type: ignore[attr-defined]
    assert given_once_each(command.make_parser(ctx), [opt, "1", opt, "2"]) == ""


PAIRS = [
    (name, p)
    for name, command in COMMANDS.items()
    for p in command.params
    if getattr(p, "is_flag", False) and p.secondary_opts
]


@pytest.mark.parametrize(("name", "param"), PAIRS, ids=[f"{n} {p.opts[0]}" for n, p in PAIRS])
def test_both_spellings_of_a_yes_no_flag_are_refused(name: str, param: object) -> None:
    """``--cache --no-cache`` says two contradicting things: refused, both named, before
    anything runs (the last was used alone)."""
    yes, no = param.opts[0], param.secondary_opts[0]  # type: ignore[attr-defined]
    result = CliRunner().invoke(app, [name, yes, no])
    assert result.exit_code == 2, result.output
    assert result.stdout == ""
    assert result.stderr.strip() == f"error: {yes} and {no} both given: give one"


def test_flags_given_twice_alike_are_not_refused() -> None:
    """A flag given twice alike says the same thing twice."""
    from gpuscale.tables.requests import given_once_each

    assert PAIRS  # the premise: the test above tries some
    for name, args in (("analyze", ["--decompose"] * 2), ("report", ["--no-cache"] * 2)):
        command = COMMANDS[name]
        ctx = command.make_context(name, [], resilient_parsing=True)
        assert given_once_each(command.make_parser(ctx), args) == ""

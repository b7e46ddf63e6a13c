"""What a narrow table says of its dropped columns names only options its command has: a
new user's walk found ``advise`` saying "(not shown, for width: speedup high; --columns to
choose, -f csv prints every column)", and ``advise --columns`` refused ("--columns: no
such option")."""

from __future__ import annotations

import re

import pytest
import typer.main
from typer.testing import CliRunner

from gpuscale.cli import app
from gpuscale.report.text_table import left_out_note

# the brief's example: 7B under ZeRO-2 on two nodes drops the speedup's high end at 100
ADVISE = "--params 7B --step-ms 900 --batch 8192 --device-name H100 --interconnect nvlink4"
ZERO2 = "--strategy zero2 --nodes 2 --inter-node ib-ndr400"
CASES = {
    "advise": ["advise", *ADVISE.split(), *ZERO2.split()],
    "scores": ["scores", "--round", "v4.1", "-b", "bert"],
}
OPTION = re.compile(r"(?<![\w-])(--?[a-z][a-z-]*)")


def _options(command: str) -> set[str]:
    params = typer.main.get_command(app).commands[command].params  # type: ignore[attr-defined]
    return {o for p in params for o in p.opts}


def _left_out(argv: list[str]) -> str:
    """The line under the table on what it leaves out, unwrapped."""
    result = CliRunner().invoke(app, argv, env={"COLUMNS": "100"})
    assert result.exit_code == 0, result.output
    said = " ".join(result.stdout.split())
    found = re.search(r"\(not shown, for width: [^)]*\)", said)
    assert found, said[-400:]  # the premise: a column dropped at 100
    return found.group(0)


@pytest.mark.parametrize("command", CASES)
def test_the_note_names_only_the_commands_options(command: str) -> None:
    named = set(OPTION.findall(_left_out(CASES[command])))
    has = _options(command)
    assert named <= has, named - has
    assert "-f" in named  # where every column is: -f csv, which both have
    assert ("--columns" in named) is ("--columns" in has)  # advise has none; scores has


def test_a_command_without_the_options_is_told_of_none() -> None:
    """bench draws tables but has neither --columns nor -f; collectives' -f writes its
    verdicts, not its sweep tables (theirs say where their columns are: the --out file)."""
    assert {"--columns", "-f"}.isdisjoint(_options("bench"))
    assert "--columns" not in _options("collectives") and "-f" in _options("collectives")
    note = left_out_note(["speedup_high"], "", "", frozenset(), vertical=False)
    assert OPTION.findall(note) == [] and "speedup high" in note
    both = left_out_note(["speedup_high"], "", "", {"--columns", "-f"}, vertical=False)
    assert OPTION.findall(both) == ["--columns", "-f"]

"""``-f`` is read as every other choice is: any case (an abbreviation refused), and a value
no format has gets one line with the formats and the closest (not Typer's usage box
saying "Value error, 'jsn' is not one of 'table', 'csv', 'json'.")."""

from __future__ import annotations

import json

import pytest
import typer.main
from typer.testing import CliRunner

from gpuscale.cli import app

# What a command needs to run at all (the format is read before it runs).
NEEDS = {"plan": ["-w", "bert", "-a", "H100", "-n", "8"], "ingest": ["x"]}


def _with_format() -> list[str]:
    commands = typer.main.get_command(app).commands.items()
    return sorted(
        name for name, command in commands if any("--format" in p.opts for p in command.params)
    )


COMMANDS = _with_format()


def test_every_command_that_prints_tables_has_the_format_option() -> None:
    assert {"scores", "analyze", "energy", "trends", "advise", "plan", "topo"} <= set(COMMANDS)


@pytest.mark.parametrize("command", COMMANDS)
def test_a_format_typo_is_one_line_with_the_closest(command: str) -> None:
    result = CliRunner().invoke(app, [command, *NEEDS.get(command, []), "-f", "jsn"])
    said = result.stderr.strip().splitlines()
    assert result.exit_code == 2, result.output
    assert len(said) == 1, said
    # the option named, as every refused value is (it said "unknown format 'jsn' ...")
    assert said[0].startswith("error: --format jsn: unknown format (did you mean 'json'?)"), said
    assert "csv, json, table" in said[0]


def test_a_format_in_any_case_is_read_an_abbreviation_refused() -> None:
    """``-f JSON`` is json; ``--format c`` is refused, naming csv (an abbreviation of a
    choice was read in silence, as ``--backend glo`` was gloo)."""
    plan = ["plan", *NEEDS["plan"]]
    upper = CliRunner().invoke(app, [*plan, "-f", "JSON"])
    assert upper.exit_code == 0, upper.output
    assert json.loads(upper.stdout)["rows"][0]["accelerators"] == 8
    prefix = CliRunner().invoke(app, [*plan, "--format", "c"])
    assert prefix.exit_code == 2 and prefix.stdout == ""
    assert prefix.stderr.startswith("error: --format c:") and "csv in full" in prefix.stderr


def _with_explain() -> list[str]:
    commands = typer.main.get_command(app).commands.items()
    return sorted(
        name
        for name, command in commands
        if {"--explain", "--format"} <= {o for p in command.params for o in p.opts}
    )


RUNS = {
    "advise": ["--params", "7M", "--step-ms", "40", "--batch", "32"],
    "plan": NEEDS["plan"],
    "analyze": ["-b", "bert"],
    "energy": ["--round", "v4.1", "-b", "llama2_70b_lora"],
    "trends": ["--round", "v4.0,v4.1", "-b", "bert"],
}


@pytest.mark.parametrize("command", _with_explain())
@pytest.mark.parametrize("fmt", ["json", "csv", "table"])
def test_explain_beside_a_format_it_does_not_change_is_said(command: str, fmt: str) -> None:
    runner = CliRunner()
    given = runner.invoke(app, [command, *RUNS[command], "-f", fmt, "--explain"])
    assert given.exit_code == 0, given.output
    said = "changes nothing" in given.stderr
    assert said == (fmt != "table")  # said on stderr, the data left whole
    if fmt == "json":
        json.loads(given.stdout)
    plain = runner.invoke(app, [command, *RUNS[command], "-f", fmt])
    assert "changes nothing" not in plain.stderr
    if fmt != "table":
        assert plain.stdout == given.stdout


@pytest.mark.parametrize("command", _with_explain())
@pytest.mark.parametrize("fmt", ["json", "csv"])
def test_the_explain_note_names_json_only_where_it_is_a_document(command: str, fmt: str) -> None:
    """The note under ``-f json``/``-f csv --explain`` sends the reader to ``-f json`` for
    the sentences only where that JSON is a document (an object); energy's and trends' are
    their rows alone (a list), so the note names the table's ``--explain`` alone there."""
    runner = CliRunner()
    given = runner.invoke(app, [command, *RUNS[command], "-f", fmt, "--explain"])
    assert given.exit_code == 0, given.output
    note = next(line for line in given.stderr.splitlines() if "changes nothing" in line)
    _, _, held = note.partition(f"-f {fmt}: ")
    document = runner.invoke(app, [command, *RUNS[command], "-f", "json"]).stdout
    is_document = isinstance(json.loads(document), dict)
    assert ("-f json" in held or "document" in held) == is_document, (note, is_document)
    assert "-f table --explain" in held or is_document

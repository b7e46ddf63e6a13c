"""Every command's help reads whole on an 80-column terminal: option names never cut
(``--convergence-bas…``, squeezed by a ranged option's ``<int range> [x>=1]``), each
paragraph one flowing text (Typer keeps a docstring's line breaks: ragged lines), and
the report's ``--bench`` before the options that need it."""

from __future__ import annotations

import pytest
import typer.main
from typer.testing import CliRunner

from gpuscale.cli import app

COMMANDS = typer.main.get_command(app).commands


def _help(name: str) -> str:
    result = CliRunner().invoke(app, [name, "--help"], env={"COLUMNS": "80"})
    assert result.exit_code == 0, result.output
    return result.stdout


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_every_option_name_is_whole_at_80_columns(name: str) -> None:
    shown = _help(name)
    assert max(len(line) for line in shown.splitlines()) <= 80
    assert "…" not in shown  # nothing cut short (a path too long for its column was)
    words = set(shown.replace("│", " ").replace(",", " ").split())
    for param in COMMANDS[name].params:
        for option in [*param.opts, *param.secondary_opts]:
            if option.startswith("--"):
                assert option in words, (option, shown)


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_each_help_paragraph_flows(name: str) -> None:
    paragraphs = (COMMANDS[name].help or "").split("\n\n")
    assert paragraphs[0], name
    assert all("\n" not in p for p in paragraphs), paragraphs


def test_the_report_lists_bench_before_the_options_that_need_it() -> None:
    names = [max(p.opts, key=len) for p in COMMANDS["report"].params]
    assert names.index("--bench") < names.index("--advise")
    assert names.index("--bench") < names.index("--allow-flagged")

"""An error on the command line names the option it is about (``--ruleset 6.1.0``) before
any Python keyword (``ruleset='6.1.0'``), which only a library caller types: walked over
refusals that name fields of a request, a round or a cache."""

from __future__ import annotations

import re

import pytest
from typer.testing import CliRunner

from gpuscale.cli import app

# ``name=`` where a keyword stands: not inside a word, an option, a path or a URL's query
KEYWORD = re.compile(r"(?<![\w\-?&/.])([a-z][a-z0-9]*(?:_[a-z0-9]+)*)=(?=['\"\w])")


def keywords_before_options(line: str) -> list[str]:
    """The Python keywords (``name=``) of ``line`` whose option (``--name``) it does not
    say before them."""
    return [
        m[0]
        for m in KEYWORD.finditer(line)
        if f"--{m[1].replace('_', '-')}" not in line[: m.start()]
    ]


def _error(args: list[str]) -> str:
    done = CliRunner().invoke(app, args)
    assert done.exit_code == 2, done.output
    (line,) = [x for x in done.stderr.splitlines() if x.startswith("error: ")]
    return line


@pytest.mark.parametrize(
    "args",
    [
        ["bench", "--backend", "gloo", "--nproc", "1", "--nnodes", "2", "--node-rank", "2"],
        ["bench", "--backend", "gloo", "--min-params", "5M", "--max-params", "1M"],
        ["advise", "--params", "7M", "--step-ms", "18.6", "--fixed-ms", "30"],
        ["scores", "--round", "v1.0", "--offline"],
        ["analyze", "--round", "v5.11"],
        ["plan", "-w", "bert", "-a", "h100", "-n", "0"],
    ],
    ids=lambda args: " ".join(args[:4]),
)
def test_an_error_names_the_option_before_any_keyword(args: list[str]) -> None:
    line = _error(args)
    assert keywords_before_options(line) == [], line


def test_the_convergence_points_error_names_the_option_first() -> None:
    args = ["advise", "--workload", "llama2_70b_lora", "--ruleset", "3.0.0", "--params", "7M"]
    line = _error([*args, "--step-ms", "20"])
    assert keywords_before_options(line) == [], line


def test_a_keyword_after_its_option_is_fine_and_one_before_it_is_caught() -> None:
    assert keywords_before_options("--offline (offline=True) fetches nothing") == []
    assert keywords_before_options("give ruleset='6.1.0' (--ruleset 6.1.0)") == ["ruleset="]
    assert keywords_before_options("at --step-ms 20, see https://x.org/?a=1") == []

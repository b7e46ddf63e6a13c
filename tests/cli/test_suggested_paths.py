"""A path a refusal suggests pastes as one word: every ``e.g. --out PATH`` of an output
path refused (a folder's name for a file, a file's name for a folder, a folder that does
not exist) is split as a shell splits it and gives the path back whole, in a folder whose
name holds a space, a quote and a ``$``; and the rounds a folder holds are suggested so."""

from __future__ import annotations

import re
import shlex
from collections.abc import Callable
from pathlib import Path

import pytest
from typer.testing import CliRunner

from gpuscale.cli import app

runner = CliRunner()
SUGGESTED = re.compile(r"e\.g\. (--out .*)$", re.S)


@pytest.fixture
def odd(tmp_path: Path) -> Path:
    """A folder named as a user may name one: ``my dir/it's $x``, holding a file ``f``."""
    folder = tmp_path / "my dir" / "it's $x"
    folder.mkdir(parents=True)
    (folder / "f").write_text("")
    return folder


CASES: list[tuple[str, str, Callable[[Path], Path]]] = [
    ("report", "x.html", lambda d: d / "x"),  # a file's name, for a folder of files
    ("dataset", "f", lambda d: d / "gpuscale-dataset"),  # an existing file, for a folder
    ("bench", "x.csv", lambda d: d / "x.jsonl"),  # another format, for JSON lines
    ("collectives", "x.png", lambda d: d / "x.jsonl"),
    ("bench", ".", lambda d: d / "results.jsonl"),  # a folder, for one file
    ("bench", "new/", lambda d: d / "new" / "results.jsonl"),  # a folder's name, for a file
    ("report", "nope/x", lambda d: Path("x")),  # a folder that does not exist
]


@pytest.mark.parametrize(("command", "out", "suggested"), CASES)
def test_a_suggested_out_path_pastes_as_the_path(
    odd: Path, command: str, out: str, suggested: Callable[[Path], Path]
) -> None:
    given = str(odd / out) if out != "." else str(odd)
    if out.endswith("/"):
        given += "/"
    done = runner.invoke(app, [command, "--out", given])
    assert done.exit_code == 2, done.output
    said = " ".join(done.stderr.split("\n"))  # one line, as a terminal may wrap it
    match = SUGGESTED.search(said.strip())
    assert match, said
    words = shlex.split(match.group(1))
    assert words[:2] == ["--out", str(suggested(odd))], said


def test_the_rounds_a_folder_holds_are_suggested_as_paths_to_paste(odd: Path) -> None:
    from gpuscale.mlperf.no_results import no_results

    for name in ("v4.0", "v4.1"):
        (odd / name).mkdir()
    said = no_results(odd)
    pasted = shlex.split(said.split("e.g. ", 1)[1])
    assert pasted == [str(odd / "v4.0"), str(odd / "v4.1")]

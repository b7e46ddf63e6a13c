"""A folder of tables is never silently replaced by tables of other rounds: ``ingest``,
``dataset`` and ``report`` record the rounds their ``--out`` was written from, and writing
there again from rounds that leave one of them out is refused (exit 2, nothing written),
naming what the folder holds, what would replace it and the ways out; the same rounds
again, or more, replace it, saying so. A file those commands wrote, given where a round
goes, is said to be one by every command that reads rounds (it was "not a directory or
a .tar... archive")."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

from gpuscale.cli import app
from gpuscale.sources import write_atomically

from ..mlperf.logbuilder import RoundBuilder

runner = CliRunner()
VIEW = "cli/kept_tables"
TEN = [10.0, 12.0, 11.0, 13.0, 9.0, 10.5, 11.5, 12.5, 9.5, 10.0]


@pytest.fixture
def here(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A working folder with a space in its name, the current one for the test, holding
    two raw rounds (v4.0 and v4.1, one result each)."""
    folder = tmp_path / "my work"
    folder.mkdir()
    monkeypatch.chdir(folder)
    for name in ("training_results_v4.0", "training_results_v4.1"):
        rb = RoundBuilder(name=name)
        rb.system("Acme", "box8").runs("Acme", "box8", "bert", TEN)
        rb.write_dir(folder)
    return folder


def _run(*args: str) -> tuple[int, str]:
    """Exit code and stderr, its lines unwrapped."""
    done = runner.invoke(app, list(args))
    assert "Traceback" not in done.output
    return done.exit_code, " ".join(done.stderr.split())


def _rounds(path: Path) -> list[str]:
    return sorted(pd.read_parquet(path)["round"].unique())


def _tree(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())}


def _said(golden, case: str, text: str, here: Path) -> None:
    golden.check(VIEW, case, text, paths={str(here): "<here>"})


def test_ingest_keeps_the_tables_of_a_round_it_would_lose(here: Path, golden) -> None:
    old, new = "training_results_v4.0", "training_results_v4.1"
    code, said = _run("ingest", old, "--out", "my tables")
    assert code == 0 and "wrote 8 files to 'my tables/'" in said and "replacing" not in said
    before = _tree(here / "my tables")

    code, said = _run("ingest", new, "--out", "my tables")
    assert code == 2, said
    _said(golden, "ingest of another round", said, here)
    assert "v4.0" in said and "v4.1" in said and "another output folder" in said
    assert _tree(here / "my tables") == before  # nothing written
    assert not [p for p in here.iterdir() if p.name.startswith(".my tables")]

    code, said = _run("ingest", old, "--out", "my tables")  # the same round again: rewritten
    assert code == 0, said
    _said(golden, "ingest of the same round again", said, here)
    assert "replacing its tables of v4.0" in said

    code, said = _run("ingest", old, new, "--out", "my tables")  # more rounds: nothing lost
    assert code == 0, said
    assert _rounds(here / "my tables" / "scores.parquet") == ["v4.0", "v4.1"]

    code, said = _run("ingest", new, "--out", "my tables")
    assert code == 2 and "(v4.0 lost)" in said, said
    assert _rounds(here / "my tables" / "scores.parquet") == ["v4.0", "v4.1"]


def test_ingest_refuses_before_reading_and_again_once_read(here: Path) -> None:
    """The rounds the paths' names say are checked before any is read (an archive takes a
    while); a round only its contents say (a renamed archive) is checked once read."""
    code, said = _run("ingest", "training_results_v4.0", "--out", "my tables")
    assert code == 0, said
    code, said = _run("ingest", "gone/training_results_v4.1.tar.xz", "--out", "my tables")
    assert code == 2 and "(v4.0 lost)" in said and "no such file" not in said, said
    rb = RoundBuilder(name="training_results_v4.1")
    rb.system("Acme", "box8").runs("Acme", "box8", "bert", TEN)
    renamed = rb.write_tar(here).rename(here / "download.tar.xz")
    code, said = _run("ingest", renamed.name, "--out", "my tables")
    assert code == 2 and "which this one of v4.1 would replace (v4.0 lost)" in said, said
    code, said = _run("ingest", "training_results_v4.1", "--round", "v4.0", "--out", "my tables")
    assert code == 0 and "replacing its tables of v4.0" in said, said


def test_dataset_keeps_the_rounds_it_would_lose(here: Path, golden) -> None:
    code, said = _run("dataset", "--round", "v4.1,v5.0", "--out", "my data")
    assert code == 0, said
    code, said = _run("dataset", "--round", "v5.0", "--out", "my data")
    assert code == 2, said
    _said(golden, "dataset of fewer rounds", said, here)
    assert _rounds(here / "my data" / "results.parquet") == ["v4.1", "v5.0"]
    code, said = _run("dataset", "--round", "v5.0", "--round", "v4.1", "--out", "my data")
    assert code == 0 and "replacing its dataset of v4.1 and v5.0" in said, said


def test_a_report_of_other_rounds_is_replaced_and_said(here: Path) -> None:
    """A report is a view its rounds redraw in seconds: the README's next step (another
    round's report into the default folder) is written, saying what it replaced."""
    out = here / "my report"
    write_atomically(
        out, lambda f: (f / "index.html").write_text("v4.0"), command="report", sources=("v4.0",)
    )
    done = runner.invoke(app, ["report", "-b", "bert", "--out", "my report"])  # bundled v4.1
    assert done.exit_code == 0 and "replacing its report of v4.0" in done.stdout, done.output
    assert (out / "index.html").read_text() != "v4.0"
    done = runner.invoke(app, ["report", "-b", "bert", "--out", "my report"])  # the same again
    assert done.exit_code == 0 and "replacing its report of v4.1" in done.stdout, done.output


COMMANDS = [
    ["scores"],
    ["analyze", "-b", "bert"],
    ["report"],
    ["ingest"],
    ["dataset"],
    ["energy"],
    ["trends"],
    ["plan", "-a", "H100", "-w", "bert"],
]


def test_a_file_ingest_wrote_is_said_to_be_one_by_every_command(here: Path, golden) -> None:
    code, said = _run("ingest", "training_results_v4.0", "--out", "my tables")
    assert code == 0, said
    for name in ("scores.parquet", "runs.csv"):
        path = here / "my tables" / name
        texts = set()
        for command in COMMANDS:
            code, said = _run(*command, str(path))
            assert code == 2, (command, said)
            texts.add(said)
        (text,) = texts  # every command alike
        _said(golden, f"a table ingest wrote: {name}", text, here)
        assert "`gpuscale ingest`" in text and ("read_csv" in text) == name.endswith(".csv")

"""``read_round`` itself refuses a path that holds no MLPerf results, with the error the
command line gives for it (one place: the library; the CLI renders it): an empty folder
given its round, a folder a gpuscale command wrote, a folder of round folders."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from gpuscale import read_round
from gpuscale.cli import app
from gpuscale.mlperf.no_results import NoResultsError
from gpuscale.sources import write_atomically

from .logbuilder import RoundBuilder


def _cli_error(path: Path, *extra: str) -> str:
    done = CliRunner().invoke(app, ["scores", str(path), *extra])
    assert done.exit_code != 0, done.output
    return " ".join(done.stderr.split())


def _library_error(path: Path, round_name: str | None = None) -> str:
    with pytest.raises(NoResultsError) as caught:
        read_round(path, round_name=round_name)
    return str(caught.value)


def test_an_empty_folder_given_its_round_is_no_results(tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    said = _library_error(empty, "v4.1")
    assert said.startswith(f"no MLPerf results in {empty}: expected <org>/systems")
    assert said in _cli_error(empty, "--round", "v4.1")


@pytest.mark.parametrize("command", ["report", "ingest"])
def test_a_folder_gpuscale_wrote_is_said_to_be_one(tmp_path: Path, command: str) -> None:
    out = tmp_path / "out"
    write_atomically(out, lambda folder: (folder / "index.html").write_text("x"), command=command)
    for round_name in (None, "v4.1"):  # its round not said, or given: the same reason
        said = _library_error(out, round_name)
        assert said.startswith(f"no MLPerf results in {out}: it holds what `gpuscale {command}`")
        assert "cannot tell the round" not in said
    assert _library_error(out) in _cli_error(out)


def test_a_folder_of_rounds_names_them(tmp_path: Path) -> None:
    for name in ("training_results_v4.0", "training_results_v4.1"):
        rb = RoundBuilder(name=name)
        rb.system("Acme", "box8").runs("Acme", "box8", "bert", [10, 12, 11, 13, 9])
        rb.write_dir(tmp_path / "all")
    said = _library_error(tmp_path / "all")
    assert "it holds round folders (training_results_v4.0, training_results_v4.1)" in said


def test_a_round_still_reads(tmp_path: Path) -> None:
    rb = RoundBuilder(name="training_results_v4.1")
    rb.system("Acme", "box8").runs("Acme", "box8", "bert", [10, 12, 11, 13, 9])
    tables = read_round(rb.write_dir(tmp_path))
    assert len(tables.systems) == 1 and set(tables.scores["round"]) == {"v4.1"}


def test_a_missing_path_is_offered_the_source_beside_it_named_alike(tmp_path: Path) -> None:
    """``training_results_v4.1.tar.gz`` typed where the ``.tar.xz`` lies: offered, quoted
    as a shell takes it; a name nothing beside it shares is offered nothing."""
    from gpuscale.sources import SourceError
    from gpuscale.tables.commands import quoted_path

    folder = tmp_path / "my rounds"
    folder.mkdir()
    archive = RoundBuilder().system("Acme", "box8").write_tar(folder)
    for typed in ("training_results_v4.1.tar.gz", "training_results_v4.1"):
        with pytest.raises(SourceError) as refused:
            read_round(folder / typed)
        assert str(refused.value).endswith(f"(did you mean {quoted_path(archive)}?)")
    with pytest.raises(SourceError) as refused:
        read_round(folder / "training_results_v5.0.tar.xz")
    assert "did you mean" not in str(refused.value)

"""The rounds a command asked for (``gpuscale.mlperf.load``): typed errors that say why a
path gave no results and what to give instead; raw paths beside bundled rounds. The
refusals' words are the golden view ``mlperf/load_refusals``."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from gpuscale.mlperf.load import NoResultsError, RoundNamesError, load_rounds, read_paths
from gpuscale.sources import SourceError

from .logbuilder import RoundBuilder

TEN = [10, 12, 11, 13, 9, 10, 11, 12, 10, 11]


def a_round(parent: Path, name: str = "training_results_v4.1") -> Path:
    rb = RoundBuilder(name=name)
    rb.system("Acme", "box8").runs("Acme", "box8", "bert", TEN)
    return rb.write_dir(parent)


def refusal(golden, case: str, caught: pytest.ExceptionInfo, tmp_path: Path) -> str:
    """The refusal's text, checked against its golden case; returned for its facts."""
    said = str(caught.value)
    golden.check("mlperf/load_refusals", case, said, paths={str(tmp_path): "<tmp>"})
    return said


def test_a_folder_of_rounds_names_them(tmp_path: Path, golden) -> None:
    a_round(tmp_path / "all", "training_results_v4.0")
    a_round(tmp_path / "all", "training_results_v4.1")
    with pytest.raises(NoResultsError) as caught:
        read_paths([tmp_path / "all"])
    said = refusal(golden, "a folder of round folders", caught, tmp_path)
    assert said.index("v4.0") < said.index("v4.1")  # each round named, in order


def test_a_folder_of_round_archives_names_them(tmp_path: Path, golden) -> None:
    """A download folder of round archives is named as one, with its archives."""
    a_round(tmp_path / "all", "training_results_v4.1").rename(tmp_path / "all" / "unpacked")
    (tmp_path / "all" / "training_results_v5.0.tar.xz").write_bytes(b"")
    (tmp_path / "all" / "notes.txt").write_text("not a round")
    with pytest.raises(NoResultsError) as caught:
        read_paths([tmp_path / "all"])
    said = refusal(golden, "a folder of round archives", caught, tmp_path)
    assert "v5.0.tar.xz" in said and "notes.txt" not in said


def test_a_submitters_folder_asks_for_the_round_around_it(tmp_path: Path, golden) -> None:
    root = a_round(tmp_path)
    with pytest.raises(NoResultsError) as caught:
        read_paths([root / "Acme"])
    assert str(root) in str(caught.value)  # the folder to give instead
    refusal(golden, "one submitter's folder", caught, tmp_path)


def test_a_folder_holding_the_round_one_level_down_names_that_folder(
    tmp_path: Path, golden
) -> None:
    """An archive unpacked into a folder of its own name (``my results/my results/Acme``):
    the refusal gives the folder one level down, where the submitters are."""
    outer = tmp_path / "my results"
    a_round(outer, "my results")
    with pytest.raises(NoResultsError) as caught:
        read_paths([outer], ["v4.1"])
    assert str(outer / "my results") in str(caught.value)  # the folder to give instead
    refusal(golden, "the round a folder down", caught, tmp_path)


def test_a_folder_without_results_is_no_results(tmp_path: Path, golden) -> None:
    (tmp_path / "empty_v4.1").mkdir()
    with pytest.raises(NoResultsError) as caught:
        read_paths([tmp_path / "empty_v4.1"])
    said = refusal(golden, "a folder without results", caught, tmp_path)
    assert "<org>/systems" in said


def test_a_benchmark_typed_as_a_path_is_said(tmp_path: Path, monkeypatch, golden) -> None:
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SourceError) as caught:
        read_paths([Path("brt")])
    said = refusal(golden, "a benchmark typed as a path", caught, tmp_path)
    assert "-b brt" in said


def test_round_names_that_do_not_fit_the_paths(tmp_path: Path, golden) -> None:
    paths = [a_round(tmp_path / "a"), a_round(tmp_path / "b")]
    with pytest.raises(RoundNamesError) as caught:
        read_paths(paths, ["v4.1", "v4.0", "v3.1"])
    said = refusal(golden, "more round names than paths", caught, tmp_path)
    assert "3 --round" in said
    with pytest.raises(RoundNamesError) as caught:
        load_rounds(None, ["v0.1"])
    said = refusal(golden, "a round not bundled", caught, tmp_path)
    assert "v0.1" in said


def test_a_path_beside_a_bundled_round(tmp_path: Path) -> None:
    tables = load_rounds([a_round(tmp_path)], ["v4.0"])
    assert set(tables.scores["round"]) == {"v4.1", "v4.0"}
    assert "Acme" in set(tables.scores[tables.scores["round"] == "v4.1"]["org"])


def test_a_round_that_is_not_bundled_is_said_before_the_paths_are_read(
    tmp_path: Path, monkeypatch
) -> None:
    """`scores ARCHIVE --round v9.9` read the whole archive before saying v9.9 is none."""
    import gpuscale.mlperf.load as load

    path = a_round(tmp_path, "training_results_v4.1")
    monkeypatch.setattr(load, "read_paths", lambda *a, **k: pytest.fail("read first"))
    with pytest.raises(RoundNamesError) as caught:
        load_rounds([path], ["v9.9"])
    assert "v9.9" in str(caught.value)


def test_a_path_and_a_bundled_round_of_one_round_are_refused(
    tmp_path: Path, monkeypatch, golden
) -> None:
    """`scores training_results_v4.1/ --round v4.1` would merge two copies of one round,
    the path's results replacing the bundled ones: refused before anything is read. A
    path whose name says no round, named v4.0 by --round, is the user's own folder: listed
    under its own name, beside the bundled v4.0, not refused."""
    import gpuscale.mlperf.load as load

    monkeypatch.setattr(load, "read_paths", lambda *a, **k: pytest.fail("read first"))
    named = a_round(tmp_path / "a", "training_results_v4.1")
    with pytest.raises(RoundNamesError) as caught:
        load_rounds([named], ["v4.1"])
    said = refusal(golden, "a path named by a bundled round", caught, tmp_path)
    assert said.index("v4.1") < said.index(named.name)
    unnamed = a_round(tmp_path / "b", "my_copy")
    monkeypatch.undo()
    beside = load_rounds([unnamed], ["v4.0", "v4.0"])
    assert set(beside.scores["round"]) == {"my_copy (v4.0)", "v4.0"}


def test_a_renamed_archive_of_a_bundled_round_is_refused_for_its_folder_not_its_name(
    tmp_path: Path, monkeypatch
) -> None:
    """`my results.tar.xz` (a renamed download holding training_results_v4.1/) beside
    --round v4.1: its round comes from the folder inside, not its name, as said."""
    import gpuscale.mlperf.load as load

    monkeypatch.setattr(load, "read_paths", lambda *a, **k: pytest.fail("read first"))
    rb = RoundBuilder(name="training_results_v4.1")
    rb.system("Acme", "box8").runs("Acme", "box8", "bert", TEN)
    renamed = rb.write_tar(tmp_path).rename(tmp_path / "my results.tar.xz")
    with pytest.raises(RoundNamesError) as caught:
        load_rounds([renamed], ["v4.1"])
    said = str(caught.value)
    assert "(" + str(renamed) + ", whose folder inside says v4.1)" in said.replace("'", "")
    assert "whose name says" not in said


@pytest.mark.parametrize("command", ["ingest", "dataset", "report"])
def test_a_folder_gpuscale_wrote_is_said_to_be_one(tmp_path: Path, command: str, golden) -> None:
    """A folder gpuscale wrote (``ingest --out``'s) is said to be one, naming the command."""
    from gpuscale.sources import write_atomically

    out = tmp_path / "out"
    write_atomically(out, lambda folder: (folder / "scores.csv").write_text("x\n"), command=command)
    with pytest.raises(NoResultsError) as caught:
        read_paths([out])
    said = refusal(golden, f"a folder `gpuscale {command}` wrote", caught, tmp_path)
    assert f"`gpuscale {command}`" in said
    assert ("read_parquet" in said) == (command in ("ingest", "dataset"))


@pytest.mark.parametrize(
    ("typed", "meant"), [("v0.5", "v0.6"), ("v0.1", "v0.6"), ("v5.11", "v5.1"), ("v1.5", "v1.1")]
)
def test_a_round_not_fetched_suggests_the_nearest_version(typed: str, meant: str) -> None:
    """A round name that is none suggests the fetched round nearest it as a version (v0.5
    read v0.7 and v0.1 read v6.1 by shared letters); v5.11 is a typo of v5.1, read as text."""
    import gpuscale

    with pytest.raises(RoundNamesError, match=rf"did you mean '{re.escape(meant)}'\?"):
        gpuscale.load_round(typed, offline=True)

"""The rounds a command asked for (``gpuscale.mlperf.load``): typed errors that say why a
path gave no results and what to give instead; raw paths beside bundled rounds."""

from __future__ import annotations

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


def test_a_folder_of_rounds_names_them(tmp_path: Path) -> None:
    a_round(tmp_path / "all", "training_results_v4.0")
    a_round(tmp_path / "all", "training_results_v4.1")
    with pytest.raises(NoResultsError, match=r"holds round folders .*v4\.0, .*v4\.1"):
        read_paths([tmp_path / "all"])


def test_a_folder_of_round_archives_names_them(tmp_path: Path) -> None:
    """A download folder (``../shared/mlperf``) said only "no MLPerf results in it"."""
    a_round(tmp_path / "all", "training_results_v4.1").rename(tmp_path / "all" / "unpacked")
    (tmp_path / "all" / "training_results_v5.0.tar.xz").write_bytes(b"")
    (tmp_path / "all" / "notes.txt").write_text("not a round")
    with pytest.raises(NoResultsError, match=r"holds round archives \(training_results_v5\.0"):
        read_paths([tmp_path / "all"])


def test_a_submitters_folder_asks_for_the_round_around_it(tmp_path: Path) -> None:
    root = a_round(tmp_path)
    with pytest.raises(NoResultsError, match="one submitter's folder") as caught:
        read_paths([root / "Acme"])
    assert str(root) in str(caught.value)  # the folder to give instead


def test_a_folder_without_results_is_no_results(tmp_path: Path) -> None:
    (tmp_path / "empty_v4.1").mkdir()
    with pytest.raises(NoResultsError, match="expected <org>/systems"):
        read_paths([tmp_path / "empty_v4.1"])


def test_a_benchmark_typed_as_a_path_is_said(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SourceError, match=r"a benchmark\? give it with -b brt"):
        read_paths([Path("brt")])


def test_round_names_that_do_not_fit_the_paths(tmp_path: Path) -> None:
    paths = [a_round(tmp_path / "a"), a_round(tmp_path / "b")]
    with pytest.raises(RoundNamesError, match="3 --round names for 2 paths"):
        read_paths(paths, ["v4.1", "v4.0", "v3.1"])
    with pytest.raises(RoundNamesError, match="not bundled"):
        load_rounds(None, ["v0.1"])


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
    with pytest.raises(RoundNamesError, match=r"v9\.9 not bundled"):
        load_rounds([path], ["v9.9"])


def test_a_path_and_a_bundled_round_of_one_round_are_refused(tmp_path: Path, monkeypatch) -> None:
    """A walk: `scores training_results_v4.1/ --round v4.1` merged the two copies of one
    round without a word (the path's damaged results replacing the bundled ones); said
    before anything is read, whether the path's name or --round names its round."""
    import gpuscale.mlperf.load as load

    monkeypatch.setattr(load, "read_paths", lambda *a, **k: pytest.fail("read first"))
    named = a_round(tmp_path / "a", "training_results_v4.1")
    with pytest.raises(RoundNamesError, match=r"v4\.1 .*both .*training_results_v4\.1"):
        load_rounds([named], ["v4.1"])
    unnamed = a_round(tmp_path / "b", "my_copy")
    with pytest.raises(RoundNamesError, match=r"v4\.0 .*both .*my_copy"):
        load_rounds([named, unnamed], ["v4.0", "v4.0"])


@pytest.mark.parametrize("command", ["ingest", "dataset", "report"])
def test_a_folder_gpuscale_wrote_is_said_to_be_one(tmp_path: Path, command: str) -> None:
    """A walk: `scores` of `ingest --out`'s folder said only "no MLPerf results in it"."""
    from gpuscale.sources import write_atomically

    out = tmp_path / "out"
    write_atomically(out, lambda folder: (folder / "scores.csv").write_text("x\n"), command=command)
    with pytest.raises(NoResultsError, match=f"holds what `gpuscale {command}` wrote") as caught:
        read_paths([out])
    assert ("read_parquet" in str(caught.value)) == (command in ("ingest", "dataset"))

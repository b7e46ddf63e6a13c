"""A results repository as GitHub's "Download ZIP" gives it (the top folder named
after the branch, ``training_results_v4.1-main/``, as ``.zip`` or ``.tar.gz``) is read as
the round, the round taken from the top folder's name where the archive's own name does
not say it; the scores are those of the same folder unpacked."""

from __future__ import annotations

import io
import tarfile
import zipfile
from pathlib import Path

import pytest
from typer.testing import CliRunner

from gpuscale.cli import app
from gpuscale.mlperf.ingest import read_round
from gpuscale.mlperf.load import read_paths

from .test_ingest import good_round

TOP = "training_results_v4.1-main"


def _download(tmp_path: Path, kind: str, name: str, top: str = TOP) -> Path:
    """The round's files in an archive ``name.kind`` under the folder ``top`` ("": none)."""
    files = {f"{top}/{rel}" if top else rel: data for rel, data in good_round().files.items()}
    path = tmp_path / f"{name}.{kind}"
    if kind == "zip":
        with zipfile.ZipFile(path, "w") as archive:
            if top:
                archive.writestr(f"{top}/", b"")  # GitHub's archives list the folder first
            for rel, data in files.items():
                archive.writestr(rel, data)
        return path
    with tarfile.open(path, "w:gz") as archive:
        if top:
            folder = tarfile.TarInfo(top)
            folder.type = tarfile.DIRTYPE
            archive.addfile(folder)
        for rel, data in files.items():
            info = tarfile.TarInfo(rel)
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    return path


def _scores(tables) -> list[tuple]:
    frame = tables.scores.sort_values(["system_id", "benchmark"])
    return list(
        frame[["round", "system_id", "benchmark", "time_to_train_min"]].itertuples(index=False)
    )


@pytest.mark.parametrize("kind", ["zip", "tar.gz"])
@pytest.mark.parametrize("name", [TOP, "download"])
def test_a_github_download_is_read_as_its_round(tmp_path: Path, kind: str, name: str) -> None:
    unpacked = read_round(good_round().write_dir(tmp_path))
    tables = read_round(_download(tmp_path, kind, name))
    assert _scores(tables) == _scores(unpacked)
    assert set(tables.scores["round"]) == {"v4.1"}
    assert tables.problems.empty


def test_the_command_reads_a_download_without_round(tmp_path: Path) -> None:
    path = _download(tmp_path, "zip", TOP)
    result = CliRunner().invoke(app, ["scores", str(path), "-f", "csv"])
    assert result.exit_code == 0, result.output
    assert "box8" in result.output and "v4.1" in result.output


@pytest.mark.parametrize("kind", ["zip", "tar.gz"])
@pytest.mark.parametrize("top", ["my results", "Acme", ""])
def test_a_users_folder_packed_in_an_archive_scores_as_the_folder(
    tmp_path: Path, kind: str, top: str
) -> None:
    """One's own folder packed as ``tar czf 'my results.tar.gz' 'my results'`` (the tree in
    a folder of any name, here even an org's) or packed from inside it (no folder) scores as
    the folder itself: the archive was refused, "no MLPerf results", for the folder it
    wraps the tree in."""
    unpacked = read_round(good_round().write_dir(tmp_path))
    archive = _download(tmp_path, kind, "my results", top)
    tables = read_round(archive, "v4.1")
    assert _scores(tables) == _scores(unpacked)
    assert tables.problems.empty
    # listed as the folder it packs, its archive's suffix dropped
    assert set(read_paths([archive], ["v4.1"]).scores["round"]) == {"my results (v4.1)"}

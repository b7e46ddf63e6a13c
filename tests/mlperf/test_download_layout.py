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

from .test_ingest import good_round

TOP = "training_results_v4.1-main"


def _download(tmp_path: Path, kind: str, name: str) -> Path:
    files = good_round().files
    path = tmp_path / f"{name}.{kind}"
    if kind == "zip":
        with zipfile.ZipFile(path, "w") as archive:
            archive.writestr(f"{TOP}/", b"")  # GitHub's archives list the folder first
            for rel, data in files.items():
                archive.writestr(f"{TOP}/{rel}", data)
        return path
    with tarfile.open(path, "w:gz") as archive:
        folder = tarfile.TarInfo(TOP)
        folder.type = tarfile.DIRTYPE
        archive.addfile(folder)
        for rel, data in files.items():
            info = tarfile.TarInfo(f"{TOP}/{rel}")
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

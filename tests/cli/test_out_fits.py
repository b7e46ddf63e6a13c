"""Every command's ``--out`` fits what it writes, checked before any work
(``gpuscale.tables.out_paths``): ``ingest``, ``dataset`` and ``report`` write a folder,
``bench`` and ``collectives`` append to one file of JSON lines. A misfit (``dataset --out
x.csv`` made a folder named x.csv; ``bench --out x.csv`` appended JSON to it; a missing
folder on the way was made; ``--out`` a folder, /proc, a file of other text were refused
only after the rounds were read or the models built) is the ``out`` field's refusal: one
line, exit 2, nothing written. A path that fits is taken as before."""

from __future__ import annotations

import dataclasses
import json
import os
import sys
import typing
from pathlib import Path

import pytest
from typer.testing import CliRunner

from gpuscale.bench.collectives_config import CheckRequest
from gpuscale.bench.sweep_request import SweepRequest
from gpuscale.cli import app
from gpuscale.report.request import ReportRequest
from gpuscale.tables.out_paths import typed_paths
from gpuscale.tables.requests import FieldError
from gpuscale.tables.round_requests import DatasetOut, IngestOut

from ..builders import bench_record

FOLDERS = {  # the command's line before --out, and its request
    "ingest": (["ingest", "round"], IngestOut),
    "dataset": (["dataset"], DatasetOut),
    "report": (["report"], ReportRequest),
}
FILES = {
    "bench": (["bench", "--backend", "gloo", "--nproc", "1", "--models", "mlp-0.2m"], SweepRequest),
    "collectives": (["collectives", "--backend", "gloo", "--nproc", "2"], CheckRequest),
}
LINUX = sys.platform.startswith("linux")
FOLDER_MISFITS = [
    "x.csv",
    "x.parquet",
    "x.HTML",
    "notes.txt",  # a file there, by its name
    "notes",  # a file there
    "nope/deep/x",  # a folder on the way that does not exist
    "notes/x",  # a file on the way
    *(["/proc/x"] if LINUX else []),  # a folder that takes no new file
]
FILE_MISFITS = [
    "adir",  # a folder
    "x.csv",
    "x.parquet",
    "nope/deep/r.jsonl",
    "notes/r.jsonl",
    "notes.txt",  # a file of other text
    *(["/proc/r.jsonl", "/dev/null"] if LINUX else []),
]


@pytest.fixture
def scratch(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A working folder holding a file of text (with and without a suffix) and a folder."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "notes.txt").write_text("# notes\n")
    (tmp_path / "notes").write_text("# notes\n")
    (tmp_path / "adir").mkdir()
    return tmp_path


def _tree(root: Path) -> dict[str, tuple[int, int]]:
    """Every entry under ``root`` with its size and modification time."""
    return {
        str(p.relative_to(root)): (p.stat().st_size, p.stat().st_mtime_ns)
        for p in sorted(root.rglob("*"))
    }


def _cases() -> list[tuple[str, str]]:
    return [(c, o) for c in FOLDERS for o in FOLDER_MISFITS] + [
        (c, o) for c in FILES for o in FILE_MISFITS
    ]


@pytest.mark.parametrize(("command", "out"), _cases())
def test_a_misfit_out_is_one_line_exit_2_nothing_written(
    scratch: Path, command: str, out: str
) -> None:
    line = {**FOLDERS, **FILES}[command][0]
    before = _tree(scratch)
    result = CliRunner().invoke(app, [*line, "--out", out])
    said = [s for s in result.output.splitlines() if s.strip()]
    assert result.exit_code == 2, result.output
    assert len(said) == 1 and said[0].startswith(f"error: --out {out}:"), said
    assert _tree(scratch) == before


@pytest.mark.parametrize(("command", "out"), _cases())
def test_the_request_refuses_it_as_its_out_field(scratch: Path, command: str, out: str) -> None:
    request = {**FOLDERS, **FILES}[command][1]
    with pytest.raises(FieldError) as refused:
        request(out=Path(out))
    assert (refused.value.field, refused.value.value) == ("out", Path(out))


@pytest.mark.parametrize("command", list(FOLDERS))
@pytest.mark.parametrize("out", ["adir", ".", "ds-v4.1", "new", "adir/new", "adir/v4.1"])
def test_a_folder_that_fits_is_taken(scratch: Path, command: str, out: str) -> None:
    assert FOLDERS[command][1](out=Path(out)).out == Path(out)


@pytest.mark.parametrize("command", list(FILES))
@pytest.mark.parametrize("out", ["r.jsonl", "r.json", "r.txt", "adir/r.jsonl", "empty", "own"])
def test_a_file_that_fits_is_taken(scratch: Path, command: str, out: str) -> None:
    (scratch / "empty").touch()
    own = {
        "bench": bench_record("m", 10**6, 1, 100.0),
        "collectives": {"schema": "gpuscale.collectives/2", "kind": "sweep"},
    }[command]
    (scratch / "own").write_text(json.dumps(own) + "\n")
    before = _tree(scratch)
    assert FILES[command][1](out=Path(out)).out == Path(out)
    assert _tree(scratch) == before  # checking writes nothing


def test_bench_list_writes_nothing_and_takes_any_out(scratch: Path) -> None:
    assert SweepRequest(out=Path("adir"), list_models=True).out == Path("adir")


@pytest.mark.skipif(not LINUX or os.geteuid() == 0, reason="root writes anywhere")
def test_a_folder_without_permission_is_refused(scratch: Path) -> None:
    locked = scratch / "locked"
    locked.mkdir(mode=0o555)
    for request in (DatasetOut, SweepRequest):
        with pytest.raises(FieldError) as refused:
            request(out=locked / "x")
        assert refused.value.field == "out"


@pytest.mark.parametrize("command", list(FILES))
@pytest.mark.parametrize("out", ["newdir/", "adir/", "adir/deeper/"])
def test_a_file_out_typed_as_a_folder_is_refused_not_written_under_its_name(
    scratch: Path, command: str, out: str
) -> None:
    """``Path`` drops a trailing separator: ``bench --out newdir/`` wrote a file ``newdir``.
    Refused on the command line, naming a file in that folder."""
    line, request = FILES[command]
    before = _tree(scratch)
    result = CliRunner().invoke(app, [*line, "--out", out])
    said = [s for s in result.output.splitlines() if s.strip()]
    assert result.exit_code == 2, result.output
    assert len(said) == 1 and said[0].startswith(f"error: --out {out}:"), said
    named = {f.name: f.default for f in dataclasses.fields(request)}["out"].name
    assert said[0].endswith(f"--out {out}{named}")
    assert _tree(scratch) == before


@pytest.mark.parametrize("command", list(FOLDERS))
def test_a_folder_out_may_end_with_a_separator(command: str) -> None:
    request = FOLDERS[command][1]
    hints = typing.get_type_hints(request)
    out = {f.name: f for f in dataclasses.fields(request)}["out"]
    assert typed_paths(out, hints, "new/") == Path("new")


@pytest.mark.parametrize("command", [*FOLDERS, *FILES])
def test_a_missing_folder_on_the_way_is_named_with_the_command_that_makes_it(
    scratch: Path, command: str, golden
) -> None:
    """Every command's --out in a folder that does not exist (a space in its name) names
    that folder and the `mkdir -p` that makes it, quoted as a shell needs; nothing made."""
    out = "my runs/deep/r.jsonl" if command in FILES else "my runs/deep/x"
    result = CliRunner().invoke(app, [*{**FOLDERS, **FILES}[command][0], "--out", out])
    assert result.exit_code == 2, result.output
    said = result.output.strip()
    assert "'my runs/deep' does not exist" in said and "`mkdir -p 'my runs/deep'`" in said
    assert not (scratch / "my runs").exists()
    golden.check("cli/out_refusals", f"missing folder: {command}", said)

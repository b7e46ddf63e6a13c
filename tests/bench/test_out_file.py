"""``--out`` of bench and collectives takes only a file of its own records or a new one:
a README given as --out is refused (never two JSON lines appended, rc 0), and neither
command appends into the other's file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from gpuscale.bench.results import ResultsError
from gpuscale.bench.results_file import COLLECTIVES_FILE, check_writable
from gpuscale.cli import app

from ..builders import bench_record


def test_a_file_of_other_text_or_records_is_refused_before_anything_runs(tmp_path: Path) -> None:
    notes = tmp_path / "README.md"
    notes.write_text("# my project\n\nnotes\n")
    with pytest.raises(ResultsError, match=r"README\.md is not a file of `gpuscale bench`"):
        check_writable(notes)
    bench = tmp_path / "results.jsonl"
    bench.write_text(json.dumps(bench_record("m", 10**6, 1, 100.0)) + "\n")
    check_writable(bench)  # its own kind: appended to
    with pytest.raises(ResultsError, match=r"it holds `gpuscale bench` results"):
        check_writable(bench, holds=COLLECTIVES_FILE)
    sweeps = tmp_path / "collectives.jsonl"
    sweeps.write_text(json.dumps({"schema": "gpuscale.collectives/2", "kind": "sweep"}) + "\n")
    with pytest.raises(ResultsError, match=r"it holds `gpuscale collectives` sweeps"):
        check_writable(sweeps)
    (tmp_path / "empty.jsonl").touch()
    for fresh in (tmp_path / "new.jsonl", tmp_path / "empty.jsonl"):
        check_writable(fresh)  # a new or an empty file


@pytest.mark.parametrize("name", ["notes.md", "notes.txt"])  # refused by its name, its text
def test_bench_leaves_a_file_of_other_text_unchanged(tmp_path: Path, name: str) -> None:
    pytest.importorskip("torch")
    notes = tmp_path / name
    notes.write_text("# notes\n")
    args = ["bench", "--backend", "gloo", "--nproc", "1", "--models", "mlp-0.2m"]
    result = CliRunner().invoke(app, [*args, "--steps", "1", "--out", str(notes)])
    assert result.exit_code == 2, result.output
    assert result.output.startswith("error: --out ") and len(result.output.splitlines()) == 1
    assert notes.read_text() == "# notes\n"


def test_rows_into_a_folder_not_there_say_which_folder_and_how_to_make_it(
    tmp_path: Path, golden
) -> None:
    """Appending (the worker's --jsonl, the Python API, a folder removed during a sweep)
    into a folder that does not exist names that folder and the command that makes it,
    never the /proc reading of "No such file or directory"."""
    from gpuscale.bench.results_file import append_result

    for case, out in {
        "missing folder": tmp_path / "nodir" / "results.jsonl",
        "missing folders, a space": tmp_path / "my runs" / "sub" / "results.jsonl",
    }.items():
        with pytest.raises(ResultsError) as refused:
            append_result(out, {"model": "m"})
        message = str(refused.value)
        shown = f"'{out.parent}'" if " " in str(out.parent) else str(out.parent)  # quoted
        assert f"the folder {shown} does not exist" in message
        assert "virtual file system" not in message and not out.parent.exists()
        golden.check("bench/out_refusals", case, message, paths={str(tmp_path): "<tmp>"})


@pytest.mark.skipif(not Path("/proc/self").is_dir(), reason="needs Linux /proc")
def test_a_folder_under_proc_is_still_said_to_take_no_new_files() -> None:
    from gpuscale.bench.results_file import append_result

    for out in (Path("/proc/gpuscale.jsonl"), Path("/proc/gpuscale/results.jsonl")):
        with pytest.raises(ResultsError, match=r"/proc is a folder that takes no new files"):
            append_result(out, {"model": "m"})

"""The command line: every command documented, outputs parseable, errors without tracebacks."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from gpuscale.cli import app

from .mlperf.logbuilder import RoundBuilder

runner = CliRunner()
ROOT = Path(__file__).resolve().parents[1]
# Where commands are documented: the README's tour and the guide pages of the docs site.
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def commands() -> list[str]:
    import typer.main

    return sorted(typer.main.get_command(app).commands)  # type: ignore[attr-defined]


@pytest.mark.parametrize("name", commands())
def test_every_command_has_help_and_is_documented(name: str) -> None:
    result = runner.invoke(app, [name, "--help"])
    assert result.exit_code == 0 and "Usage" in result.output
    assert any(f"gpuscale {name}" in page.read_text() for page in PAGES), name


def test_scores_json_from_bundled_round() -> None:
    result = runner.invoke(app, ["scores", "--round", "v4.1", "-b", "bert", "-f", "json"])
    assert result.exit_code == 0, result.output
    rows = json.loads(result.stdout)
    assert rows and {r["benchmark"] for r in rows} == {"bert"}
    assert all(r["time_to_train_min"] is None or r["time_to_train_min"] > 0 for r in rows)


def test_scores_csv_columns() -> None:
    result = runner.invoke(app, ["scores", "--round", "v5.0", "-f", "csv"])
    header = result.stdout.splitlines()[0].split(",")
    assert header[:4] == ["round", "benchmark", "submitter", "system_id"]
    assert "time_to_train_min" in header


def test_unknown_round_is_a_clean_error() -> None:
    result = runner.invoke(app, ["scores", "--round", "v9.9"])
    assert result.exit_code == 2
    assert "not bundled" in result.output and "Traceback" not in result.output
    # the way on is a path to the raw round, which every round command takes (not ingest,
    # whose tables no command reads back)
    assert "as a path" in result.output and "ingest" not in result.output


def test_missing_path_is_a_clean_error(tmp_path: Path) -> None:
    result = runner.invoke(app, ["ingest", str(tmp_path / "nope_v4.1")])
    assert result.exit_code == 2 and "no such file" in result.output


@pytest.mark.parametrize("given", [["--round", "v5.0"], []])
def test_ingest_without_a_path_says_where_a_rounds_tables_come_from(
    tmp_path: Path, given: list[str]
) -> None:
    """A walk: `ingest --round v5.0`, as the other commands take --round, said only
    "missing argument 'paths'": ingest's --round names a path's round and fetches nothing,
    so the refusal names `dataset` (with that round), which writes a round's tables."""
    out = tmp_path / "out"
    result = runner.invoke(app, ["ingest", *given, "--out", str(out)])
    assert result.exit_code == 2 and not out.exists(), result.output
    assert f"`gpuscale dataset{' --round v5.0' if given else ''}`" in result.stderr


def test_ingest_writes_tables(tmp_path: Path) -> None:
    rb = RoundBuilder().system("Acme", "box").runs("Acme", "box", "bert", [3, 2, 4])
    root = rb.write_dir(tmp_path)
    out = tmp_path / "out"
    result = runner.invoke(app, ["ingest", str(root), "--out", str(out)])
    assert result.exit_code == 0, result.output
    for name in ("systems", "runs", "scores", "problems"):
        assert (out / f"{name}.parquet").exists() and (out / f"{name}.csv").exists()


def test_report_escapes_system_names(tmp_path: Path) -> None:
    evil = "<script>alert(1)</script>"
    rb = RoundBuilder()
    rb.system("Acme", "box", system_name=evil).runs("Acme", "box", "bert", [3, 2, 4])
    root = rb.write_dir(tmp_path)
    result = runner.invoke(app, ["report", str(root), "--out", str(tmp_path / "rep")])
    assert result.exit_code == 0, result.output
    html = (tmp_path / "rep" / "index.html").read_text()
    assert evil not in html and "&lt;script&gt;alert(1)&lt;/script&gt;" in html


# Outputs that cannot be written, with the cause each must be said by (never the bare
# system word: "No such file or directory" for /proc/x/y says nothing of why).
BAD_OUT = {
    "file": (lambda tmp: tmp / "exists.txt", "names a .txt file"),  # by its name first
    "a-file": (lambda tmp: tmp / "exists", "is a file, but"),
    "proc": (lambda tmp: Path("/proc/gpuscale-out"), "/proc is a folder that takes no new"),
    "proc-nested": (lambda tmp: Path("/proc/gpuscale-out/x"), "/proc is a folder that takes no"),
    "under-a-file": (lambda tmp: tmp / "exists.txt" / "x", "exists.txt is a file, not a folder"),
    "too-long": (lambda tmp: tmp / ("a" * 300), "the name is too long (300 bytes in one name"),
    "path-too-long": (
        lambda tmp: tmp.joinpath(*["b" * 200] * 25),
        "the path is too long (",
    ),
    "markup": (lambda tmp: tmp / "odd [/] name [bold]x", None),
}
SYSTEM_WORDS = ("No such file", "Not a directory", "File exists", "Errno", "Traceback")


@pytest.mark.parametrize("command", ["ingest", "report", "dataset"])
@pytest.mark.parametrize("where", list(BAD_OUT))
def test_bad_out_is_one_clear_message(tmp_path: Path, command: str, where: str) -> None:
    """Refused by the request, before any round is read (``tables.out_paths``): the
    option named with its value, the cause in the writers' words."""
    rb = RoundBuilder().system("Acme", "box").runs("Acme", "box", "bert", [3, 2, 4])
    root = rb.write_dir(tmp_path)
    make, why = BAD_OUT[where]
    target = make(tmp_path)
    for kept in ("exists.txt", "exists"):
        (tmp_path / kept).write_text("keep me")
    if where == "markup":  # the name's "/" is a folder on the way: made first
        target.parent.mkdir()
    result = runner.invoke(app, [command, str(root), "--out", str(target)])
    assert result.exception is None or isinstance(result.exception, SystemExit)
    if why is None:  # a legal folder name: it works, and is printed as written
        assert result.exit_code == 0, result.output
        assert target.is_dir()
    else:
        said = " ".join(result.output.split())
        assert result.exit_code == 2 and said.startswith("error: --out ")
        assert why in said, said
        assert not any(word in said for word in SYSTEM_WORDS), said
    for kept in ("exists.txt", "exists"):
        assert (tmp_path / kept).read_text() == "keep me"


@pytest.mark.parametrize("where", [w for w in BAD_OUT if w not in ("markup", "file", "a-file")])
def test_a_results_file_that_cannot_be_written_says_why(tmp_path: Path, where: str) -> None:
    """``bench --out`` and ``collectives --out`` (appended files), checked before anything
    runs: the same causes, in the same words as the folders above."""
    from gpuscale.bench.results import ResultsError
    from gpuscale.bench.results_file import check_writable

    make, why = BAD_OUT[where]
    (tmp_path / "exists.txt").write_text("keep me")
    with pytest.raises(ResultsError) as refused:
        check_writable(make(tmp_path))
    said = str(refused.value)
    assert not any(word in said for word in SYSTEM_WORDS), said
    assert why in said and "choose another output file" in said, said

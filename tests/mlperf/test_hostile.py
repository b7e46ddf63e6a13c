"""Hostile and broken input, class by class: never a traceback, never a lost round, every
impossible value a problem row naming the file and the field, never a score from it."""

from __future__ import annotations

import gzip
import io
import json
import lzma
import math
import os
import re
import tarfile
import zipfile
from pathlib import Path

import pandas as pd
import pytest

from gpuscale.mlperf.ingest import read_round
from gpuscale.sources import SourceError

from .logbuilder import RoundBuilder, line, result_log, system_json


def base() -> RoundBuilder:
    """A healthy system the damage must not touch."""
    rb = RoundBuilder()
    rb.system("Good", "box8").runs("Good", "box8", "bert", [10, 12, 11, 13, 9, 10, 11, 12, 10, 11])
    return rb


def scored(tables, org: str = "Good", system_id: str = "box8", bench: str = "bert") -> float:
    row = tables.scores[
        (tables.scores.org == org)
        & (tables.scores.system_id == system_id)
        & (tables.scores.benchmark == bench)
    ]
    assert len(row) == 1
    return float(row.iloc[0]["time_to_train_min"])


def problems(tables, kind: str | None = None) -> list[str]:
    rows = tables.problems if kind is None else tables.problems[tables.problems.kind == kind]
    return [f"{r.path}: {r.message}" for r in rows.itertuples()]


def read(rb: RoundBuilder, tmp_path: Path):
    tables = read_round(rb.write_dir(tmp_path))
    assert scored(tables) == pytest.approx(10.875)  # the healthy system is untouched
    return tables


def bad_runs(rb: RoundBuilder, logs: list[str], bench: str = "bert") -> RoundBuilder:
    rb.system("Bad", "b1")
    for i, text in enumerate(logs):
        rb.raw(f"Bad/results/b1/{bench}/result_{i}.txt", text)
    return rb


def test_latin1_bytes_in_a_log_are_read_as_the_official_parser_reads_them(tmp_path) -> None:
    logs = [result_log(minutes=m, seed=i) for i, m in enumerate([10, 11, 12, 13, 14])]
    text = logs[0].replace('"submission_platform", "box"', '"submission_platform", "caf\xe9"')
    raw = [t.encode("utf-8") for t in logs]
    raw[0] = text.encode("latin-1")  # not UTF-8
    raw[1] = logs[1].encode().replace(b'"train.py"', b'"tr\xffin.py"')  # \xff inside a string
    rb = base().system("Bad", "b1")
    for i, data in enumerate(raw):
        rb.raw(f"Bad/results/b1/bert/result_{i}.txt", data)
    tables = read(rb, tmp_path)
    runs = tables.runs[tables.runs.org == "Bad"]
    assert runs["counted"].all(), runs["problem"].tolist()


def test_deep_nesting_is_a_problem_not_a_crash(tmp_path) -> None:
    deep = "[" * 5000 + "]" * 5000
    logs = [result_log(minutes=m, seed=i) for i, m in enumerate([10, 11, 12, 13, 14])]
    logs[0] += ":::MLLOG " + json.dumps({"time_ms": 1, "key": "x", "metadata": {}})[:-1]
    logs[0] += ', "value": ' + deep + "}\n"
    rb = bad_runs(base(), logs)
    rb.raw("Bad/systems/deep.json", '{"system_name": ' + deep + "}")
    tables = read(rb, tmp_path)
    assert any("deep.json" in p and "nested" in p for p in problems(tables))
    assert any("result_0.txt" in p for p in problems(tables))


def test_run_stop_before_run_start_is_not_counted(tmp_path, golden) -> None:
    logs = [result_log(minutes=m, seed=i) for i, m in enumerate([10, 11, 12, 13, 14])]
    # the same lines, but run_stop stamped an hour before run_start
    logs[0] = _with_time(logs[0], "run_stop", "-3600000")
    tables = read(bad_runs(base(), logs), tmp_path)
    runs = tables.runs[tables.runs.org == "Bad"].set_index("run_file")
    assert not runs.loc["result_0.txt", "counted"]
    assert runs.loc["result_0.txt", "status"] == "impossible value"
    problem = runs.loc["result_0.txt", "problem"]
    assert "-3600000" in problem.replace(",", "")  # the time to train, as logged (ms)
    golden.check("mlperf/run_problems", "run_stop an hour before run_start", problem)
    assert (tables.runs["time_to_train_min"].dropna() > 0).all()


def _with_time(text: str, key: str, raw_time: str) -> str:
    out = []
    for row in text.splitlines():
        if f'"key": "{key}"' in row:
            payload = json.loads(row.split(":::MLLOG ", 1)[1])
            encoded = json.dumps(payload).replace(
                f'"time_ms": {json.dumps(payload["time_ms"])}', f'"time_ms": {raw_time}'
            )
            row = row.split(":::MLLOG ", 1)[0] + ":::MLLOG " + encoded
        out.append(row)
    return "\n".join(out) + "\n"


@pytest.mark.parametrize("raw_time", ["Infinity", "-Infinity", "NaN", "1" + "0" * 400, '"1e999"'])
def test_non_finite_run_times_never_score(tmp_path, raw_time: str) -> None:
    logs = [result_log(minutes=m, seed=i) for i, m in enumerate([10, 11, 12, 13, 14])]
    logs = [_with_time(t, "run_stop", raw_time) for t in logs]
    tables = read(bad_runs(base(), logs), tmp_path)
    bad = tables.scores[tables.scores.org == "Bad"]
    assert bad["time_to_train_min"].isna().all()
    assert tables.runs["time_to_train_min"].dropna().map(math.isfinite).all()
    assert any("Bad/results" in p for p in problems(tables))


@pytest.mark.parametrize("factor", ["0", "-1", "1e999", '"x"', "null"])
def test_bad_scaling_factor_gives_no_score(tmp_path, factor: str) -> None:
    rb = base().system("Bad", "b1").runs("Bad", "b1", "bert", [10, 11, 12, 13, 14])
    rb.raw("Bad/results/b1/bert/scaling.json", '{"scaling_factor": ' + factor + "}")
    tables = read(rb, tmp_path)
    assert math.isnan(scored(tables, "Bad", "b1"))
    assert any("scaling.json" in p for p in problems(tables))


@pytest.mark.parametrize(
    "nodes, per_node",
    [("0", "8"), ("1" + "0" * 25, "8"), ("1", "0"), ("-2", "8"), ("9" * 5000, "8")],
)
def test_impossible_system_counts_are_problems(tmp_path, nodes: str, per_node: str) -> None:
    rb = base().system("Bad", "b1", nodes=nodes, per_node=per_node)
    rb.runs("Bad", "b1", "bert", [10, 11, 12, 13, 14])
    tables = read(rb, tmp_path)
    system = tables.systems[tables.systems.org == "Bad"].iloc[0]
    assert pd.isna(system["accelerators"])
    assert any("b1.json" in p for p in problems(tables)), problems(tables)


@pytest.mark.parametrize("reading", [-5, 1e308, "NaN"])
def test_impossible_power_readings_give_no_energy(tmp_path, reading) -> None:
    rb = base().system("Bad", "b1").runs("Bad", "b1", "bert", [10, 11, 12, 13, 14])
    for i in range(5):
        power = "\n".join(
            [
                line("power_measurement_start", None, 0),
                line("power_reading", 500.0, 1000),
                line("power_reading", reading, 2000),
                line("power_measurement_stop", None, 3000),
            ]
        )
        rb.raw(f"Bad/results/b1/bert/power/result_{i}/node_0.txt", power)
    tables = read(rb, tmp_path)
    energy = tables.runs["energy_kj"].dropna()
    assert energy.map(math.isfinite).all() and (energy >= 0).all()
    assert any("physical range" in p or "power" in p for p in problems(tables, "power log"))


def test_math_text_in_a_system_name_is_drawn_as_text(tmp_path) -> None:
    from gpuscale.report.figures import systems_by_accelerator  # noqa: F401

    rb = base().system("Bad", "b1", model="GPU $\\frac{1}{0}$ ^_^ $", system_name="$x^2$")
    rb.runs("Bad", "b1", "bert", [10, 11, 12, 13, 14])
    tables = read(rb, tmp_path)
    from gpuscale.analysis import AnalysisOptions
    from gpuscale.report.html import build_report

    out = build_report(tables, ["bert"], tmp_path / "report", AnalysisOptions(n_boot=100))
    assert "frac" in out.read_text()


def test_unreadable_files_and_folders_are_problems(tmp_path, monkeypatch) -> None:
    # Permissions do not stop root: the reads themselves are made to fail.
    import gpuscale.sources.directories as sources

    rb = base().system("Bad", "b1").runs("Bad", "b1", "bert", [10, 11, 12, 13, 14])
    rb.system("Bad", "b2").runs("Bad", "b2", "bert", [10, 11, 12, 13, 14])
    root = rb.write_dir(tmp_path)
    real_scandir, real_read = os.scandir, sources.read_file

    def scandir(path):
        if str(path).endswith("Bad/results/b2"):
            raise PermissionError(13, "Permission denied")
        return real_scandir(path)

    def read_file(path, *limit):
        if str(path).endswith(("b1.json", "b1/bert/result_0.txt")):
            raise PermissionError(13, "Permission denied")
        return real_read(path, *limit)

    monkeypatch.setattr(sources.os, "scandir", scandir)
    monkeypatch.setattr(sources, "read_file", read_file)
    tables = read_round(root)
    assert scored(tables) == pytest.approx(10.875)
    unreadable = problems(tables, "unreadable")
    assert any(p.startswith("Bad/results/b2:") for p in unreadable), unreadable
    assert any("b1.json" in p for p in unreadable)
    assert any("result_0.txt" in p for p in unreadable)


def test_results_that_are_a_file_are_reported(tmp_path) -> None:
    rb = base().raw("Bad/results", "not a folder").raw("Bad/systems/b1.json", "{}")
    tables = read(rb, tmp_path)
    assert any(p.startswith("Bad/results:") for p in problems(tables, "not a file"))


def test_a_name_that_is_not_utf8_is_read_under_an_escaped_name(tmp_path) -> None:
    rb = base()
    root = rb.write_dir(tmp_path)
    folder = os.path.join(os.fsencode(root), b"Bad\xff", b"results", b"b1", b"bert")
    os.makedirs(folder)
    for i, m in enumerate([10, 11, 12, 13, 14]):
        with open(os.path.join(folder, b"result_%d.txt" % i), "w") as f:
            f.write(result_log(minutes=m, seed=i))
    tables = read_round(root)
    assert "Bad\\xff" in set(tables.runs.org)
    assert any("not UTF-8" in p for p in problems(tables))
    tables.runs.to_csv(tmp_path / "runs.csv")  # the escaped names write anywhere


def test_zip_members_encrypted_or_unsupported_are_problems(tmp_path) -> None:
    rb = base()
    path = rb.write_zip(tmp_path)
    with zipfile.ZipFile(path, "a") as zf:
        zf.writestr(f"{rb.name}/Bad/systems/b1.json", json.dumps(system_json()))
        zf.writestr(f"{rb.name}/Bad/results/b1/bert/result_0.txt", result_log())
    blob = bytearray(path.read_bytes())
    local = blob.rfind(b"PK\x03\x04")  # the last member's local header: mark it encrypted
    blob[local + 6] |= 0x1
    central = blob.rfind(b"PK\x01\x02")
    blob[central + 8] |= 0x1
    path.write_bytes(bytes(blob))
    tables = read_round(path)
    assert scored(tables) == pytest.approx(10.875)
    assert any("result_0.txt" in p for p in problems(tables, "corrupt archive"))


def six_systems_tar_xz(noise) -> tuple[RoundBuilder, bytes]:  # type: ignore[no-untyped-def]
    """A round of six systems as a .tar.xz, with 40 kB of ``noise(n)`` (incompressible)
    beside each system's logs, so that damage to the archive lands among them."""
    rb = RoundBuilder()
    for n in range(6):
        rb.system("Acme", f"s{n}").runs("Acme", f"s{n}", "bert", [10 + n] * 10)
        rb.raw(f"Acme/results/s{n}/bert/result_5.bin", noise(40_000))
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        for name, data in sorted(rb.files.items()):
            info = tarfile.TarInfo(f"{rb.name}/{name}")
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return rb, lzma.compress(buf.getvalue())


# flip-N: the middle byte flipped, the noise drawn with seed N (27 and 33: the flip
# decompresses to a garbage header that tarfile took for the archive's end)
@pytest.mark.parametrize("damage", ["truncate", "flip-7", "flip-27", "flip-33"])
def test_a_damaged_archive_never_scores_from_too_few_runs(tmp_path, damage: str) -> None:
    """Nothing lost silently: a flipped byte can decompress to a garbage tar header that
    tarfile takes for the archive's end (a quarter of random flips once did)."""
    import random

    noise = random.Random(int(damage.split("-")[1]) if "-" in damage else 7)
    rb, packed = six_systems_tar_xz(noise.randbytes)
    if damage == "truncate":
        packed = packed[: len(packed) // 2]
    else:
        blob = bytearray(packed)
        blob[len(blob) // 2] ^= 0xFF
        packed = bytes(blob)
    path = tmp_path / f"{rb.name}.tar.xz"
    path.write_bytes(packed)
    tables = read_round(path)
    assert problems(tables, "corrupt archive")
    runs = tables.runs.groupby(["org", "system_id"]).size()
    for row in tables.scores.itertuples():
        if not math.isnan(row.time_to_train_min):
            assert runs[(row.org, row.system_id)] >= 10  # never from fewer than the rules
        else:
            assert row.score_reason


def test_a_result_file_named_in_no_utf8_is_one_run_not_two(tmp_path) -> None:
    """A log saved as `result_\\xff\\xfe.txt` is one run, parsed (success, counted), not
    also an unreadable file counted as a failed run."""
    rb = base()
    root = rb.write_dir(tmp_path)
    folder = os.path.join(os.fsencode(root), b"Bad", b"results", b"b1", b"bert")
    os.makedirs(folder)
    for i, m in enumerate([10, 11, 12, 13, 14]):
        name = b"result_\xff\xfe.txt" if i == 0 else b"result_%d.txt" % i
        with open(os.path.join(folder, name), "w") as f:
            f.write(result_log(minutes=m, seed=i))
    runs = read_round(root).runs
    bad = runs[runs["org"] == "Bad"]
    assert len(bad) == 5 and bad["run_file"].is_unique, bad[["run_file", "status"]]
    assert bad["counted"].all() and set(bad["status"]) == {"success"}


@pytest.mark.parametrize(
    "content",
    # mtime=0: the same bytes in every process (pytest-xdist's workers collect alike)
    [b"", gzip.compress(b"", mtime=0), gzip.compress(b"\0" * 1024, mtime=0)],
    ids=["empty", "gzip of nothing", "gzip of a zero block"],
)
def test_an_empty_archive_says_so_before_any_word_on_round_names(tmp_path, content, golden) -> None:
    """An empty tar, a gzip of nothing and a 0-byte file: the archive is what is wrong, said
    before any word on the round its name does not give."""
    path = tmp_path / "nothing.tar.gz"
    path.write_bytes(content)
    with pytest.raises(SourceError) as caught:
        read_round(path)
    said = str(caught.value)
    assert said.startswith(str(path)) and "round_name" not in said
    golden.check("mlperf/source_refusals", "an empty archive", said, paths={str(tmp_path): "<tmp>"})


def test_a_command_reading_a_cut_archive_says_what_was_not_read(tmp_path, golden) -> None:
    """``gpuscale scores PATH`` on an archive cut short keeps what it read, says on stderr
    that not all was read, after which member, and that its numbers are of that part,
    and exits 1 (it exited 0: a script reading its CSV took a part for the round); the
    whole archive exits 0, and so does ``ingest``'s exit follow the same rule."""
    from typer.testing import CliRunner

    from gpuscale.cli import app

    rb, packed = six_systems_tar_xz(os.urandom)
    whole = tmp_path / "whole" / f"{rb.name}.tar.xz"
    whole.parent.mkdir()
    whole.write_bytes(packed)
    assert CliRunner().invoke(app, ["scores", str(whole), "-f", "csv"]).exit_code == 0
    path = tmp_path / f"{rb.name}.tar.xz"
    path.write_bytes(packed[: len(packed) // 2])
    result = CliRunner().invoke(app, ["scores", str(path), "-f", "csv"])
    assert result.exit_code == 1, result.output
    assert "Acme" in result.stdout  # what was read before the cut
    said = [x for x in result.stderr.splitlines() if "NOT ALL READ: corrupt archive" in x]
    assert len(said) == 1 and "after Acme/" in said[0]  # the last member read
    warned = [x for x in result.stderr.splitlines() if x.startswith("warning: ")]
    assert len(warned) == 1 and "of the part read" in warned[0] and rb.name[-4:] in warned[0]
    ingest = CliRunner().invoke(app, ["ingest", str(path), "--out", str(tmp_path / "t")])
    assert ingest.exit_code == 1 and (tmp_path / "t").is_dir(), ingest.output
    assert warned[0] in ingest.stderr.splitlines()  # the same warning, the same status
    # where the cut falls (random bytes) and the decompressor's words are not gpuscale's
    words = re.sub(r"after Acme/\S+ \(.*?\)", "after <member> (<error>)", said[0])
    golden.check("mlperf/source_refusals", "a cut archive, read by a command", words)


ESCAPES = "\x1b]0;TITLE\x07\x1b[2J\x00\u202e"
ESCAPED = "\\x1b]0;TITLE\\x07\\x1b[2J\\x00\\u202e"  # as the tables hold them


def test_control_characters_from_logs_are_stored_as_escapes_never_raw(tmp_path) -> None:
    """A terminal's escape sequences, a NUL and a bidirectional override in a system's
    description and in an archive member's name: every table holds their escapes
    (``\\x1b``), the CLI prints none of them raw and the report holds none (raw, they
    would retitle the terminal and clear it)."""
    from typer.testing import CliRunner

    from gpuscale.cli import app

    rb = base()
    rb.files["Evil/systems/e1.json"] = json.dumps(
        system_json(name="e1", submitter=f"Evil{ESCAPES}", system_name=f"box{ESCAPES}")
    ).encode()
    rb.runs("Evil", "e1", "bert", [10, 12, 11, 13, 9, 10, 11, 12, 10, 11])
    archive = rb.write_tar(tmp_path, "", {f"{rb.name}/../{ESCAPES}.txt": b"x"})
    tables = read_round(archive)
    assert scored(tables, "Evil", "e1") == pytest.approx(10.875)  # the score is kept
    texts = [
        str(v)
        for frame in (tables.systems, tables.runs, tables.scores, tables.problems)
        for column in frame.columns
        for v in frame[column].dropna()
    ]
    assert not [t for t in texts if any(c in t for c in "\x1b\x07\x00\u202e")]
    assert "Evil" + ESCAPED in texts
    assert any("\\x1b" in t for t in tables.problems["path"])
    out = CliRunner().invoke(app, ["scores", str(archive)])
    assert out.exit_code == 0 and "Evil" in out.output
    assert not any(c in out.output for c in "\x07\x00\u202e") and "\x1b]" not in out.output
    report = CliRunner().invoke(app, ["report", str(archive), "--out", str(tmp_path / "r")])
    assert report.exit_code == 0, report.output
    page = (tmp_path / "r" / "index.html").read_text()
    assert not any(c in page for c in "\x1b\x07\x00\u202e") and "Evil\\x1b" in page


@pytest.mark.parametrize(
    ("name", "content"),
    [
        ("training_results_v4.1.tar.xz", b""),  # named for its round: read as a tar
        ("training_results_v5.0.zip", b"not a zip"),
        ("x.zip", b""),  # its name says no round: its top folder is looked for first
    ],
)
def test_an_archive_read_not_at_all_says_what_to_do(tmp_path, name, content) -> None:
    """An archive that cannot be read at all said why ("not a readable tar archive
    (empty file)") and nothing more: no way out."""
    from gpuscale.sources.archives import READ_AGAIN

    path = tmp_path / name
    path.write_bytes(content)
    with pytest.raises(SourceError) as caught:
        read_round(path)
    said = str(caught.value)
    assert said.startswith(f"{path}: ") and said.endswith(f": {READ_AGAIN}"), said

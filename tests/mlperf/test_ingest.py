"""Reading synthetic rounds from directories and archives, including bad input."""

from __future__ import annotations

import io
import json
import tarfile
from pathlib import Path

import pandas as pd
import pytest

from gpuscale.mlperf.ingest import read_round
from gpuscale.mlperf.layout import round_name_from_path
from gpuscale.sources import SourceError
from gpuscale.tables import (
    PROBLEMS_COLUMNS,
    RUNS_COLUMNS,
    SCORES_COLUMNS,
    SYSTEMS_COLUMNS,
    ProblemKind,
)
from gpuscale.tables.views import reading_notes

from .logbuilder import RoundBuilder, result_log


def good_round() -> RoundBuilder:
    rb = RoundBuilder()
    rb.system("Acme", "box8").runs("Acme", "box8", "bert", [10, 12, 11, 13, 9, 10, 11, 12, 10, 11])
    rb.system("Acme", "box16", nodes="2").runs("Acme", "box16", "ssd", [6, 5, 7, 6, 6])
    return rb


def score_of(tables, system_id: str, bench: str) -> float:
    row = tables.scores[(tables.scores.system_id == system_id) & (tables.scores.benchmark == bench)]
    assert len(row) == 1
    return row.iloc[0]["time_to_train_min"]


def test_schema_columns(tmp_path: Path) -> None:
    tables = read_round(good_round().write_dir(tmp_path))
    assert tuple(tables.systems.columns) == SYSTEMS_COLUMNS
    assert tuple(tables.runs.columns) == RUNS_COLUMNS
    assert tuple(tables.scores.columns) == SCORES_COLUMNS
    assert tuple(tables.problems.columns) == PROBLEMS_COLUMNS


def test_scores_are_olympic_means(tmp_path: Path) -> None:
    tables = read_round(good_round().write_dir(tmp_path))
    bert = sorted([10, 12, 11, 13, 9, 10, 11, 12, 10, 11])[1:-1]
    assert score_of(tables, "box8", "bert") == pytest.approx(sum(bert) / len(bert))
    assert score_of(tables, "box16", "ssd") == pytest.approx(6.0)
    box16 = tables.systems.set_index("system_id").loc["box16"]
    assert box16["accelerators"] == 16 and box16["accelerator_family"] == "H100-SXM5-80GB"
    assert tables.problems.empty
    assert tables.runs["kept"].sum() == 8 + 3


@pytest.mark.parametrize("kind", ["dir", "tar", "tar.gz", "tar.xz", "zip"])
def test_every_source_gives_the_same_tables(tmp_path: Path, kind: str) -> None:
    rb = good_round()
    path = {
        "dir": lambda: rb.write_dir(tmp_path),
        "tar": lambda: rb.write_tar(tmp_path, ""),
        "tar.gz": lambda: rb.write_tar(tmp_path, "gz"),
        "tar.xz": lambda: rb.write_tar(tmp_path, "xz"),
        "zip": lambda: rb.write_zip(tmp_path),
    }[kind]()
    reference = read_round(rb.write_dir(tmp_path / "ref"))
    tables = read_round(path)
    assert tables.scores["round"].unique().tolist() == ["v4.1"]
    pd.testing.assert_frame_equal(tables.scores, reference.scores)
    pd.testing.assert_frame_equal(tables.runs, reference.runs)


@pytest.mark.parametrize(
    ("path", "round_name"),
    [
        ("/x/training_results_v4.1.tar.xz", "v4.1"),
        ("training_results_v5.0", "v5.0"),
        ("my_results", None),
    ],
)
def test_round_name_detection(path: str, round_name: str | None) -> None:
    assert round_name_from_path(path) == round_name


def test_bad_runs_are_dropped_with_reasons(tmp_path: Path) -> None:
    rb = RoundBuilder().system("Acme", "box", per_node="8")
    rb.runs("Acme", "box", "bert", [10, 11, 12, 13, 14, 15, 16, 17, 18])
    rb.raw(
        "Acme/results/box/bert/result_9.txt",
        result_log(minutes=1, status="aborted", converged=False),
    )
    tables = read_round(rb.write_dir(tmp_path))
    run = tables.runs[tables.runs.run_file == "result_9.txt"].iloc[0]
    assert run["status"] == "aborted" and not run["counted"]
    # the failed run replaces the slowest dropped run: mean of sorted[1:]
    assert score_of(tables, "box", "bert") == pytest.approx(sum(range(11, 19)) / 8)
    assert "quality target" in tables.problems.iloc[0]["message"]


BAD_LOGS = {
    "result_0.txt": result_log(minutes=10, run_stop=False),
    "result_1.txt": result_log(minutes=10).replace('"value": 256', '"value": 256,,'),
    "result_2.txt": result_log(minutes=10).replace("\n", "\r\n"),
    "result_3.txt": result_log(minutes=10)[:-40],
    "result_4.txt": b"\x89PNG\r\n\x1a\n\x00\x00\x00binary",
}


def test_malformed_logs_become_problems(tmp_path: Path, golden) -> None:
    rb = RoundBuilder().system("Acme", "box")
    for name, content in BAD_LOGS.items():
        rb.raw(f"Acme/results/box/bert/{name}", content)
    tables = read_round(rb.write_dir(tmp_path))
    status = dict(zip(tables.runs.run_file, tables.runs.status, strict=True))
    assert status == {
        "result_0.txt": "missing run_stop",
        "result_1.txt": "parse error",
        "result_2.txt": "success",
        "result_3.txt": "parse error",
        "result_4.txt": "not text",
    }
    scores = tables.scores.iloc[0]
    assert pd.isna(scores["time_to_train_min"])
    # each run that did not count, by the status the runs table gives it (not "failed or
    # did not converge", which v1.1's noncompliant, converged runs belie)
    said = scores["score_reason"]
    counts = pd.Series(list(status.values())).value_counts().drop("success")
    assert said.split()[0] == str(counts.sum()), said
    assert all(f"{n} {kind}" in said for kind, n in counts.items()), said
    golden.check("mlperf/score_reasons", "four runs of five malformed", said)
    assert said.endswith("; at most 1 may not")
    assert set(tables.problems.kind) >= {"missing run_stop", "parse error", "not text", "no score"}


def test_structure_problems(tmp_path: Path, golden) -> None:
    rb = good_round()
    rb.runs("Acme", "ghost", "bert", [1, 2, 3])  # results, no system JSON
    rb.runs("Acme", "box8", "teleport", [1, 2, 3])  # unknown benchmark
    rb.system("Acme", "odd", nodes="", per_node="N/A")  # empty numeric fields
    rb.raw("Acme/systems/broken.json", b"{not json")
    rb.raw("Acme/results/box8/gnn/scaling.json", b'{"factor": 2}')
    tables = read_round(rb.write_dir(tmp_path))
    (tmp_path / "training_results_v4.1/Acme/results/box8/dlrm_dcnv2").mkdir()
    tables_empty = read_round(tmp_path / "training_results_v4.1")
    kinds = set(tables.problems.kind)
    assert {
        ProblemKind.MISSING_SYSTEM,
        ProblemKind.UNKNOWN_BENCHMARK,
        ProblemKind.BAD_FIELD,
        ProblemKind.BAD_SYSTEM,
        ProblemKind.BAD_SCALING,
    } <= kinds
    assert ProblemKind.EMPTY_BENCHMARK in set(tables_empty.problems.kind)
    odd = tables.systems.set_index("system_id").loc["odd"]
    assert pd.isna(odd["accelerators"])
    ghost = tables.scores[tables.scores.system_id == "ghost"].iloc[0]
    assert pd.isna(ghost["time_to_train_min"]) and "ghost.json" in ghost["score_reason"]
    golden.check(
        "mlperf/score_reasons", "results without a system description", ghost["score_reason"]
    )
    # the good results are still there
    assert score_of(tables, "box16", "ssd") == pytest.approx(6.0)


def test_scaling_factor_multiplies(tmp_path: Path) -> None:
    rb = good_round().raw(
        "Acme/results/box16/ssd/scaling.json", json.dumps({"scaling_factor": 1.25})
    )
    tables = read_round(rb.write_dir(tmp_path))
    assert score_of(tables, "box16", "ssd") == pytest.approx(7.5)


def test_unsafe_archive_members_are_skipped(tmp_path: Path, golden) -> None:
    evil = {
        "../evil.txt": b"x",
        "/etc/passwd_copy": b"x",
        "training_results_v4.1/Acme/results/box8/bert/../../../../../x.txt": b"x",
    }
    path = good_round().write_tar(tmp_path, "gz", extra_members=evil)
    tables = read_round(path)
    unsafe = tables.problems[tables.problems.kind == "unsafe path"]
    assert len(unsafe) == 3
    # each named where it is said, not only why it was skipped
    said = "\n".join(reading_notes(tables.problems))
    assert "../evil.txt" in said and "/etc/passwd_copy" in said
    golden.check("mlperf/reading_notes", "three unsafe archive members", said)
    assert score_of(tables, "box16", "ssd") == pytest.approx(6.0)
    assert not (tmp_path.parent / "evil.txt").exists()


def test_truncated_archive_keeps_what_was_read(tmp_path: Path) -> None:
    path = good_round().write_tar(tmp_path, "")
    data = path.read_bytes()
    cut = tmp_path / "training_results_v4.1_cut.tar"
    cut.write_bytes(data[: int(len(data) * 0.7)])
    tables = read_round(cut, round_name="v4.1")
    assert "corrupt archive" in set(tables.problems.kind)
    assert len(tables.runs) > 0


def test_not_an_archive(tmp_path: Path) -> None:
    bogus = tmp_path / "training_results_v4.1.tar.xz"
    bogus.write_bytes(b"not xz at all")
    with pytest.raises(SourceError):
        read_round(bogus)
    with pytest.raises(SourceError):
        read_round(tmp_path / "missing_v1.0")


def test_tar_member_that_is_a_link_is_not_read(tmp_path: Path) -> None:
    path = tmp_path / "training_results_v4.1.tar"
    with tarfile.open(path, "w") as tar:
        info = tarfile.TarInfo("training_results_v4.1/Acme/results/box/bert/result_0.txt")
        info.type = tarfile.SYMTYPE
        info.linkname = "/etc/passwd"
        tar.addfile(info)
        data = b"{}"
        info = tarfile.TarInfo("training_results_v4.1/Acme/systems/box.json")
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))
    tables = read_round(path)
    assert "not a file" in set(tables.problems.kind)


@pytest.mark.parametrize("kind, unit", [("dir", "result files"), ("tar.gz", "files")])
def test_progress_names_what_it_counts(tmp_path: Path, kind: str, unit: str) -> None:
    rb = good_round()
    path = rb.write_dir(tmp_path) if kind == "dir" else rb.write_tar(tmp_path, "gz")
    calls: list[tuple[int, int, str]] = []
    read_round(path, progress=lambda d, t, u: calls.append((d, t, u)))
    assert calls and {u for _, _, u in calls} == {unit}
    done, total, _ = calls[-1]
    if kind == "dir":
        assert (done, total) == (15, 15)  # 10 + 5 result files
    else:
        assert total == 0 and done >= 15  # every member read, the total not known ahead


@pytest.mark.parametrize("same_runs", [True, False])
def test_a_system_folder_copied_under_another_case_is_a_duplicate(
    tmp_path: Path, same_runs: bool, golden
) -> None:
    """``box8`` copied as ``Box8`` is one system: scored once, the copy a problem row."""
    rb = good_round()
    for rel, data in list(rb.files.items()):
        if "/box8" in rel:
            rb.files[rel.replace("/box8", "/Box8")] = data
    if not same_runs:
        rb.runs("Acme", "Box8", "bert", [20, 22, 21, 23, 19, 20, 21, 22, 20, 21])
    tables = read_round(rb.write_dir(tmp_path))
    assert sorted(tables.scores["system_id"]) == ["Box8", "box16"]  # the first by name kept
    duplicate = tables.problems[tables.problems["kind"] == "duplicate input"]
    assert [p.split("/") for p in duplicate["path"]] == [["Acme", "results", "box8", "bert"]]
    message = duplicate["message"].iloc[0]
    assert "/Box8/" in message  # the copy kept
    assert ("same runs" in message) == same_runs
    case = f"a system folder copied under another case, {'the same' if same_runs else 'other'} runs"
    golden.check("mlperf/duplicates", case, message)

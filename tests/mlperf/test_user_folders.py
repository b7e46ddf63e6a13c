"""A user's own results folder, damaged as such folders are: every file left unread is
named with why, and a score from fewer files says so. Each case builds its own round."""

from __future__ import annotations

import os

import pytest

from gpuscale.mlperf.ingest import read_round
from gpuscale.mlperf.layout import round_name_from_path
from gpuscale.tables.views import reading_notes

from .logbuilder import RoundBuilder, result_log
from .test_hostile import problems, scored

# Ten runs of one result; olympic average 10.875 min (drop 9 and 13, mean of the rest)
TEN = [10, 12, 11, 13, 9, 10, 11, 12, 10, 11]
FOLDER = "Misn/results/m1/bert"
# result_1 (12 min), result_3 (13) and result_9 (11) renamed off result_<n>.txt
RENAMED = {"result_1.txt": "result_1.log", "result_3.txt": "result3.txt"}
RENAMED |= {"result_9.txt": "result_9.txt.bak"}


def _misnamed_round() -> RoundBuilder:
    rb = RoundBuilder().system("Misn", "m1").runs("Misn", "m1", "bert", TEN)
    for old, new in RENAMED.items():
        rb.files[f"{FOLDER}/{new}"] = rb.files.pop(f"{FOLDER}/{old}")
    log = result_log(benchmark="bert", minutes=10, ruleset="4.1.0")
    rb.raw(f"{FOLDER}/old/result_0.txt", log)  # a log one folder too deep
    rb.raw("Misn/results/m1/result_0.txt", log)  # a log outside any benchmark folder
    rb.raw(f"{FOLDER}/notes.md", "what we ran")  # not named like a log: not said
    return rb


@pytest.mark.parametrize("form", ["dir", "tar.gz", "zip"])
def test_logs_named_off_result_n_txt_are_each_named_and_the_score_says_fewer(
    tmp_path, form: str
) -> None:
    rb = _misnamed_round()
    source = {
        "dir": rb.write_dir,
        "tar.gz": lambda p: rb.write_tar(p, "gz"),
        "zip": rb.write_zip,
    }[form](tmp_path)
    tables = read_round(source)
    said = problems(tables, "unread log")
    where = {p.split(": ", 1)[0]: p.split(": ", 1)[1] for p in said}
    assert sorted(where) == sorted(
        [f"{FOLDER}/{new}" for new in RENAMED.values()]
        + [f"{FOLDER}/old/result_0.txt", "Misn/results/m1/result_0.txt"]
    )
    assert all("result_*.txt" in m and "not read" in m for m in where.values())
    assert "but off result_<n>.txt" in where[f"{FOLDER}/result_1.log"]
    assert "below its benchmark folder" in where[f"{FOLDER}/old/result_0.txt"]
    assert "outside any benchmark folder" in where["Misn/results/m1/result_0.txt"]
    # the 7 runs read, as MLCommons' summarizer reads them: 9, 10, 10, 10, 11, 11, 12
    # less the fastest and slowest: mean of 10, 10, 10, 11, 11 = 10.4 min
    row = tables.scores[tables.scores.org == "Misn"].iloc[0]
    assert (row.runs, row.runs_converged, row.runs_required) == (7, 7, 10)
    assert scored(tables, "Misn", "m1") == pytest.approx(10.4)
    assert row.score_reason.startswith("scored from 7 of the 10 result files")
    notes = reading_notes(tables.problems)
    assert notes[0].startswith("v4.1: 6 problems reading it (unread log 5, fewer runs 1)")
    assert sum("NOT ALL READ: unread log: Misn/results/m1/" in n for n in notes) == 3
    assert notes[-1].endswith("(and 2 more)")


def test_a_clean_copy_scores_as_its_rename_back(tmp_path) -> None:
    """Renamed back to result_<n>.txt, the same logs give the full result, unflagged."""
    rb = RoundBuilder().system("Misn", "m1").runs("Misn", "m1", "bert", TEN)
    tables = read_round(rb.write_dir(tmp_path))
    assert scored(tables, "Misn", "m1") == pytest.approx(10.875)
    assert tables.problems.empty


@pytest.mark.parametrize("damage", ["cut", "fifo", "missing"])
def test_a_system_description_there_but_unusable_is_said_so_not_missing(tmp_path, damage) -> None:
    rb = RoundBuilder().system("Misn", "m1").runs("Misn", "m1", "bert", TEN)
    described = rb.files.pop("Misn/systems/m1.json")
    if damage == "cut":
        rb.raw("Misn/systems/m1.json", described[:40])
    root = rb.write_dir(tmp_path)
    if damage == "fifo":  # a file no reader can open as a regular file
        (root / "Misn/systems").mkdir()
        os.mkfifo(root / "Misn/systems/m1.json")
    tables = read_round(root)
    row = tables.scores[tables.scores.org == "Misn"].iloc[0]
    assert row.time_to_train_min != row.time_to_train_min  # no system: no score
    assert (row.runs, row.runs_converged) == (10, 10)  # the runs read all the same
    said = {p.split(": ", 1)[0]: p for p in problems(tables, "bad system description")}
    said |= {p.split(": ", 1)[0]: p for p in problems(tables, "missing system")}
    said |= {p.split(": ", 1)[0]: p for p in problems(tables, "not a file")}
    if damage != "missing":
        assert (
            row.score_reason
            == "system description unusable (Misn/systems/m1.json: see its problem)"
        )
        why = "not valid JSON" if damage == "cut" else "not a regular file"
        assert why in said["Misn/systems/m1.json"]
        assert "Misn/systems/m1.json could not be used" in said["Misn/results/m1/bert"]
    else:
        assert row.score_reason == "no system description (Misn/systems/m1.json)"
        assert "results without Misn/systems/m1.json" in said["Misn/results/m1/bert"]


def test_a_result_in_a_folder_no_benchmark_is_named_says_its_score_is_unchecked(
    tmp_path,
) -> None:
    """``BERT/`` for ``bert/``: its runs are averaged as the olympic rule does (10.875 min)
    but checked against no benchmark's rules, and its score_reason says so."""
    rb = RoundBuilder().system("Misn", "m1").runs("Misn", "m1", "bert", TEN)
    rb.files = {k.replace("/bert/", "/BERT/"): v for k, v in rb.files.items()}
    tables = read_round(rb.write_dir(tmp_path))
    row = tables.scores[tables.scores.org == "Misn"].iloc[0]
    assert row.benchmark == "BERT" and row.time_to_train_min == pytest.approx(10.875)
    assert row.score_reason == (
        "scored unchecked: 'BERT' is not a benchmark of ruleset 4.1.0 (did you mean 'bert'?)"
    )
    kinds = tables.problems[tables.problems.path == "Misn/results/m1/BERT"].kind.tolist()
    assert kinds == ["unknown benchmark"]  # said once, not as 'fewer runs' too


def test_files_saved_as_utf16_are_said_to_be_utf16(tmp_path) -> None:
    """A log and a system description saved by a Windows editor as "Unicode": neither
    MLCommons' tool reads them (latin-1 and UTF-8), so neither does gpuscale; each says
    what it is. The log is one failed run: 9 of 10 counted, as the official rule counts."""
    rb = RoundBuilder().system("Misn", "m1").runs("Misn", "m1", "bert", TEN)
    rb.system("Misn", "m2").runs("Misn", "m2", "bert", TEN)
    for rel in (f"{FOLDER}/result_4.txt", "Misn/systems/m2.json"):
        rb.files[rel] = rb.files[rel].decode("latin-1").encode("utf-16")
    tables = read_round(rb.write_dir(tmp_path))
    said = dict(zip(tables.problems.path, tables.problems.message, strict=True))
    assert said[f"{FOLDER}/result_4.txt"].startswith("UTF-16 text, which the official parser")
    assert said["Misn/systems/m2.json"].startswith("UTF-16 text, not the UTF-8 JSON")
    row = tables.scores[tables.scores.system_id == "m1"].iloc[0]
    assert (row.runs, row.runs_converged) == (10, 9)
    # result_4 (9 min) failed, standing for the slowest: of the 9 counted, only the fastest
    # (10) is dropped; 10, 10, 11, 11, 11, 12, 12, 13 average 11.25 min
    assert row.time_to_train_min == pytest.approx(11.25)


@pytest.mark.parametrize(
    ("name", "said"),
    [
        ("training_results_v4.1 (1).zip", "v4.1"),  # a browser's second download
        ("training_results_v4.1 - Copy", "v4.1"),  # Windows Explorer's copy
        ("training_results_v5.0-main copy 2.tar.gz", "v5.0"),  # macOS Finder's
        ("training_results_v4.1 (draft)", None),  # not a copy's name: the round not said
    ],
)
def test_a_second_copys_name_still_says_its_round(name: str, said: str | None) -> None:
    assert round_name_from_path(name) == said


def test_a_second_download_is_read_as_its_round(tmp_path) -> None:
    """``training_results_v4.1 (1).zip`` holding ``training_results_v4.1 (1)/``: read as
    v4.1, the scores those of the folder as published (10.875 min)."""
    rb = RoundBuilder().system("Misn", "m1").runs("Misn", "m1", "bert", TEN)
    rb.name = "training_results_v4.1 (1)"  # after the logs, which say ruleset 4.1.0
    tables = read_round(rb.write_zip(tmp_path))
    assert set(tables.scores["round"]) == {"v4.1"} and tables.problems.empty
    assert scored(tables, "Misn", "m1") == pytest.approx(10.875)


def test_result_files_under_a_misspelt_results_folder_are_named(tmp_path) -> None:
    """``Misn/result/...`` (singular): neither tool reads its logs; each is named, and the
    result is not in the scores at all."""
    rb = RoundBuilder().system("Misn", "m1").runs("Misn", "m1", "bert", TEN[:2])
    rb.files = {k.replace("/results/", "/result/"): v for k, v in rb.files.items()}
    tables = read_round(rb.write_dir(tmp_path))
    said = problems(tables, "unread log")
    assert [p.split(": ", 1)[0] for p in said] == [
        "Misn/result/m1/bert/result_0.txt",
        "Misn/result/m1/bert/result_1.txt",
    ]
    assert all("outside <org>/results/<system>/<benchmark>/" in p for p in said)
    assert tables.scores.empty


def _cut_logs(count: int) -> RoundBuilder:
    """Misn's BERT result with ``count`` of its ten logs cut short (no run_stop line)."""
    rb = RoundBuilder().system("Misn", "m1").runs("Misn", "m1", "bert", TEN)
    for i in range(count):
        start = 1_000_000 + i * 60_000  # the run's own start, as RoundBuilder gives it
        cut = result_log(benchmark="bert", minutes=TEN[i], seed=i, start_ms=start, run_stop=False)
        rb.raw(f"{FOLDER}/result_{i}.txt", cut)
    return rb


def test_a_users_folders_damaged_logs_are_each_named_an_official_rounds_counted(
    tmp_path, golden
) -> None:
    """A truncated log was named only in the problems table, the note counting kinds
    (``missing run_stop 7``): a user's folder names the first five files on stderr and
    how many more; an official round's note (many such logs) stays a count."""
    from typer.testing import CliRunner

    from gpuscale.cli import app

    root = _cut_logs(7).write_dir(tmp_path).rename(tmp_path / "mine")
    tables = read_round(root, "v4.1")
    cut = tables.problems[tables.problems["kind"] == "missing run_stop"]
    assert sorted(cut["path"]) == [f"{FOLDER}/result_{i}.txt" for i in range(7)]
    result = CliRunner().invoke(app, ["scores", str(root), "--round", "v4.1", "-f", "csv"])
    assert result.exit_code == 0, result.output
    (line,) = [n for n in result.stderr.splitlines() if "damaged run logs" in n]
    assert line.count(f"{FOLDER}/result_") == 5 and line.endswith(
        "and 2 more (each in problems.csv, as above)"
    )
    golden.check("mlperf/reading_notes", "a user's folder with seven cut logs", line)
    official = [n for n in reading_notes(tables.problems) if "damaged" in n]
    assert official == []  # read as the round v4.1 itself: counted only
    assert "missing run_stop 7" in reading_notes(tables.problems)[0]

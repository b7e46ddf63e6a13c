"""A results file the bench loader refuses or reads in part: the command its refusal
suggests is one `gpuscale bench` runs, an empty file is said to be empty, and a line cut
short is named with the column the parser stopped at."""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

import pytest

from gpuscale.bench.results import BenchFile, ResultsError, load_bench, read_results
from gpuscale.bench.results_file import append_result, check_results_out
from gpuscale.bench.sweep_request import RESULTS_OUT
from gpuscale.sources.bounded import BENCH_FILE

from ..builders import bench_record


def _suggested_out(message: str) -> Path:
    """The --out of the `gpuscale bench --out X` a refusal suggests."""
    found = re.search(r"`gpuscale bench --out ([^`]+)`", message)
    assert found, message
    return Path(shlex.split(found.group(1))[0])


@pytest.mark.parametrize(
    ("name", "content"),
    [
        ("other.jsonl", b'{"hello": 1}\n'),  # JSON lines of another tool
        ("half.jsonl", b'{"a":'),  # one line cut short: no record at all
        ("training_results_v0.7.tar.xz", b"\xfd7zXZ\x00\x00binary"),  # a round's archive
        ("notes.txt", b"some text\n"),
    ],
)
def test_a_refusal_suggests_a_bench_out_that_bench_takes(
    tmp_path: Path, name: str, content: bytes
) -> None:
    """`analyze --bench other.jsonl` suggested `gpuscale bench --out other.jsonl`, which
    bench refuses (a file of other lines, or a name of another format)."""
    path = tmp_path / name
    path.write_bytes(content)
    (tmp_path / "results.jsonl").write_text("")  # taken: the next free name is suggested
    with pytest.raises(ResultsError) as refused:
        load_bench(path)
    out = _suggested_out(str(refused.value))
    assert out != path and not out.exists()
    assert out.parent == tmp_path
    check_results_out("out", out, BENCH_FILE, RESULTS_OUT)  # bench takes it: no FieldError


@pytest.mark.skipif(not Path("/dev/null").exists(), reason="no /dev/null")
def test_a_device_given_as_results_suggests_a_file_in_the_working_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`--bench /dev/null`: the folder of a device or pipe is no place for results, so the
    suggested file is in the working folder, one that bench takes."""
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ResultsError) as refused:
        load_bench("/dev/null")
    out = _suggested_out(str(refused.value))
    assert out == Path("results.jsonl")
    check_results_out("out", tmp_path / out, BENCH_FILE, RESULTS_OUT)


def test_a_missing_or_empty_file_is_suggested_as_it_is(tmp_path: Path) -> None:
    """Bench writes a missing file and appends to an empty one: the refusal names that
    same file; an empty file is said to be empty, not "0 lines skipped"."""
    empty = tmp_path / "empty.jsonl"
    empty.write_text("\n\n")
    for path in (empty, tmp_path / "nosuch.jsonl"):
        with pytest.raises(ResultsError) as refused:
            load_bench(path)
        assert _suggested_out(str(refused.value)) == path
        check_results_out("out", path, BENCH_FILE, RESULTS_OUT)
    with pytest.raises(ResultsError) as refused:
        load_bench(empty)
    assert "0 lines" not in str(refused.value) and "empty" in str(refused.value)
    # its words: tests/cli/test_options.py's golden case "bench results: empty"


def test_a_line_cut_in_a_string_names_the_column_it_stopped_at(tmp_path: Path) -> None:
    """A bench killed mid-write leaves a line cut inside a string: the parser's message
    "Unterminated string starting at" was said without where."""
    path = tmp_path / "r.jsonl"
    append_result(path, bench_record("a", 10, 1, 100.0))
    whole = json.dumps(bench_record("b", 10, 1, 100.0))
    cut = whole[: whole.index('"model"') + 4]  # inside the key "model"
    with path.open("a") as handle:
        handle.write(cut)
    records, problems = read_results(path)
    assert len(records) == 1 and len(problems) == 1
    column = cut.rindex('"') + 1  # the string's opening quote, counted from 1
    assert f"starting at column {column:,};" in problems[0], problems[0]


def test_an_ok_row_without_its_rate_is_skipped_naming_the_field(tmp_path: Path) -> None:
    """An `ok` row whose `timing` was null was read as a completed run with no samples/s
    and, at N = 1, flagged "no N = 1 run of the same configuration": it is skipped, the
    field named; a failed row without timing is still read (it measured nothing)."""
    path = tmp_path / "r.jsonl"
    append_result(path, bench_record("a", 10, 1, 100.0))
    for status in ("ok", "error"):
        row = {**bench_record("b", 10, 1, 100.0), "status": status, "timing": None}
        append_result(path, row)
    records, problems = read_results(path)
    assert [(r["config"]["model"], r["status"]) for r in records] == [("a", "ok"), ("b", "error")]
    assert len(problems) == 1 and "r.jsonl:2: timing.samples_per_s is missing" in problems[0]


def test_skipped_lines_are_warnings_said_once_each() -> None:
    """Each skipped line was printed as "skipped: FILE:N: ...; skipped", and the rest as
    "skipped 1 more lines"."""
    skipped = [f"r.jsonl:{n}: not JSON (Expecting value; a cut line?); skipped" for n in range(7)]
    lines = BenchFile(table=None, skipped=skipped).skipped_lines(most=6)  # type: ignore[arg-type]
    assert lines[:6] == [f"warning: {s}" for s in skipped[:6]]
    assert lines[6] == "warning: 1 more line skipped"
    assert all(line.count("skipped") == 1 for line in lines)


@pytest.mark.parametrize("kind", ["bench", "collectives"])
def test_a_refused_out_is_offered_a_new_file_not_itself(tmp_path: Path, kind: str) -> None:
    """`bench --out results.jsonl` on a file of collectives sweeps said "give a new file,
    e.g. --out results.jsonl": the file it had just refused (the option's default)."""
    from gpuscale.bench.collectives_config import COLLECTIVES_OUT
    from gpuscale.sources.bounded import COLLECTIVES_FILE
    from gpuscale.tables.requests import FieldError

    holds, default, other = {
        "bench": (BENCH_FILE, RESULTS_OUT, {"schema": "gpuscale.collectives/2"}),
        "collectives": (COLLECTIVES_FILE, COLLECTIVES_OUT, {"schema": "gpuscale.bench/2"}),
    }[kind]
    path = tmp_path / default.name
    path.write_text(json.dumps(other) + "\n")
    with pytest.raises(FieldError) as refused:
        check_results_out("out", path, holds, default)
    offered = re.search(r"e\.g\. out='([^']+)'$", str(refused.value))  # as Python says it
    assert offered, str(refused.value)
    fresh = Path(offered.group(1))
    assert fresh != path and fresh.parent == tmp_path and not fresh.exists()
    check_results_out("out", fresh, holds, default)  # taken: no FieldError


H100_ROWS = Path(__file__).parents[1] / "advice" / "h100_resnet50_bf16.jsonl"


def read_edited(
    tmp_path: Path, source: Path, index: int, field: str, value: object
) -> tuple[Path, list[dict], list[str]]:
    """``source``'s rows with ``field`` (``section.name``) of row ``index`` set to
    ``value``, written to a file and read back: (the file, its records, its problems)."""
    rows = [json.loads(line) for line in source.read_text().splitlines()]
    section, name = field.split(".")
    rows[index][section][name] = value
    path = tmp_path / "r.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return (path, *read_results(path))


@pytest.mark.parametrize(
    ("field", "value", "said"),
    [
        ("timing.fixed_ms", -5.0, "timing.fixed_ms is -5.0, not a number of ms from 0 to"),
        ("timing.fixed_ms", float("nan"), "timing.fixed_ms is nan, not a number of ms"),
        ("timing.fixed_ms_low", float("inf"), "timing.fixed_ms_low is inf, not a number"),
        ("timing.small_batch_step_ms_mean", "9", "small_batch_step_ms_mean is '9', not a"),
        ("timing.fixed_ms_high", 0.0, "range, fixed_ms_low 30.89 to fixed_ms_high 0;"),
        ("timing.fixed_ms", 1e6, "timing.fixed_ms 1,000,000 is not within its 80% range"),
        ("timing.backward_ms", 1e300, "backward_ms is 1e+300, not a number of ms from 0 to 2,5"),
        ("timing.sync_overhead_ms", -1e300, "sync_overhead_ms is -1e+300, not a number of ms"),
        ("config.bucket_mb", 0, "config.bucket_mb is 0, not a number of MiB from 1/1024"),
        ("config.params", 0, "config.params is 0: a run recorded ok trained a model with"),
        ("timing.step_ms_mean", 0.0, "timing.step_ms_mean is 0.0: a run recorded ok took"),
        ("timing.plain_step_ms_mean", 0, "timing.plain_step_ms_mean is 0: a run recorded ok"),
        ("timing.samples_per_s", 0.0, "timing.samples_per_s is 0.0: a run recorded ok took"),
        ("timing.step_ms_mean", None, "timing.step_ms_mean is missing: a run recorded ok time"),
        ("config.accum", 2**53, "config.accum is 9,007,199,254,740,992, more than a bench t"),
        ("config.accum", 2.0, "config.accum is 2.0, not a whole number >= 1 written as an integ"),
        ("config.timeout_s", 1e12, "config.timeout_s is 1,000,000,000,000, more than a bench"),
    ],
)
def test_a_value_no_bench_writes_is_a_row_skipped_naming_it(
    tmp_path: Path, field: str, value: object, said: str
) -> None:
    """Fields read unchecked or checked too loosely went deep into the advice: a NaN
    fixed_ms moved it at 2 devices from 0.88x to 1.34x unsaid; a fixed_ms_high below
    fixed_ms ended in "fixed cost 0.0 ms outside its range (23.04352758629146, 0.0,
    0.0)", a bucket_mb of 0 in "bucket size must be positive, got 0.0 MiB", params 0 in
    "parameters must be positive", an accum of 2^53 in "global batch None cannot be split
    ...", no file or field named; a backward_ms of 1e300 in a ZeroDivisionError's
    traceback; a plain N = 1 step of 0 ms in a speedup of 0 at N = 2, unflagged; a missing
    step_ms_mean widened the advice's interval (0.0319-0.466x to 0.0204-0.728x) unsaid. Each is
    what the bench writes (a time within the longest --timeout, fixed_ms_low <= fixed_ms
    <= fixed_ms_high, a bucket --bucket-mb takes, an ok run's model has parameters and
    its whole steps take time, a config the bench takes), else the row is skipped, the
    field named."""
    path, records, problems = read_edited(tmp_path, H100_ROWS, 0, field, value)
    assert len(records) == 1 and len(problems) == 1, problems
    assert problems[0].startswith(f"{path}:1: ") and said in problems[0], problems[0]

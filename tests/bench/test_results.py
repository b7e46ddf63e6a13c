"""The results file and the bench table: nothing lost, nothing false."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pandas as pd
import pytest

from gpuscale.analysis.bench_scaling import bench_scaling, break_even_params
from gpuscale.bench.config import BenchConfig
from gpuscale.bench.results import ResultsError, bench_table, done_keys, read_results
from gpuscale.bench.results_file import append_result, check_writable
from gpuscale.plausibility import NOISY_MIN_STEPS
from gpuscale.tables import BENCH_COLUMNS

from ..builders import bench_record


def test_roundtrip_and_every_bad_line_reported(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    append_result(path, bench_record("a", 10, 1, 100.0))
    bad = [
        b"{broken",
        json.dumps({"schema": "other"}).encode(),
        b"\xff\xfe not utf-8",
        json.dumps({**bench_record("a", 10, 2, 1.0), "key": None}).encode(),
        json.dumps({**bench_record("a", 10, 2, 1.0), "config": [1, 2]}).encode(),
        json.dumps({**bench_record("a", 10, 2, 1.0), "status": "great"}).encode(),
        json.dumps([1, 2]).encode(),
    ]
    with path.open("ab") as handle:
        handle.write(b"\n".join(bad) + b"\n")
    append_result(path, bench_record("a", 10, 2, 150.0, status="timeout"))
    records, problems = read_results(path)
    assert [r["status"] for r in records] == ["ok", "timeout"]
    assert len(problems) == len(bad)
    assert any("not UTF-8" in p for p in problems) and any("no key" in p for p in problems)
    # --resume skips what was measured; the timeout is tried again
    assert done_keys(path) == {records[0]["key"]}
    assert tuple(bench_table(records).columns) == BENCH_COLUMNS
    with pytest.raises(ResultsError):
        read_results(tmp_path / "missing.jsonl")


def test_resume_measures_flagged_runs_again(tmp_path: Path) -> None:
    """A flagged run was not a good measurement: --resume measures it again, and a run read
    against a flagged N = 1 run too; a run flagged only for having no N = 1 run is done
    (measuring it again would not give it one)."""
    busy = ["machine busy: other processes used 60% of its CPU time during the timed steps"]
    path = tmp_path / "r.jsonl"
    rows = [
        {**bench_record("a", 10, 1, 100.0, sweep_id="s"), "flags": busy},
        bench_record("a", 10, 2, 150.0, sweep_id="s"),  # clean, read against the busy run
        bench_record("b", 20, 1, 100.0, sweep_id="s"),
        bench_record("b", 20, 2, 150.0, sweep_id="s"),
        bench_record("c", 30, 2, 150.0, sweep_id="s"),  # no N = 1 run of c
    ]
    for row in rows:
        append_result(path, row)
    assert done_keys(path) == {rows[2]["key"], rows[3]["key"], rows[4]["key"]}


def test_a_cut_last_line_never_swallows_the_next_row(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    append_result(path, bench_record("a", 10, 1, 100.0))
    whole = json.dumps(bench_record("b", 10, 1, 100.0))
    with path.open("a") as handle:
        handle.write(whole[: len(whole) // 2])  # a crash mid-write: no newline
    append_result(path, bench_record("c", 10, 1, 100.0))
    records, problems = read_results(path)
    assert [r["config"]["model"] for r in records] == ["a", "c"]
    assert len(problems) == 1 and "cut line" in problems[0]


def test_unwritable_output_is_refused_before_anything_runs(tmp_path: Path) -> None:
    with pytest.raises(ResultsError, match="is a folder"):
        check_writable(tmp_path)
    if Path("/proc/self").exists():  # not writable, even for root
        with pytest.raises(ResultsError, match="cannot write"):
            check_writable(Path("/proc/gpuscale/r.jsonl"))
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o500)
    try:
        if (locked / "probe").exists() or _can_write(locked):
            pytest.skip("running as a user that ignores permissions")
        with pytest.raises(ResultsError, match="cannot write"):
            check_writable(locked / "r.jsonl")
    finally:
        locked.chmod(0o700)


@pytest.mark.parametrize("device", ["/dev/null", "/dev/full"])
def test_a_device_is_refused_as_the_results_file(device: str) -> None:
    """``--out /dev/null`` (EINVAL on fsync) and ``/dev/full`` (ENOSPC) are refused before
    the sweep, not at its first row."""
    if not Path(device).exists():
        pytest.skip(f"no {device}")
    with pytest.raises(ResultsError, match="not a regular file"):
        check_writable(Path(device))


# Appends a row to a file whose size is capped just past what it holds: the write is cut
# mid-row (as on a disk that fills), as the kernel cuts it (EFBIG; Python ignores SIGXFSZ).
CAPPED = """
import json, resource, sys
from pathlib import Path
from gpuscale.bench.results import ResultsError
from gpuscale.bench.results_file import append_result
path = Path(sys.argv[1])
size = path.stat().st_size
resource.setrlimit(resource.RLIMIT_FSIZE, (size + 100, resource.RLIM_INFINITY))
try:
    append_result(path, json.loads(sys.argv[2]))
except ResultsError as exc:
    print(exc)
"""


def test_a_row_cut_by_a_full_disk_is_taken_back(tmp_path: Path) -> None:
    import subprocess
    import sys

    path = tmp_path / "r.jsonl"
    append_result(path, bench_record("a", 10, 1, 100.0))
    before = path.read_bytes()
    src = str(Path(__file__).resolve().parents[2] / "src")
    done = subprocess.run(
        [sys.executable, "-c", CAPPED, str(path), json.dumps(bench_record("b", 10, 1, 100.0))],
        capture_output=True,
        text=True,
        env={"PYTHONPATH": src, "PATH": "/usr/bin:/bin"},
        timeout=120,
    )
    assert "no space left for it" in done.stdout, done.stdout + done.stderr
    assert "the rows before it are kept" in done.stdout
    assert path.read_bytes() == before  # no cut row
    append_result(path, bench_record("c", 10, 1, 100.0))
    records, problems = read_results(path)
    assert [r["config"]["model"] for r in records] == ["a", "c"] and problems == []


def _can_write(folder: Path) -> bool:
    try:
        (folder / "probe").write_text("x")
    except OSError:
        return False
    (folder / "probe").unlink()
    return True


def test_ddp_overhead_exposed_communication_and_overlap() -> None:
    records = [
        bench_record("m", 1000, 1, 100.0, sync_overhead_ms=0.5),
        bench_record("m", 1000, 2, 150.0, sync_overhead_ms=2.5, comm_ms=8.0),
        bench_record("n", 1000, 2, 150.0, sync_overhead_ms=2.5, comm_ms=8.0),  # no N = 1
    ]
    table = bench_table(records).set_index(["model", "accelerators"])
    one, two = table.loc[("m", 1)], table.loc[("m", 2)]
    assert (one["ddp_overhead_ms"], one["exposed_comm_ms"]) == (0.5, 0.0)
    assert two["ddp_overhead_ms"] == 0.5 and two["exposed_comm_ms"] == pytest.approx(2.0)
    assert two["overlap"] == pytest.approx(1 - 2.0 / 8.0)
    assert math.isnan(one["overlap"]) and one["flags"] == ""
    alone = table.loc[("n", 2)]
    assert alone["exposed_comm_ms"] == pytest.approx(2.5) and "no N = 1 run" in alone["flags"]


def test_speedup_break_even_and_the_superlinear_flag() -> None:
    rows = [
        bench_record("s", 100_000, 1, 100.0),
        bench_record("s", 100_000, 2, 50.0),
        bench_record("m", 1_000_000, 1, 100.0),
        bench_record("m", 1_000_000, 2, 100.0),
        bench_record("l", 10_000_000, 1, 100.0),
        bench_record("l", 10_000_000, 2, 180.0),
        bench_record("x", 20_000_000, 1, 100.0),
        bench_record("x", 20_000_000, 2, 260.0),  # efficiency 1.3: cannot be true
    ]
    scaling = bench_scaling(bench_table(rows))
    m2 = scaling[(scaling.model == "m") & (scaling.accelerators == 2)].iloc[0]
    assert (m2["speedup"], m2["efficiency"]) == (1.0, 0.5)
    x2 = scaling[(scaling.model == "x") & (scaling.accelerators == 2)].iloc[0]
    assert x2["flagged"] and "super-linear" in x2["flags"]
    assert not scaling[scaling.model != "x"]["flagged"].any()
    # crosses 1 between s (0.5) and m (1.0) exactly at m
    assert break_even_params(scaling, 2) == pytest.approx(1_000_000)
    # 1.4 is crossed between m (1.0) and l (1.8): half way in log10 -> 10^6.5
    assert break_even_params(scaling, 2, speedup=1.4) == pytest.approx(10**6.5)
    # the flagged x row (2.6x) is not used: nothing crosses 2.0
    assert break_even_params(scaling, 2, speedup=2.0) is None
    assert break_even_params(scaling, 4) is None
    assert bench_scaling(bench_table([])).empty
    assert pd.isna(bench_scaling(bench_table([bench_record("y", 5, 2, 1.0)]))["speedup"]).all()


def test_noisy_and_busy_runs_are_flagged() -> None:
    # enough steps for a p95 to measure a spread
    noisy = bench_record("a", 10, 1, 100.0, config=BenchConfig(steps=NOISY_MIN_STEPS))
    noisy["timing"]["step_ms_p95"] = 3 * noisy["timing"]["step_ms_p50"]
    # 100 steps of 35 ms synced and no-sync: 7 s timed, long enough to measure the shares
    busy = bench_record("b", 10, 1, 100.0, config=BenchConfig(steps=100), forward_ms=31.5)
    busy["host"] = {"other_load_share": 0.4, "steal_share": 0.2}
    flags = bench_table([noisy, busy]).set_index("model")["flags"]
    assert "noisy synchronised steps" in flags["a"]
    assert "machine busy" in flags["b"] and "CPU steal" in flags["b"]


def test_old_schema_files_are_read_and_flagged(tmp_path: Path) -> None:
    old = bench_record("a", 10, 2, 100.0)
    old["schema"] = "gpuscale.bench/1"
    old["config"] = {**old["config"], "world_size": 2}
    del old["config"]["accelerators"]
    old["timing"]["exposed_comm_ms"] = old["timing"].pop("sync_overhead_ms")
    path = tmp_path / "old.jsonl"
    path.write_text(json.dumps(old) + "\n")
    records, problems = read_results(path)
    row = bench_table(records).iloc[0]
    assert problems == [] and row["accelerators"] == 2 and "bench/1" in row["flags"]


def test_exposed_communication_beyond_what_was_in_flight_is_flagged() -> None:
    rows = [
        bench_record("mlp-1m", 10**6, 1, 100.0, sync_overhead_ms=1.0),
        bench_record("mlp-1m", 10**6, 2, 150.0, sync_overhead_ms=1.0 + 9.0, comm_ms=4.0),
        bench_record("mlp-4m", 4 * 10**6, 1, 100.0, sync_overhead_ms=1.0),
        bench_record("mlp-4m", 4 * 10**6, 2, 150.0, sync_overhead_ms=1.0 + 4.2, comm_ms=4.0),
    ]
    table = bench_table(rows).set_index(["model", "accelerators"])
    assert "exceeds the communication in flight" in table.loc[("mlp-1m", 2), "flags"]
    assert table.loc[("mlp-4m", 2), "flags"] == ""  # 4.2 of 4.0 ms: within the jitter margin


def test_exposed_communication_never_exceeds_the_communication_timed() -> None:
    """A row of 4.15 ms exposed against 3.84 ms of communication, within the flag's
    margin, reads no negative hidden share, unflagged, its overlap clipped to 0. The
    exposed part is at most the communication; the rest of the sync overhead is
    ``sync_wait_ms`` (waiting or noise), so the step's parts still add up."""
    rows = [
        bench_record("mlp-4m", 4 * 10**6, 1, 100.0, sync_overhead_ms=1.0),
        bench_record("mlp-4m", 4 * 10**6, 2, 150.0, sync_overhead_ms=1.0 + 4.15, comm_ms=3.84),
        bench_record("mlp-8m", 8 * 10**6, 1, 100.0, sync_overhead_ms=1.0),
        bench_record("mlp-8m", 8 * 10**6, 2, 150.0, sync_overhead_ms=1.0 + 2.0, comm_ms=3.84),
        bench_record("mlp-16m", 16 * 10**6, 1, 100.0, sync_overhead_ms=1.0),
        bench_record("mlp-16m", 16 * 10**6, 2, 150.0, sync_overhead_ms=1.0 + 2.0),  # no comm
    ]
    table = bench_table(rows).set_index(["model", "accelerators"])
    over, under, untimed = (table.loc[(m, 2)] for m in ("mlp-4m", "mlp-8m", "mlp-16m"))
    assert over["flags"] == ""  # within the margin: kept, and read without a contradiction
    for row in (over, under):
        assert 0 <= row["exposed_comm_ms"] <= row["comm_ms"]
        assert 0 <= row["overlap"] <= 1
        parts = row["ddp_overhead_ms"] + row["exposed_comm_ms"] + row["sync_wait_ms"]
        assert parts == pytest.approx(row["sync_overhead_ms"])  # no time disappears
    assert over["sync_wait_ms"] > 0 and over["overlap"] == 0
    assert under["sync_wait_ms"] == 0  # within its communication: all of it exposed
    # no communication timed: nothing to split the overhead against
    assert untimed["exposed_comm_ms"] == pytest.approx(2.0)
    assert math.isnan(untimed["sync_wait_ms"])
    assert (table.xs(1, level="accelerators")["sync_wait_ms"] == 0).all()


def test_number_columns_stay_numbers_when_no_run_measured_them() -> None:
    """A file whose every run failed (or no run at all) still gives number columns
    (NaN), not columns of None that arithmetic and comparisons reject."""
    failed = [
        bench_record("m", 10**6, n, 0.0, status="oom", error="CUDA out of memory") for n in (1, 2)
    ]
    for records in (failed, []):
        table = bench_table(records)
        for column in ("step_ms_mean", "samples_per_s", "power_w_mean", "exposed_comm_ms"):
            assert table[column].dtype == "float64", (column, len(records))
            assert table[column].isna().all(), column
        assert not (table["step_ms_mean"] > 0).any()


def test_a_whole_number_no_run_recorded_is_nan_not_an_object_column() -> None:
    """A CPU run records no host GPUs nor device memory: those columns were object (every
    value None), the only object columns of numbers in the table."""
    records = [bench_record("a", 10, n, 100.0 * n) for n in (1, 2)]
    assert all("device_memory_bytes" not in (r.get("environment") or {}) for r in records)
    table = bench_table(records)
    for column in ("host_devices", "device_memory_bytes"):
        assert table[column].dtype == "float64" and table[column].isna().all()


def test_load_bench_of_no_path_names_the_parameter() -> None:
    """load_bench(5) said Python's own "expected str, bytes or os.PathLike object"."""
    from gpuscale.bench.results import load_bench

    for given in (5, None):
        with pytest.raises(TypeError, match=r"^path must be a results file's path, not "):
            load_bench(given)  # type: ignore[arg-type]

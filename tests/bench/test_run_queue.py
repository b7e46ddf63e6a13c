"""A run slowed by a busy host is flagged however short (a user walk: on a loaded 2-core
host `bench --nproc 1` of a tiny CPU model took 78.7 ms a step against 0.49 ms with
`--threads 1`, and was only weak evidence: its timed phase was under the 1 s a tick share
needs). The step thread's run-queue wait, booked by the kernel to the nanosecond, is judged
over a phase of any length; the samples are injected here, nothing is timed."""

from __future__ import annotations

import math
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from gpuscale.bench.config import BenchConfig
from gpuscale.bench.record import record_problem
from gpuscale.bench.results import bench_table
from gpuscale.bench.results_file import append_result
from gpuscale.bench.summary import measured_fields
from gpuscale.bench.telemetry import HostSample, queued_s, run_queue
from gpuscale.cli import app
from gpuscale.plausibility import (
    QUEUED_SHARE,
    CpuUse,
    FlagKind,
    flag_kinds,
    queued_flags,
    queued_share,
    run_flags,
)

from ..builders import bench_record
from .test_busy_window import _rank  # one rank's gathered measurements


def _sample(wall: float, cpu: float, thread_cpu: float, queued: float | None) -> HostSample:
    """A host sample (seconds) whose tick counts never move: only the run queue is read."""
    return HostSample(
        busy_s=100.0,
        total_s=1000.0,
        steal_s=0.0,
        own_s=5.0,
        wall_s=wall,
        cpu_s=cpu,
        thread_cpu_s=thread_cpu,
        queued_s=queued,
    )


def _pair(queued_ms: float, cpu_ms: float, rank_cpu_ms: float, wall_ms: float) -> tuple:
    start = _sample(10.0, 3.0, 2.0, 0.5)
    end = _sample(
        10.0 + wall_ms / 1e3,
        3.0 + rank_cpu_ms / 1e3,
        2.0 + cpu_ms / 1e3,
        0.5 + queued_ms / 1e3,
    )
    return start, end


def _fields(*ranks: tuple, steps: int = 20, step_ms: float = 2.0) -> dict:
    gathered = [_rank(step_ms, steps, *pair) for pair in ranks]
    world = len(ranks)
    return measured_fields(
        BenchConfig(steps=steps), "cpu", world, 8, None, 400, None, gathered, [1.0] * steps
    )


# As measured on this project's 2-core host (tiny CPU model, 20 steps, a phase of ~80 ms):
# loaded, 1 thread: its step thread waited 37.35 ms and ran 39.1 ms of a 76.4 ms phase;
# quiet (the bench ahead of every other job), 2 threads: waited 0.04 ms, ran 34.7 ms of 35.0
# ms, its 2 threads 67.2 ms.
LOADED = (37.35, 39.1, 39.7, 76.4)
QUIET = (0.04, 34.7, 67.2, 35.0)


def _percent(flag: str) -> int:
    return int(re.search(r"(\d+)% of the time", flag).group(1))


def test_queued_is_the_second_number_of_the_schedstat_in_seconds(tmp_path: Path) -> None:
    stat = tmp_path / "schedstat"
    stat.write_text("1966680964 49046930 49\n")
    assert queued_s(stat) == pytest.approx(0.04904693)
    assert queued_s(tmp_path / "missing") is None
    stat.write_text("garbled\n")
    assert queued_s(stat) is None


def test_a_short_phase_whose_step_thread_waited_is_flagged_with_its_numbers() -> None:
    fields = _fields(_pair(*LOADED))
    host = fields["host"]
    # the phase is too short for the tick shares: not measured, the run queue is
    assert (host["other_load_share"], host["steal_share"]) == (None, None)
    assert host["queued_ms"] == pytest.approx(37.35)
    assert host["cpu_ms"] == pytest.approx(39.1)
    assert host["rank_cpu_ms"] == pytest.approx(39.7)
    assert host["wall_ms"] == pytest.approx(76.4)
    flags = run_flags(fields["timing"], host, fields["noise"], steps=20)
    assert flag_kinds("; ".join(flags)) == (FlagKind.QUEUED.value,)
    assert _percent(flags[0]) == round(100 * 37.35 / (37.35 + 39.1))  # 49%


def test_a_quiet_host_raises_no_flag() -> None:
    fields = _fields(_pair(*QUIET))
    assert queued_share(fields["host"]) == pytest.approx(0.04 / 34.74)
    assert run_flags(fields["timing"], fields["host"], fields["noise"], steps=20) == []


def test_the_rank_whose_step_thread_waited_most_is_the_one_recorded() -> None:
    # a synchronised step waits for its slowest rank: rank 1 waited 30%, rank 0 1%
    fields = _fields(_pair(1.0, 99.0, 99.0, 100.0), _pair(30.0, 70.0, 70.0, 100.0))
    assert (fields["host"]["queued_ms"], fields["host"]["cpu_ms"]) == pytest.approx((30.0, 70.0))


def test_samples_without_a_run_queue_record_none_and_flag_nothing() -> None:
    start, end = _pair(*LOADED)
    assert run_queue([start], [_sample(11.0, 4.0, 3.0, None)]) is None
    assert run_queue([None], [end]) is None
    # a worker's samples with ticks alone (a kernel without schedstat): the shares only
    ticks = (HostSample(100.0, 1000.0, 0.0, 5.0), HostSample(100.2, 1000.4, 0.0, 5.1))
    fields = _fields(ticks)
    assert fields["host"] == {"other_load_share": None, "steal_share": None}
    assert queued_flags(fields["host"]) == []


@pytest.mark.parametrize(
    "queued, flagged",
    [(QUEUED_SHARE * 100 - 1, False), (QUEUED_SHARE * 100 + 1, True)],
)
def test_the_threshold_is_the_share_of_ready_time_queued(queued: float, flagged: bool) -> None:
    host = {"queued_ms": queued, "cpu_ms": 100.0 - queued, "wall_ms": 100.0}
    assert bool(queued_flags(host)) is flagged


@pytest.mark.parametrize(
    "threads, rank_cpu_ms, fit",
    [
        (2, 39.7, 1),  # 2 threads got 0.5 cores: one fits
        (8, 412.0, 4),  # 8 threads got 4.1 cores of a 100 ms phase: 4 fit
        (1, 39.7, None),  # one thread: none fewer, a quieter machine only
        (4, 390.0, None),  # got 3.9 cores: 4 is what it got, a quieter machine only
    ],
)
def test_the_remedy_names_the_threads_the_cores_it_got_fit(
    threads: int, rank_cpu_ms: float, fit: int | None
) -> None:
    host = {"queued_ms": 60.0, "cpu_ms": 40.0, "rank_cpu_ms": rank_cpu_ms, "wall_ms": 100.0}
    (flag,) = queued_flags(host, CpuUse(threads=threads, ranks=1, cores=16))
    named = re.search(r"--threads (\d+)", flag)
    assert (int(named.group(1)) if named else None) == fit
    assert "quieter machine" in flag
    (plain,) = queued_flags(host)  # a GPU run, or cores not recorded: a quieter machine
    assert "--threads" not in plain


def _row(host: dict[str, object] | None, n: int = 1, rate: float = 2000.0) -> dict:
    record = bench_record(
        "mlp-0.2m", 199_946, n, rate, config=BenchConfig(steps=20), threads=2, sweep_id="s"
    )
    record["host"] = {"other_load_share": None, "steal_share": None, **(host or {})}
    record["environment"]["cpu_count"] = 2
    return record


def _host(queued: float, cpu: float, rank_cpu: float, wall: float) -> dict[str, float]:
    return {"queued_ms": queued, "cpu_ms": cpu, "rank_cpu_ms": rank_cpu, "wall_ms": wall}


def test_the_table_flags_the_row_and_holds_its_share() -> None:
    loaded, quiet, before = _row(_host(*LOADED)), _row(_host(*QUIET)), _row(None)
    table = bench_table([loaded, quiet, before])
    assert table["queued_share"].tolist()[:2] == pytest.approx([37.35 / 76.45, 0.04 / 34.74])
    assert math.isnan(table["queued_share"].iloc[2])  # a row written before: not recorded
    assert table["flagged"].tolist() == [True, False, False]
    assert FlagKind.QUEUED.value in table["flag_kinds"].iloc[0]
    assert "--threads 1" in table["flags"].iloc[0]  # 2 threads got 0.5 cores


def test_a_run_queue_field_that_is_no_number_is_named() -> None:
    record = _row(_host(*LOADED))
    record["host"]["queued_ms"] = "37"
    assert "host.queued_ms" in (record_problem(record) or "")


def test_advise_leaves_out_a_short_one_device_run_whose_host_was_oversubscribed(
    tmp_path: Path,
) -> None:
    path = tmp_path / "results.jsonl"
    append_result(path, _row(_host(*LOADED)))
    append_result(path, _row(_host(*QUIET), n=2, rate=3000.0))
    result = CliRunner().invoke(app, ["advise", "--bench", str(path)])
    said = " ".join(result.output.split())
    assert result.exit_code == 2, said
    assert FlagKind.QUEUED.value in said and "--threads 1" in said

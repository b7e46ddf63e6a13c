"""Two collectives sweeps into one file are two sweeps, whenever they started: ids to the
second alone were shared by sweeps started in the same second (one after another, or side
by side), and `gpuscale collectives` then showed and judged both as one. A sweep stopped
before its end says what the file holds of it."""

from __future__ import annotations

import json
import multiprocessing
import os
import re
import signal
import subprocess
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

import pytest

from gpuscale.bench import collectives_config
from gpuscale.bench.collectives_config import CollectivesConfig, message_sizes, new_sweep_id
from gpuscale.bench.results_file import append_records
from gpuscale.interconnect.nvml import nvml_topology
from gpuscale.interconnect.records import read_sweeps
from gpuscale.interconnect.verdict import judge

from ..cli.test_signals import SRC, _descendants, _wait_for
from ..fake_nvml import FakeNvml, hgx_h100
from .test_sweeps import write

SECOND = datetime(2026, 11, 30, 4, 40, 6, tzinfo=timezone.utc)


def test_ids_made_in_one_second_differ_and_keep_its_time() -> None:
    ids = {new_sweep_id(SECOND) for _ in range(50)}
    assert len(ids) == 50
    assert all(re.fullmatch(r"20261130T044006-[0-9a-f]{6}", i) for i in ids)


@pytest.mark.slow
def test_two_sweeps_started_in_one_second_stay_apart(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Both sweeps of one frozen second into one file: each run reads back its own rows
    (before, the second run's table held the first's all_reduce rows beside its own
    all_gather ones, under the first's header overwritten by its own)."""
    pytest.importorskip("torch")
    from gpuscale.bench.collectives_sweep import run_collectives

    class Frozen(datetime):
        @classmethod
        def now(cls, tz=None):
            return SECOND

    monkeypatch.setattr(collectives_config, "datetime", Frozen)
    out = tmp_path / "c.jsonl"
    tiny = {"backend": "gloo", "max_bytes": 1024, "iters": 2, "warmup": 0}
    first = run_collectives(CollectivesConfig(ops=("all_reduce",), **tiny), out, 2)
    second = run_collectives(CollectivesConfig(ops=("all_gather",), **tiny), out, 2)
    assert first.sweep_id != second.sweep_id
    assert first.sweep_id[:16] == second.sweep_id[:16] == "20261130T044006-"
    sizes = len(message_sizes(1024))  # 8 B .. 1 KiB: 8 sizes
    assert set(second.latest["op"]) == {"all_gather"}
    assert len(second.latest) == 2 * sizes  # in-place and out-of-place, its own only
    sweeps = read_sweeps(out)
    assert list(sweeps.headers) == [first.sweep_id, second.sweep_id]
    assert [sweeps.headers[s]["sweep_id"] for s in sweeps.headers] == list(sweeps.headers)
    assert list(sweeps.of(first.sweep_id)["op"]) == ["all_reduce"] * sizes


def test_the_verdict_is_of_the_sweep_asked(tmp_path: Path) -> None:
    """A sweep run beside another may not be the file's last: its own verdict is of its
    own rows (360 GB/s), not the other's written after it (200 GB/s)."""
    path = write(tmp_path / "c.jsonl", {"mine": [(1 << 30, 360.0)], "theirs": [(1 << 30, 200.0)]})
    topo = nvml_topology(FakeNvml(hgx_h100()))
    (latest,) = judge(read_sweeps(path), topology=topo)
    (mine,) = judge(read_sweeps(path), topology=topo, sweep_id="mine")
    assert (latest.peak_busbw_gbs, mine.peak_busbw_gbs) == (200.0, 360.0)


def _append_many(path: str, tag: int) -> None:
    for batch in range(40):  # sweeps of 5 lines of 10 kB: beyond any one write buffer
        rows = [{"tag": tag, "batch": batch, "line": i, "pad": "x" * 10_000} for i in range(5)]
        append_records(Path(path), rows)


def test_sweeps_appended_side_by_side_keep_every_line_whole(tmp_path: Path) -> None:
    """Two writers appending to one file at once: every line read back is a whole record
    and each writer's sweep stays in one piece (its 5 lines together, in order)."""
    path = tmp_path / "c.jsonl"
    context = multiprocessing.get_context("fork")
    writers = [context.Process(target=_append_many, args=(str(path), t)) for t in (0, 1)]
    for w in writers:
        w.start()
    for w in writers:
        w.join(timeout=120)
    records = [json.loads(line) for line in path.read_text().splitlines()]
    assert len(records) == 2 * 40 * 5
    for start in range(0, len(records), 5):
        block = records[start : start + 5]
        assert [(r["tag"], r["batch"], r["line"]) for r in block] == [
            (block[0]["tag"], block[0]["batch"], i) for i in range(5)
        ]


def test_a_stopped_sweep_says_what_the_file_holds_of_it(tmp_path: Path) -> None:
    from gpuscale.bench.collectives_sweep import kept_note

    path = tmp_path / "c.jsonl"
    rows = [(8, 1.0), (16, 2.0), (32, 3.0)]
    write(path, {"s1": rows})
    assert kept_note(path, "s1") == f": sweep s1 kept in {path} (all_reduce at 3 sizes)"
    assert kept_note(path, "s2") == (
        f": nothing of this sweep written to {path} (a sweep's rows are written once its last "
        "size is measured); run the same command again to measure it"
    )
    assert kept_note(tmp_path / "none.jsonl", "s2") == (
        ": nothing of this sweep written (a sweep's rows are written once its last size is "
        f"measured), {tmp_path / 'none.jsonl'} not created; run the same command again to "
        "measure it"
    )


@pytest.mark.slow
@pytest.mark.skipif(not Path("/proc").is_dir(), reason="needs /proc")
def test_a_terminated_sweep_says_nothing_of_it_was_written(tmp_path: Path) -> None:
    """SIGTERM while the ranks time the calls: exit 143 and one line saying that nothing of
    this sweep is in the file (it was "terminated" alone), the file's sweeps untouched."""
    pytest.importorskip("torch")
    out = tmp_path / "c.jsonl"
    write(out, {"before": [(8, 1.0)]})
    before = out.read_bytes()
    command = [sys.executable, "-m", "gpuscale.cli", "collectives", "--backend", "gloo"]
    command += ["--nproc", "2", "--max-bytes", "1K", "--gap-ms", "60000", "--out", str(out)]
    env = {**os.environ, "PYTHONPATH": SRC}
    run = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        _wait_for(lambda: len(_descendants(run.pid)) >= 3, 120, "no launcher and ranks")
        time.sleep(1.0)
        run.send_signal(signal.SIGTERM)
        _, err = run.communicate(timeout=90)
    finally:
        if run.poll() is None:
            run.kill()
    assert run.returncode == 128 + signal.SIGTERM
    assert err.decode().strip().splitlines()[-1] == (
        f"terminated: nothing of this sweep written to {out} (a sweep's rows are written "
        "once its last size is measured); run the same command again to measure it"
    )
    assert out.read_bytes() == before

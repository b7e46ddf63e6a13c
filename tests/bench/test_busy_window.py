"""A busy share is a measurement only over a timed phase long enough for the host's clock
ticks: over a few milliseconds it is a ratio of a handful of ticks (2/3, 3/4), stored as
not measured (never 0) and flagging nothing; over a long enough phase a real share flags
the run. Rows written before the rule are read by it."""

from __future__ import annotations

import math
from pathlib import Path

from typer.testing import CliRunner

from gpuscale.bench.config import BenchConfig
from gpuscale.bench.results import bench_table
from gpuscale.bench.results_file import append_result
from gpuscale.bench.summary import measured_fields
from gpuscale.bench.telemetry import HostSample
from gpuscale.cli import app
from gpuscale.plausibility import run_flags

from ..builders import bench_record


def _rank(step_ms: float, steps: int, start: HostSample, end: HostSample) -> dict:
    """One rank's gathered measurements: ``steps`` synced and no-sync steps of
    ``step_ms``, the host sampled at ``start`` and ``end`` of the timed phase."""
    phases = {"forward": [1.0] * steps, "backward": [1.0] * steps, "optimizer": [0.5] * steps}
    kind = {"step": [step_ms] * steps, **phases}
    return {
        "kinds": {"synced": kind, "nosync": kind},
        "comm_ms": [],
        "peak": 1,
        "meter": None,
        "host": (start, end, "h"),
        "local_sq": [1.0] * steps,
    }


def _fields(step_ms: float, steps: int, busy_s: float, total_s: float, own_s: float) -> dict:
    start = HostSample(busy_s=100.0, total_s=1000.0, steal_s=0.0, own_s=5.0)
    end = HostSample(
        busy_s=100.0 + busy_s, total_s=1000.0 + total_s, steal_s=0.0, own_s=5.0 + own_s
    )
    gathered = [_rank(step_ms, steps, start, end)]
    return measured_fields(
        BenchConfig(steps=steps), "cpu", 1, 8, None, 400, None, gathered, [1.0] * steps
    )


def test_a_few_ticks_over_a_short_phase_are_no_busy_share() -> None:
    # 2 steps of 5 ms synced and no-sync: a 20 ms phase; /proc/stat moved 3 ticks on two
    # cores (30 ms), 2 of them busy, and the rank's own time read 0 ticks: "67% busy"
    fields = _fields(step_ms=5.0, steps=2, busy_s=0.02, total_s=0.03, own_s=0.0)
    assert fields["host"] == {"other_load_share": None, "steal_share": None}
    flags = run_flags(fields["timing"], fields["host"], fields["noise"])
    assert not [f for f in flags if f.startswith("machine busy")], flags


def test_a_long_phase_with_a_real_busy_share_is_flagged() -> None:
    # 100 steps of 10 ms synced and no-sync: a 2 s phase on two cores (4 s of CPU time),
    # 2 s of it busy, 0.8 s the rank's own: other processes used 1.2 s, 30%
    fields = _fields(step_ms=10.0, steps=100, busy_s=2.0, total_s=4.0, own_s=0.8)
    assert math.isclose(fields["host"]["other_load_share"], 0.3)
    flags = run_flags(fields["timing"], fields["host"], fields["noise"])
    assert any("machine busy: other processes used 30%" in f for f in flags), flags


def _written_before(share: float) -> dict:
    """A row as the worker wrote it before the rule: 2 steps of 3.5 ms, the busy share of
    its few ticks stored, and the flag that share raised."""
    record = bench_record("mlp-0.2m", 199_946, 1, 2000.0, config=BenchConfig(steps=2))
    record["host"] = {"other_load_share": share, "steal_share": 0.0}
    record["flags"] = run_flags(record["timing"], record["host"])
    return record


def test_a_row_written_before_reads_its_short_window_share_as_not_measured() -> None:
    busy, quiet = _written_before(2 / 3), _written_before(0.0)
    assert busy["flags"], "the row as written then carries the tick-noise flag"
    table = bench_table([busy, quiet])
    assert table["other_load_share"].isna().all()  # not measured: never 67%, never 0
    assert table["flags"].tolist() == ["", ""]
    assert all("busy share not measured" in n for n in table["evidence_notes"])


def test_a_stored_flag_the_share_did_not_raise_is_kept() -> None:
    # a kind its 2 steps do not take back (a noisy flag on 2 steps is judged again: over
    # fewer than plausibility.NOISY_MIN_STEPS one slow step sets the p95)
    record = _written_before(2 / 3)
    slower = (
        "no-sync steps 3 ms slower than synchronised ones: noise larger than what "
        "synchronisation costs"
    )
    record["flags"] = [*record["flags"], slower]
    assert bench_table([record])["flags"].tolist() == [slower]


def _quickstart(path: Path, share: float, steps: int, step_ms: float) -> Path:
    """An N = 1 and an N = 2 run of mlp-0.2m, the N = 1 run's share and flag as written."""
    cfg = BenchConfig(steps=steps)
    for n, rate in ((1, 2000.0), (2, 1500.0)):
        record = bench_record(
            "mlp-0.2m", 199_946, n, rate, config=cfg, forward_ms=step_ms - 2.5, sweep_id="s"
        )
        record["host"] = {"other_load_share": share if n == 1 else 0.0, "steal_share": 0.0}
        record["flags"] = run_flags(record["timing"], record["host"])
        append_result(path, record)
    return path


def test_advise_uses_a_short_quickstart_and_says_it_is_weak(tmp_path: Path) -> None:
    path = _quickstart(tmp_path / "short.jsonl", 2 / 3, steps=2, step_ms=3.5)
    result = CliRunner().invoke(app, ["advise", "--bench", str(path)])
    said = " ".join(result.output.split())
    assert result.exit_code == 0, said
    assert "WARNING: weak evidence: both bench runs of mlp-0.2m" in said
    assert "busy share not measured" in said and "machine busy" not in said


def test_advise_still_refuses_when_the_one_device_run_was_measured_busy(tmp_path: Path) -> None:
    # 100 steps of 20 ms synced and no-sync: a 4 s phase, 40% of it other processes'
    path = _quickstart(tmp_path / "busy.jsonl", 0.4, steps=100, step_ms=20.0)
    result = CliRunner().invoke(app, ["advise", "--bench", str(path)])
    said = " ".join(result.output.split())
    assert result.exit_code == 2, said
    assert "no trustworthy N = 1 run" in said and "machine busy" in said

"""A busy host's flag says what to do, from the flag's own data (a user walk: on a busy
2-core host `--nproc 1` defaulted to 2 threads, mlp-0.2m took 569 ms a step against
~2 ms, and the run was flagged "machine busy" with no word of `--threads 1`)."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from gpuscale.bench.config import BenchConfig
from gpuscale.bench.results import bench_table
from gpuscale.bench.results_file import append_result
from gpuscale.cli import app
from gpuscale.plausibility import CpuUse, host_flags

from ..builders import bench_record

runner = CliRunner()
QUIETER = "run on a quieter machine, nothing else running"


def _busy(share: float, threads: int, cores: int, device: str = "cpu") -> dict:
    """A run of 1 rank of ``threads`` threads on a host of ``cores`` cores whose other
    processes used ``share`` of its CPU time, over a timed phase long enough to read it
    (20 steps of 200 ms)."""
    record = bench_record(
        "mlp-0.2m", 199_946, 1, 40.0, forward_ms=100.0, threads=threads, config=BenchConfig()
    )
    record["config"]["device"] = device
    record["host"] = {"other_load_share": share, "steal_share": 0.0}
    record["environment"]["cpu_count"] = cores
    return record


@pytest.mark.parametrize(
    "use, share, remedy",
    [
        # 1.1 of 2 cores taken: 0.9 left to 2 threads, one thread fits
        (
            CpuUse(threads=2, ranks=1, cores=2),
            0.55,
            f" (1.1 of 2 cores), leaving 0.9 to 1 rank of 2 threads: bench with --threads 1, "
            f"or {QUIETER}",
        ),
        # 16 cores, 25% taken: 12 left to 2 ranks of 8 threads, 6 each fit
        (
            CpuUse(threads=8, ranks=2, cores=16),
            0.25,
            f" (4.0 of 16 cores), leaving 12.0 to 2 ranks of 8 threads: bench with --threads 6, "
            f"or {QUIETER}",
        ),
        (CpuUse(threads=1, ranks=1, cores=2), 0.55, f": {QUIETER}"),  # one thread: fewer none
        (CpuUse(threads=4, ranks=1, cores=16), 0.5, f": {QUIETER}"),  # its 4 fit the 8 left
        (None, 0.55, f": {QUIETER}"),  # GPUs, or cores not recorded
    ],
)
def test_the_remedy_follows_the_cores_left(use: CpuUse | None, share: float, remedy: str) -> None:
    (flag,) = host_flags({"other_load_share": share}, use)
    assert flag == (
        f"machine busy: other processes used {share:.0%} of its CPU time during the timed "
        f"steps{remedy}"
    )


def test_the_table_reads_the_remedy_from_the_record() -> None:
    rows = bench_table([_busy(0.55, 2, 2), _busy(0.55, 1, 2), _busy(0.55, 2, 2, "cuda")])
    busy = [f for f in rows["flags"] if f.startswith("machine busy")]
    assert len(busy) == 3
    assert "bench with --threads 1" in busy[0]
    assert "--threads" not in busy[1] and busy[1].endswith(QUIETER)
    assert "--threads" not in busy[2] and busy[2].endswith(QUIETER)  # GPU ranks


def test_analyze_says_the_remedy(tmp_path: Path) -> None:
    path = tmp_path / "busy.jsonl"
    append_result(path, _busy(0.55, 2, 2))
    result = runner.invoke(app, ["analyze", "--bench", str(path)])
    assert result.exit_code == 0, result.output
    said = [line for line in result.output.splitlines() if line.startswith("flagged mlp-0.2m")]
    assert len(said) == 1 and "(1.1 of 2 cores), leaving 0.9 to 1 rank of 2 threads" in said[0]
    assert "bench with --threads 1" in said[0]


def test_the_ranks_on_the_host_are_read_as_recorded() -> None:
    """Two nodes of 2 ranks launched on one 8-core host: 4 ranks share its cores, as the
    writer's ``ranks_on_host`` records; a record without it reads world size over nodes."""
    from gpuscale.plausibility import cpu_use

    config = {"device": "cpu", "threads": 3, "accelerators": 4, "nnodes": 2}
    one_host = cpu_use(config, {"cpu_count": 8, "ranks_on_host": 4})
    assert one_host == CpuUse(threads=3, ranks=4, cores=8)
    assert cpu_use(config, {"cpu_count": 8}) == CpuUse(threads=3, ranks=2, cores=8)
    # 25% of 8 cores taken leaves 6 to 4 ranks: 1 thread each, where 2 ranks had room for 3
    (flag,) = host_flags({"other_load_share": 0.25}, one_host)
    assert "leaving 6.0 to 4 ranks of 3 threads: bench with --threads 1" in flag
    (unknown,) = host_flags({"other_load_share": 0.25}, cpu_use(config, {"cpu_count": 8}))
    assert "--threads" not in unknown

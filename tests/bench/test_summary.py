"""A record's measured fields from what the ranks gathered (pure Python, no torch)."""

from __future__ import annotations

import pytest

from gpuscale.bench.config import BenchConfig
from gpuscale.bench.summary import measured_fields


def rank(synced: list[float], nosync: list[float], comm: list[float], peak: int) -> dict:
    phases = {"forward": [1.0, 1.0], "backward": [2.0, 2.0], "optimizer": [0.5, 0.5]}
    return {
        "kinds": {"synced": {"step": synced, **phases}, "nosync": {"step": nosync, **phases}},
        "comm_ms": comm,
        "peak": peak,
        "meter": None,
        "host": (None, None, "h"),
        "local_sq": [4.0, 2.0],
    }


def test_a_step_lasts_as_long_as_its_slowest_rank() -> None:
    # two ranks; step by step the slower one: synced 11, 12 ms; no-sync 8, 9 ms
    gathered = [
        rank([10.0, 12.0], [8.0, 7.0], [3.0, 1.0], 100),
        rank([11.0, 9.0], [6.0, 9.0], [2.0, 4.0], 300),
    ]
    fields = measured_fields(
        BenchConfig(steps=2), "cpu", 2, 4, 1e9, 400, [400], gathered, [1.0, 3.0]
    )
    timing = fields["timing"]
    assert timing["step_ms_mean"] == pytest.approx(11.5)
    assert timing["nosync_step_ms_mean"] == pytest.approx(8.5)
    assert timing["sync_overhead_ms"] == pytest.approx(3.0)
    assert timing["comm_ms"] == pytest.approx(3.5)  # slowest per step: 3, 4
    # 4 samples x 2 ranks per 11.5 ms step
    assert timing["samples_per_s"] == pytest.approx(8 / 0.0115)
    assert fields["flops"]["achieved_tflops_per_device"] == pytest.approx(
        1e9 * 8 / 0.0115 / 2 / 1e12
    )
    assert fields["memory"]["peak_bytes"] == 300
    assert fields["noise"]["local_sq"] == [4.0, 2.0]  # the ranks' mean
    assert fields["nvml"] is None and fields["host"] is None
    # no communication meter: no communication time
    alone = measured_fields(
        BenchConfig(steps=2), "cpu", 2, 4, None, 400, None, gathered, [1.0, 3.0]
    )
    assert alone["timing"]["comm_ms"] is None and alone["comm"]["bucket_bytes"] == []

"""A measured speedup set against the advice's prediction is over the one-device step the
prediction models (``speedups_as_predicted``): for DDP, its N = 1 step less its own work
(the no-sync step), where ``analyze --bench``'s ``speedup`` is over the bare module's. The
figures here are worked from the records' step times, not from the table's columns."""

from __future__ import annotations

import pytest

from gpuscale.analysis.bench_scaling import bench_scaling, speedups_as_predicted
from gpuscale.bench.config import BenchConfig
from gpuscale.bench.results import bench_table

from ..builders import bench_record

BATCH = 8
PHASES = {"forward_ms": 0.5, "backward_ms": 1.0, "optimizer_ms": 0.5}  # no-sync step 2.0 ms
TWO_MS = 5.0  # the 2-device step: 16 samples in 5 ms


def _rows(own_ms: float, *, strategy: str = "ddp", bare_ms: float = 2.5) -> tuple:
    config = BenchConfig(steps=400, batch=BATCH, strategy=strategy)
    one_rate = BATCH / ((2.0 + own_ms) / 1e3)  # DDP's step: no-sync 2.0 ms + its own work
    records = [
        bench_record(
            "m",
            10**5,
            1,
            one_rate,
            config=config,
            sync_overhead_ms=own_ms,
            plain_step_ms=bare_ms,
            **PHASES,
        ),
        bench_record("m", 10**5, 2, 2 * BATCH / (TWO_MS / 1e3), config=config, **PHASES),
    ]
    scaling = bench_scaling(bench_table(records))
    at_two = scaling.index[scaling["accelerators"] == 2][0]
    return scaling.loc[at_two], speedups_as_predicted(scaling).loc[at_two]


def test_ddp_is_set_against_its_no_sync_step() -> None:
    table, predicted = _rows(own_ms=1.0)
    assert predicted["basis"] == "nosync"
    assert predicted["speedup"] == pytest.approx(2 * 2.0 / TWO_MS)  # 0.8x over 2.0 ms
    assert table["speedup"] == pytest.approx(2 * 2.5 / TWO_MS)  # analyze's: the bare 2.5 ms
    assert table["speedup_ddp"] == pytest.approx(2 * 3.0 / TWO_MS)  # DDP's whole 3 ms


def test_ddp_without_its_own_work_recorded_is_set_against_its_whole_step() -> None:
    table, predicted = _rows(own_ms=0.0)
    assert predicted["basis"] == "ddp"
    assert predicted["speedup"] == pytest.approx(2 * 2.0 / TWO_MS)  # DDP's step: 2.0 ms
    assert predicted["speedup"] == pytest.approx(table["speedup_ddp"])
    assert table["speedup"] == pytest.approx(2 * 2.5 / TWO_MS)  # the bare step's 2.5 ms


def test_fsdp_keeps_the_tables_speedup_and_says_over_which_step() -> None:
    # a bare step faster than FSDP's (1.5 ms against 2.0 + 1.0): over the bare module
    table, predicted = _rows(own_ms=1.0, strategy="fsdp", bare_ms=1.5)
    assert (predicted["basis"], table["baseline"]) == ("bare", "plain N = 1 step")
    assert predicted["speedup"] == pytest.approx(2 * 1.5 / TWO_MS)

"""``gpuscale advise`` sets a measured speedup beside the prediction of the same
configuration only: the same per-device batch and accumulation at N, against the same
one-device run. A speedup is a ratio of two runs: the advice's N = 2 row at 8 per device
against one device at 4 is not a run of 8 per device against one device at 8, and its
interval was held against it."""

from __future__ import annotations

import re

import pandas as pd

from gpuscale.advice.api import advise
from gpuscale.advice.calibrate.bench_basis import measured_runs
from gpuscale.advice.explain.caveats import against_measured
from gpuscale.advice.request import AdviceRequest
from gpuscale.advice.search.decide import measured_counts
from gpuscale.advice.types import Measured
from gpuscale.bench.config import BenchConfig
from gpuscale.bench.results import bench_table

from ..builders import bench_record
from ..golden import Golden

VIEW = "advice/against_measured"


# the remedy a weak run's sentence ends with: more steps, then advise again
BENCH_AGAIN = re.compile(
    r"bench with --steps \d+ or more( \((?:[^()]|\([^()]*\))*\))? and advise again"
)


def _predictions(first_batch: int) -> pd.DataFrame:
    """The advice's table: one device at ``first_batch``, then 2 devices of 8 each
    predicted at 1.6-2.0x (convergence factor 1: the throughput speedup is the speedup)."""
    return pd.DataFrame(
        {
            "accelerators": [1, 2],
            "batch_per_device": [first_batch, 8],
            "accum": [1, 1],
            "speedup": [1.0, 1.8],
            "speedup_low": [1.0, 1.6],
            "speedup_high": [1.0, 2.0],
            "throughput_efficiency": [1.0, 0.9],
        }
    )


def _runs(accum: int = 1) -> list[Measured]:
    """The bench's runs of 8 per device (``accum`` micro-batches a step) on 1 and 2
    devices, 100 and 120 samples/s: 1.2x against the one-device run at 8."""
    config = BenchConfig(steps=20, batch=8, accum=accum)
    rows = [bench_record("m", 10**6, n, sps, config=config) for n, sps in ((1, 100.0), (2, 120.0))]
    return measured_runs(bench_table(rows), "m", allow_flagged=False)


def test_a_run_is_held_only_against_its_own_configuration(golden: Golden) -> None:
    (run,) = _runs()
    assert (run.devices, run.batch_per_device, round(run.speedup, 6)) == (2, 8, 1.2)
    # the same configuration, one device at 8 in both: 1.2x lies outside 1.6-2.0x, said
    (line,) = against_measured(measured_counts(_predictions(8), [run]))
    # the run's speedup and the prediction to the figures of the interval's ends
    assert "outside" in line and "1.20x" in line and "1.80x (1.60-2.00x" in line
    golden.check(VIEW, "a run of its own configuration, outside", line)
    # the advice's one device runs 4, the run's 8: another ratio, never compared
    assert against_measured(measured_counts(_predictions(4), [run])) == []


def test_an_accumulated_run_is_not_held_against_a_prediction_without_accumulation() -> None:
    (run,) = _runs(accum=4)
    assert against_measured(measured_counts(_predictions(8), [run])) == []


def test_a_measured_run_carries_its_one_device_run_from_the_bench_table() -> None:
    (run,) = _runs()
    assert (run.accum, run.base) == (1, (8, 1))


def test_a_weak_run_outside_the_prediction_is_not_trusted_over_it(golden: Golden) -> None:
    """A run of 2 timed steps (weak, as the bench table grades it) outside the interval
    is said with what would make it firm, never 'trust it over the prediction'; one of
    400 steps (1.4 s timed, strong) is trusted over it."""
    said = {}
    for steps in (2, 400):
        config = BenchConfig(steps=steps, batch=8)
        rows = [
            bench_record("m", 10**6, n, sps, config=config) for n, sps in ((1, 100.0), (2, 120.0))
        ]
        table = bench_table(rows)
        grades = set(table["evidence"])
        (run,) = measured_runs(table, "m", allow_flagged=False)
        (said[steps],) = against_measured(measured_counts(_predictions(8), [run]))
        assert grades == ({"weak"} if steps == 2 else {"strong"})  # the premise
    assert "trust it over" in said[400]
    assert "trust it over" not in said[2] and "weak" in said[2]
    assert BENCH_AGAIN.search(said[2])
    golden.check(VIEW, "a strong run outside", said[400])
    golden.check(VIEW, "a weak run outside", said[2])


def test_a_run_of_another_configuration_of_the_model_is_not_held_against_the_advice(
    golden: Golden,
) -> None:
    """The advice reads the model's latest N = 1 run (here 4 threads a process, 1.75 ms a
    step); a 2-process run of 1 thread each (against its own 7 ms N = 1 run) measures
    another configuration: its samples/s over the 4-thread run's step (0.0875x) was said
    'outside the predicted interval: trust it over the prediction'. Held against the
    advice only where it is the configuration advised (the 1-thread rows alone)."""
    config = BenchConfig(steps=400, batch=8)
    timed = {"forward_ms": 2.0, "backward_ms": 4.0, "optimizer_ms": 1.0, "config": config}
    rows = [
        bench_record("m", 10**6, 1, 1000.0, **timed),
        bench_record("m", 10**6, 2, 400.0, sync_overhead_ms=3.0, comm_ms=4.0, **timed),
    ]
    faster = {"forward_ms": 0.5, "backward_ms": 1.0, "optimizer_ms": 0.25, "config": config}
    other = bench_record("m", 10**6, 1, 4000.0, threads=4, **faster)
    request = AdviceRequest(max_devices=2)
    alone = advise(request, bench=bench_table(rows))
    beside = advise(request, bench=bench_table([*rows, other]))
    # the premise: the 1-thread run is set beside the advice on its own configuration,
    # and the second file's advice is on the 4-thread run's step (1.75 ms)
    measured = [c for c in alone.caveats if c.startswith("Measured on 2")]
    assert len(measured) == 1
    golden.check(VIEW, "the configuration advised, set beside the advice", measured[0])
    assert beside.calibration is not None
    assert beside.calibration.runs.one_step_ms == 1.75
    assert not any(line.startswith("Measured on") for line in beside.explanation)

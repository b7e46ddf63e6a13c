"""A measured speedup is one figure wherever it is set against a prediction: the bench's
ratio of two runs over the N = 1 step the prediction models (its record's ``basis``),
beside the predicted ratio of two steps. The caveat and the report's check once said one
figure and the decision another (a quickstart run: 0.47 and 0.714) for one run, on
opposite sides of an interval; then all said 0.714, over the bare step (1.622 ms), beside
a prediction over DDP's no-sync step (1.064 ms, DDP's 1.664 ms less its own 0.6 ms): like
set against unlike. Now the report's check says 0.469, over the no-sync step, as the
decision does; ``analyze --bench``'s ``speedup`` keeps 0.714, over the bare step."""

from __future__ import annotations

import re

import pandas as pd
import pytest

from gpuscale.advice.calibrate.bench_basis import measured_runs
from gpuscale.advice.explain.caveats import against_measured
from gpuscale.advice.search.decide import measured_counts
from gpuscale.advice.types import Measured
from gpuscale.analysis.bench_scaling import bench_scaling
from gpuscale.bench.config import BenchConfig
from gpuscale.bench.results import bench_table
from gpuscale.report.bench_checks import checks as report_checks
from gpuscale.tables.advice import as_throughput

from ..builders import bench_record
from ..golden import Golden

VIEW = "advice/against_measured"
# the measured speedup read back from the caveat and from the report's check
SAID = re.compile(r"Measured (?:m )?on 2 devices[^:]*: (?:throughput speedup )?([\d.]+)x?")

ONE_MS, BATCH = 1.064, 8  # the advice's one-device step (no DDP) at per-device batch 8
RUN_MS, BARE_MS = 4.541, 1.622  # the measured 2-device step, the bench's bare N = 1 step
RUN_SPS = 2 * BATCH / (RUN_MS / 1e3)  # what the 2-device run did, all devices
BENCH_SPEEDUP = RUN_SPS / (BATCH / (BARE_MS / 1e3))  # the bench's ratio: 0.714
ADVICE_SPEEDUP = RUN_SPS / (BATCH / (ONE_MS / 1e3))  # on the advice's baseline: 0.469


def _predictions(low: float, high: float) -> pd.DataFrame:
    """The advice's table: one device at batch 8, 2 devices at 8 each (weak scaling), the
    2-device throughput speedup interval ``low``-``high`` about its middle."""
    mid = (low + high) / 2
    return pd.DataFrame(
        {
            "accelerators": [1, 2],
            "batch_per_device": [BATCH, BATCH],
            "accum": [1, 1],
            "step_ms": [ONE_MS, 2 * ONE_MS / mid],
            "samples_per_s": [BATCH / (ONE_MS / 1e3), mid * BATCH / (ONE_MS / 1e3)],
            "speedup": [1.0, mid],
            "speedup_low": [1.0, low],
            "speedup_high": [1.0, high],
            "throughput_efficiency": [1.0, mid / 2],
            "efficiency": [1.0, mid / 2],
        }
    )


def _measured() -> Measured:
    return Measured(
        devices=2,
        speedup=BENCH_SPEEDUP,
        flagged=False,
        batch_per_device=BATCH,
        base=(BATCH, 1),
        samples_per_s=RUN_SPS,
    )


def test_the_premise() -> None:
    assert round(BENCH_SPEEDUP, 3) == 0.714 and round(ADVICE_SPEEDUP, 2) == 0.47


@pytest.mark.parametrize(("low", "high"), [(0.3, 0.6), (0.6, 0.8), (0.8, 1.2)])
def test_the_caveat_says_the_records_one_figure(low: float, high: float, golden: Golden) -> None:
    (count,) = measured_counts(_predictions(low, high), [_measured()])
    assert count.measured_speedup == pytest.approx(BENCH_SPEEDUP)
    assert count.inside is (low <= BENCH_SPEEDUP <= high)
    (line,) = against_measured([count])
    said = SAID.findall(line)
    assert said == [f"{BENCH_SPEEDUP:.3g}"], line  # one figure, the record's
    golden.check(VIEW, f"the bench's ratio beside {low}-{high}x", line)


def _scaling() -> pd.DataFrame:
    """The bench's rows as the report reads them (:func:`_records`)."""
    return bench_scaling(bench_table(_records()))


def _records() -> list[dict]:
    """N = 1 with its phases 1.064 ms apart, its bare step 1.622 ms and DDP's 1.664 ms (its
    own work 0.6 ms); N = 2 at 16 samples in 4.541 ms."""
    config = BenchConfig(steps=400, batch=BATCH)
    phases = {"forward_ms": 0.2, "backward_ms": 0.4, "optimizer_ms": ONE_MS - 0.6}
    records = [
        bench_record(
            "m",
            10**5,
            1,
            BATCH / (1.664 / 1e3),
            config=config,
            plain_step_ms=BARE_MS,
            sync_overhead_ms=0.6,
            **phases,
        ),
        bench_record("m", 10**5, 2, RUN_SPS, config=config, sync_overhead_ms=3.0, **phases),
    ]
    return records


def test_the_reports_check_says_the_same_figure(golden: Golden) -> None:
    scaling = _scaling()
    multi = scaling[scaling["accelerators"] == 2]
    assert abs(float(multi["speedup"].iloc[0]) - BENCH_SPEEDUP) < 1e-6  # the premise
    # the advice's record of the run: over the no-sync step, as the prediction's one device
    (run,) = measured_runs(bench_table(_records()), "m", allow_flagged=False)
    assert run.basis == "nosync" and run.speedup == pytest.approx(ADVICE_SPEEDUP, rel=1e-6)
    for (low, high), inside in (((0.4, 0.55), True), ((0.6, 0.8), False)):
        frames = [as_throughput(_predictions(low, high)), None]
        lines = [c.line for c in report_checks(frames, multi, pd.Series(["m"]), scaling)]
        assert len(lines) == 1, lines
        assert ("OUTSIDE" in lines[0]) is not inside, lines[0]
        said = SAID.findall(lines[0])
        assert said == [f"{ADVICE_SPEEDUP:.2f}"], lines[0]  # the record's figure, alone
        assert "no-sync N = 1 step" in lines[0], lines[0]
        where = "inside" if inside else "outside"
        golden.check(VIEW, f"the report's check, {where}, the bench's ratio", lines[0])

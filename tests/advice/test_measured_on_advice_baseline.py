"""A measured speedup and the predicted interval it is set against share one baseline.
The bench's speedups are against its bare N = 1 step (1.622 ms in a quickstart run), the
advice's against its own one-device step (1.064 ms): "Measured on 2 devices:
throughput speedup 0.714, outside the predicted 0.216-0.394x" compared a ratio on one
baseline with an interval on another. On the advice's, the run's 16 samples in 4.541 ms
are 2 x 1.064 / 4.541 = 0.47 of one device: the caveat and the report's check compare
that, and say both."""

from __future__ import annotations

import re

import pandas as pd

from gpuscale.advice.explain.against_measured import against_measured
from gpuscale.advice.measured_runs import Measured
from gpuscale.analysis.bench_scaling import bench_scaling
from gpuscale.bench.config import BenchConfig
from gpuscale.bench.results import bench_table
from gpuscale.report.bench_checks import checks as report_checks
from gpuscale.tables.advice import as_throughput

from ..builders import bench_record
from ..golden import Golden

VIEW = "advice/against_measured"
# the measured speedup read back from the sentence, on the advice's baseline
ON_ADVICE = re.compile(r"([\d.]+)x? against the advice's one-device step")

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


def test_inside_the_interval_on_its_own_baseline_is_no_disagreement(golden: Golden) -> None:
    # 0.47 lies inside 0.3-0.6 on the advice's baseline; only the bench's 0.714 is outside
    (line,) = against_measured(_predictions(0.3, 0.6), [_measured()])
    compared = ON_ADVICE.search(line)
    assert compared and compared.group(1) == f"{ADVICE_SPEEDUP:.3g}", line
    assert "inside" in line and "0.45 (0.3-0.6x" in line and "outside" not in line, line
    golden.check(VIEW, "inside the interval on the advice's baseline", line)


def test_outside_is_said_on_the_intervals_baseline_with_the_benchs_too(golden: Golden) -> None:
    lines = against_measured(_predictions(0.216, 0.394), [_measured()])
    assert len(lines) == 1, lines
    line = lines[0]
    compared = ON_ADVICE.search(line)
    assert compared, line
    assert abs(float(compared.group(1)) - ADVICE_SPEEDUP) < 0.005, line
    assert "outside" in line and "0.305 (0.216-0.394x" in line
    assert f"{BENCH_SPEEDUP:.3g} against" in line  # the bench's own ratio, said too
    assert "1.06 ms" in line  # the baseline's step, said
    golden.check(VIEW, "outside the interval on the advice's baseline", line)


def _scaling() -> pd.DataFrame:
    """The bench's rows as the report reads them: N = 1 with its phases 1.064 ms apart, its
    bare step 1.622 ms and DDP's 1.664 ms; N = 2 at 16 samples in 4.541 ms."""
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
    return bench_scaling(bench_table(records))


def test_the_reports_check_compares_on_the_intervals_baseline(golden: Golden) -> None:
    scaling = _scaling()
    multi = scaling[scaling["accelerators"] == 2]
    assert abs(float(multi["speedup"].iloc[0]) - BENCH_SPEEDUP) < 1e-6  # the premise
    for (low, high), inside in (((0.3, 0.6), True), ((0.216, 0.394), False)):
        frames = [as_throughput(_predictions(low, high)), None]
        lines = [c.line for c in report_checks(frames, multi, pd.Series(["m"]), scaling)]
        assert len(lines) == 1, lines
        assert ("OUTSIDE" in lines[0]) is not inside, lines[0]
        compared = ON_ADVICE.search(lines[0])
        assert compared and compared.group(1) == f"{ADVICE_SPEEDUP:.3g}", lines[0]
        where = "inside" if inside else "outside"
        golden.check(VIEW, f"the report's check, {where} on the advice's baseline", lines[0])

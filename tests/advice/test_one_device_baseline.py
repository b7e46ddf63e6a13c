"""The one-device baseline of every speedup is the step one device really needs: the bare
module, where the bench timed it. A CPU walk: FSDP's one-rank step of mlp-1m took 60.1 ms
beside its bare step's 22.1 ms (4.7x on mlp-0.2m), and the advice read FSDP's N > 1 runs
against the 60.1 ms (2 devices 2.01x predicted, 2.78x "measured", where the bench's own
ratio over the bare step was 1.02x). Where the bench timed no bare step faster than the
wrapper's, the baseline is that step, with FSDP's own work in it said as a number."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import gpuscale
from gpuscale.analysis.bench_scaling import bench_scaling
from gpuscale.analysis.bench_sentences import wrapped_baselines
from gpuscale.bench.config import BenchConfig
from gpuscale.bench.results import bench_table
from gpuscale.bench.results_file import append_result

from ..builders import bench_record
from ..golden import Golden

FSDP = BenchConfig(steps=40, batch=8, strategy="fsdp")
PHASES = {"forward_ms": 20.0, "backward_ms": 40.0, "optimizer_ms": 1.0}
ONE_MS, BARE_MS = 71.0, 25.0  # FSDP's one-rank step (61 ms no-sync + 10 ms sync), bare step
TWO_SPS = 2 * 8 / (50.0 / 1e3)  # the 2-device run: 16 samples in 50 ms


def _records(bare_ms: float | None) -> list[dict]:
    return [
        bench_record(
            "mlp-1m",
            10**6,
            1,
            8 / (ONE_MS / 1e3),
            config=FSDP,
            sync_overhead_ms=10.0,
            plain_step_ms=bare_ms,
            **PHASES,
        ),
        bench_record(
            "mlp-1m", 10**6, 2, TWO_SPS, config=FSDP, sync_overhead_ms=10.0, comm_ms=1.0, **PHASES
        ),
    ]


def _file(tmp_path: Path, bare_ms: float | None) -> Path:
    tmp_path.mkdir(parents=True, exist_ok=True)
    path = tmp_path / "results.jsonl"
    for record in _records(bare_ms):
        append_result(path, record)
    return path


def test_fsdp_advice_reads_its_speedups_against_the_bare_step(tmp_path: Path) -> None:
    advice = gpuscale.advise(bench=str(_file(tmp_path, BARE_MS)), max_devices=2)
    one = advice.predictions.iloc[0]
    assert int(one["accelerators"]) == 1
    assert float(one["step_ms"]) == pytest.approx(BARE_MS, rel=1e-6)
    assert advice.calibration.runs.one_step_ms == pytest.approx(ONE_MS)
    assert advice.calibration.runs.one_own_ms == pytest.approx(ONE_MS - BARE_MS)
    # the speedups of the table are against that step: samples/s over its 8 / 25 ms
    rate = 8 / (BARE_MS / 1e3)
    for row in advice.predictions.itertuples():
        assert row.speedup == pytest.approx(row.samples_per_s / rate, rel=1e-6)
    # the bench's own ratio, the analysis's: the same baseline
    scaling = bench_scaling(bench_table(_records(BARE_MS)))
    two = scaling[scaling["accelerators"] == 2].iloc[0]
    assert two["baseline"] == "plain N = 1 step"
    assert float(two["speedup"]) == pytest.approx(TWO_SPS / rate, rel=1e-6)


def test_without_a_bare_step_the_wrappers_step_is_the_baseline_with_its_own_work(
    tmp_path: Path, golden: Golden
) -> None:
    for bare in (None, ONE_MS + 0.5):  # none timed; an older bench's sharded "plain" step
        advice = gpuscale.advise(bench=str(_file(tmp_path / str(bare), bare)), max_devices=2)
        assert float(advice.predictions.iloc[0]["step_ms"]) == pytest.approx(ONE_MS, rel=1e-6)
        one = advice.calibration.runs
        assert one.one_own_ms == 0.0
        assert one.one_fsdp_own_ms == pytest.approx(10.0)  # its synchronised minus no-sync step
        scaling = bench_scaling(bench_table(_records(bare)))
        two = scaling[scaling["accelerators"] == 2].iloc[0]
        assert two["baseline"] == "FSDP N = 1"
        assert float(two["speedup"]) == pytest.approx(TWO_SPS / (8 / (ONE_MS / 1e3)), rel=1e-6)
        (line,) = wrapped_baselines(scaling)  # analyze and report say what it overstates
        factor = re.search(r"by up to ([\d.]+)x", line)
        assert factor and float(factor.group(1)) == pytest.approx(ONE_MS / (ONE_MS - 10), 1e-2)
        golden.check("analysis/bench_notes", "a wrapped one-rank baseline", line)
    assert not wrapped_baselines(bench_scaling(bench_table(_records(BARE_MS))))

"""A bench run's sampled power that drops out (a reading at ~0 W, a failed read, a stretch
with no reading) is counted where the energy is made, flagged in the bench table
(``energy_flag``), left out of the advice's energy and said where the runs are rendered."""

from __future__ import annotations

import json
import math
import time
from pathlib import Path

import pytest

import gpuscale
from gpuscale.analysis.bench_scaling import bench_scaling
from gpuscale.analysis.bench_sentences import trouble_lines
from gpuscale.bench.summary import _power
from gpuscale.bench.table import bench_table
from gpuscale.bench.telemetry import MAX_GAP_S, GpuMeter, nvml_handle, sampled_power
from gpuscale.plausibility import energy_meter_flag

from ..fake_nvml import FakeNvml, hgx_h100

H100 = Path(__file__).parents[1] / "report" / "h100_paths.jsonl"


def test_a_reading_at_zero_watts_is_a_dropout_left_out_of_the_mean() -> None:
    # 20 readings a second for 1 s at 300 W, the 8th read 0 W (NVML's momentary zero)
    readings = [(0.05 * k, 0.0 if k == 7 else 300.0) for k in range(20)]
    got = sampled_power(readings, 0.0, 1.0)
    assert got.power_w_mean == pytest.approx(300.0)  # averaged in, it was 285 W
    assert got.energy_j == pytest.approx(300.0)
    assert got.power_dropouts == 1
    assert got.power_uncovered_s == 0.0


def test_a_stretch_without_readings_is_uncovered() -> None:
    # readings stop at 0.4 s of a 2 s phase (the sampler's reads failed from there): the
    # last 1.6 s are no measurement
    readings = [(0.05 * k, 250.0) for k in range(9)]
    got = sampled_power(readings, 0.0, 2.0)
    assert got.power_dropouts == 1
    assert got.power_uncovered_s == pytest.approx(1.6)
    assert got.energy_j == pytest.approx(500.0)  # 250 W x 2 s: an estimate, flagged
    # a failed read (None) and a reading at 2 W inside a short stretch: two dropouts, no
    # stretch long enough to be uncovered
    short = [(0.0, 300.0), (0.05, None), (0.1, 2.0), (0.15, 300.0)]
    assert MAX_GAP_S > 0.15
    got = sampled_power(short, 0.0, 0.2)
    assert (got.power_dropouts, got.power_uncovered_s) == (2, 0.0)


def test_no_usable_reading_gives_no_energy() -> None:
    got = sampled_power([(0.0, 0.0), (0.05, 0.0)], 0.0, 0.1)
    assert got.power_w_mean is None and got.energy_j is None
    assert got.power_dropouts == 2


class _ZeroEveryOther(FakeNvml):
    """NVML that reads 0 W every other power read, and has no energy counter."""

    reads = 0

    def nvmlDeviceGetPowerUsage(self, h: int) -> int:
        self.reads += 1
        return 0 if self.reads % 2 == 0 else 300_000


def test_the_gpu_meter_counts_zero_readings() -> None:
    system = hgx_h100()
    for gpu in system.gpus:
        gpu.energy = False
    nvml = _ZeroEveryOther(system)
    with GpuMeter(nvml, nvml_handle(nvml, None, system.gpus[0].bus_id)) as meter:
        time.sleep(0.2)
    summary = meter.summary()
    assert nvml.reads >= 2
    assert summary["power_dropouts"] == nvml.reads // 2
    assert summary["power_w_mean"] == pytest.approx(300.0)  # the zeros not averaged in


class _CounterLostAtTheEnd(FakeNvml):
    """NVML whose energy counter answers at the phase's start and fails at its end."""

    reads = 0

    def nvmlDeviceGetTotalEnergyConsumption(self, h: int) -> int:
        self.reads += 1
        if self.reads > 1:
            raise self.NVMLError("lost")
        return 1_000


def test_a_counter_lost_at_the_end_leaves_the_phase_uncovered() -> None:
    system = hgx_h100()
    nvml = _CounterLostAtTheEnd(system)
    with GpuMeter(nvml, nvml_handle(nvml, None, system.gpus[0].bus_id)) as meter:
        time.sleep(0.05)
    summary = meter.summary()
    assert summary["energy_j"] is None and summary["power_dropouts"] == 1
    assert summary["power_uncovered_s"] == pytest.approx(meter._end - meter._start)
    # summed into the record as 0 J, the energy is flagged, not silently short
    assert energy_meter_flag(summary["power_dropouts"], summary["power_uncovered_s"])


def test_the_record_sums_the_meters_dropouts() -> None:
    meters = [
        {"gpu_util_pct_mean": 90, "power_w_mean": 300.0, "energy_j": 30.0,
         "power_source": "sampled power", "power_dropouts": 2, "power_uncovered_s": 0.6},
        {"gpu_util_pct_mean": 90, "power_w_mean": 310.0, "energy_j": 31.0,
         "power_source": "energy counter", "power_dropouts": 0, "power_uncovered_s": 0.0},
    ]  # fmt: skip
    got = _power(meters, world=2, steps_timed=10)
    assert (got["power_dropouts"], got["power_uncovered_s"]) == (2, 0.6)


def _records(dropouts: dict[str, tuple[int, float]]) -> list[dict]:
    """The H100 file's records, the N = 1 runs of the models named given meter dropouts."""
    records = [json.loads(line) for line in H100.read_text().splitlines() if line.strip()]
    for r in records:
        if r["config"]["model"] in dropouts and r.get("nvml"):
            count, seconds = dropouts[r["config"]["model"]]
            r["nvml"] |= {"power_dropouts": count, "power_uncovered_s": seconds}
    return records


def test_the_bench_table_flags_the_energy_not_the_run() -> None:
    table = bench_table(_records({"tf-30m": (3, 1.25)})).set_index("model")
    row = table.loc["tf-30m"]
    assert row["power_dropouts"] == 3 and row["power_uncovered_s"] == 1.25
    assert row["energy_flag"] == energy_meter_flag(3, 1.25)
    assert "3 readings at ~0 W" in row["energy_flag"] and "1.25 s" in row["energy_flag"]
    assert not row["flagged"]  # its step times stand: only the energy is no measurement
    other = table.loc["tf-7m"]
    assert other["energy_flag"] == "" and math.isnan(other["power_dropouts"])  # not recorded
    lines = trouble_lines(bench_scaling(bench_table(_records({"tf-30m": (3, 1.25)}))), table[:0])
    assert [line for line in lines if line.startswith("energy not used")] == [
        f"energy not used tf-30m on 1: {row['energy_flag']}"
    ]


def test_no_dropouts_flag_nothing() -> None:
    assert energy_meter_flag(0, 0.0) == energy_meter_flag(None, None) == ""
    assert energy_meter_flag(math.nan, math.nan) == ""


def test_the_advice_leaves_a_dropped_out_energy_out(tmp_path: Path) -> None:
    clean = gpuscale.advise(bench=H100, model="tf-30m")
    path = tmp_path / "dropouts.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in _records({"tf-30m": (3, 1.25)})))
    dropped = gpuscale.advise(bench=path, model="tf-30m")
    power = next(line for line in dropped.explanation if line.startswith("Power: "))
    assert "a run left out: its power meter dropped out (energy_flag)" in power
    assert "left out" not in next(line for line in clean.explanation if line.startswith("Power: "))
    # the measured 192.7 W no longer charged: the H100's board power (700 W) instead
    assert "measured" not in power and "700 W" in power
    first = dropped.predictions.iloc[0]
    assert first["energy_source"] != clean.predictions.iloc[0]["energy_source"]

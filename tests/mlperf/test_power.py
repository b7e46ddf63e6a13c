"""Energy from hand-built power logs, by the official rule, exactly."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from gpuscale.analysis.energy_per_result import energy_view
from gpuscale.mlperf.ingest import read_round
from gpuscale.mlperf.power import read_power_log

from .logbuilder import RoundBuilder, line


def node_log(
    readings: list[tuple[float, float]],
    start: float,
    stop: float | None,
    efficiency: float | None = None,
) -> bytes:
    lines = [line("power_measurement_start", None, start)]
    if efficiency is not None:
        lines.append(line("conversion_eff", efficiency, start))
    lines += [line("power_reading", w, t) for t, w in readings]
    if stop is not None:
        lines.append(line("power_measurement_stop", None, stop))
    return "\n".join(lines).encode()


def test_node_energy_by_the_official_rule() -> None:
    # readings at 1 s and 3 s: 100 W * 1000 ms + 200 W * 2000 ms over a 4000 ms window
    log = read_power_log(node_log([(1000, 100.0), (3000, 200.0)], 0, 4000, 0.9), "node")
    assert log.mean_power_w == pytest.approx(0.9 * (100 * 1000 + 200 * 2000) / 4000)
    assert log.note == ""


def test_stop_at_start_uses_the_last_reading() -> None:
    log = read_power_log(node_log([(1000, 100.0), (3000, 200.0)], 0, 0), "node")
    assert log.mean_power_w == pytest.approx((100 * 1000 + 200 * 2000) / 3000)
    assert "divides by zero" in log.note


def test_missing_start_and_switches() -> None:
    assert read_power_log(line("power_reading", 5, 1).encode(), "node").mean_power_w is None
    switch = "\n".join(
        [
            line("conversion_eff", 0.5, 0),
            line("interconnect_power_est", 300, 0),
            line("interconnect_power_est", 999, 1),
        ]
    ).encode()
    assert read_power_log(switch, "switch").mean_power_w == pytest.approx(150.0)


def test_run_and_score_energy(tmp_path: Path) -> None:
    rb = RoundBuilder().system("Acme", "box").runs("Acme", "box", "bert", [1, 2, 3, 4, 5])
    for i in range(5):
        stem = f"Acme/results/box/bert/power/result_{i}"
        rb.raw(f"{stem}/node_0.txt", node_log([(1000, 1000.0)], 0, 1000))  # 1 kW
        rb.raw(f"{stem}/sw_0.txt", line("interconnect_power_est", 100.0, 0))
    tables = read_round(rb.write_dir(tmp_path))
    runs = tables.runs.set_index("run_file")
    # run 2 takes 3 minutes: 1 kW * 180 s = 180 kJ; switch 100 W * 180 s = 18 kJ
    run = runs.loc["result_2.txt"]
    assert run["compute_energy_kj"] == pytest.approx(180.0)
    assert run["interconnect_energy_kj"] == pytest.approx(18.0)
    # kept runs are the 2, 3, 4 minute ones: mean energy 1.1 kW * 180 s
    assert tables.scores.iloc[0]["energy_kj"] == pytest.approx(1.1 * 180)


def test_a_run_missing_a_node_has_no_energy(tmp_path: Path) -> None:
    # Two 1 kW nodes per run; run 2's node_1 logs an impossible -5 W reading, so its
    # energy is unknown: no energy for the run (node_0 alone, 180 kJ, is half of it)
    # and none for the score, whose olympic rule keeps run 2.
    rb = RoundBuilder().system("Acme", "box").runs("Acme", "box", "bert", [1, 2, 3, 4, 5])
    for i in range(5):
        stem = f"Acme/results/box/bert/power/result_{i}"
        rb.raw(f"{stem}/node_0.txt", node_log([(1000, 1000.0)], 0, 1000))
        bad = [(500, -5.0), (1000, 1000.0)] if i == 2 else [(1000, 1000.0)]
        rb.raw(f"{stem}/node_1.txt", node_log(bad, 0, 1000))
        rb.raw(f"{stem}/sw_0.txt", line("conversion_eff", 0.9, 0))  # no estimate: 0 W
    tables = read_round(rb.write_dir(tmp_path))
    runs = tables.runs.set_index("run_file")
    assert pd.isna(runs.loc["result_2.txt", "energy_kj"])
    assert pd.isna(runs.loc["result_2.txt", "compute_energy_kj"])
    # the others: two nodes, and the switch without an estimate counts 0 W (official)
    assert runs.loc["result_3.txt", "compute_energy_kj"] == pytest.approx(2 * 240.0)
    assert runs.loc["result_3.txt", "interconnect_energy_kj"] == 0.0
    assert pd.isna(tables.scores.iloc[0]["energy_kj"])
    said = tables.problems[tables.problems["kind"] == "power log"]["message"].tolist()
    assert any("-5.0 W" in m and "its run gets no energy" in m for m in said), said
    # gpuscale energy says why the result has none (not "no power logs")
    view = energy_view(tables, ["bert"])
    assert view.frame.empty
    assert view.empty.startswith("BERT (v4.1): no energy to train for Acme/box (8 accelerators)")


def test_round_without_power_logs(tmp_path: Path) -> None:
    rb = RoundBuilder().system("Acme", "box").runs("Acme", "box", "bert", [1, 2, 3])
    tables = read_round(rb.write_dir(tmp_path))
    assert tables.runs["energy_kj"].isna().all()
    assert pd.isna(tables.scores.iloc[0]["energy_kj"])

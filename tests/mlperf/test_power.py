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


def test_a_power_log_states_its_scope_on_its_conversion_eff_line() -> None:
    """MLCommons' power_measurement.py writes ``measurement_type`` into the metadata of
    ``conversion_eff`` (Dell v4.1 and Lenovo v5.0: ``AC``); a log without one states none."""

    def stating(word: object) -> bytes:
        return "\n".join(
            [
                line("power_measurement_start", None, 0),
                line("conversion_eff", 0.96, 0, measurement_type=word),
                line("power_reading", 100.0, 1000),
                line("power_measurement_stop", None, 1000),
            ]
        ).encode()

    assert read_power_log(stating("AC"), "node").scope == "AC"
    assert read_power_log(stating("dc"), "node").scope == "DC"
    assert read_power_log(node_log([(1000, 100.0)], 0, 1000, 0.9), "node").scope == ""
    odd = read_power_log(stating("wall"), "node")
    assert odd.scope == "" and "'wall'" in odd.note
    assert odd.mean_power_w == pytest.approx(96.0)  # the power is read all the same


def _metered(rb: RoundBuilder, system: str, scope: str | None) -> None:
    """Ten 1..10-minute BERT runs of ``system``, each with a 1 kW node log stating
    ``scope`` (None: stating none)."""
    rb.system("Acme", system).runs("Acme", system, "bert", [float(m) for m in range(1, 11)])
    for i in range(10):
        said = {} if scope is None else {"measurement_type": scope}
        log = [line("power_measurement_start", None, 0), line("conversion_eff", 1.0, 0, **said)]
        log += [line("power_reading", 1000.0, 1000), line("power_measurement_stop", None, 1000)]
        rb.raw(f"Acme/results/{system}/bert/power/result_{i}/node_0.txt", "\n".join(log))


def test_the_power_scope_is_the_logs_word_else_the_names(tmp_path: Path) -> None:
    """box's logs say AC, its names nothing: AC (it read "unstated"); box-ac's names say
    AC, its logs nothing: AC; box-dc's logs say AC where its name says DC: the logs' AC,
    the disagreement said in problems and under the energy table; plain has no power
    logs: no scope."""
    rb = RoundBuilder()
    _metered(rb, "box", "AC")
    _metered(rb, "box-ac", None)
    _metered(rb, "box-dc", "AC")
    rb.system("Acme", "plain").runs("Acme", "plain", "bert", [float(m) for m in range(1, 11)])
    tables = read_round(rb.write_dir(tmp_path))
    scopes = tables.scores.set_index("system_id")["power_scope"].to_dict()
    assert scopes == {"box": "AC", "box-ac": "AC", "box-dc": "AC", "plain": ""}
    runs = tables.runs.groupby("system_id")["power_scope"].agg(set).to_dict()
    assert runs == {"box": {"AC"}, "box-ac": {""}, "box-dc": {"AC"}, "plain": {""}}
    said = tables.problems[tables.problems["kind"] == "power log"]
    assert said["path"].tolist() == ["Acme/results/box-dc/bert/power"]
    assert "state AC" in said["message"].iloc[0] and "say DC" in said["message"].iloc[0]
    view = energy_view(tables, ["bert"])
    assert sorted(view.frame["power_scope"]) == ["AC", "AC", "AC"]
    assert [n for n in view.notes if "box-dc" in n] == [
        f"v4.1 Acme/box-dc bert: {said['message'].iloc[0]}"
    ]


def test_energy_per_sample_is_measured_not_scaled(tmp_path: Path) -> None:
    """The energy score is MLCommons' (the kept runs' mean times the RCP scaling factor);
    energy per sample is those runs' measured energy over the samples they trained:
    scaled, it overstated the energy a sample takes by the factor."""
    import json

    from gpuscale.analysis.energy_per_result import energy_table

    from .logbuilder import convergence_point

    gbs, samples = convergence_point("4.1.0", "bert")
    rb = RoundBuilder().system("Acme", "box")
    rb.runs("Acme", "box", "bert", [float(m) for m in range(1, 11)], samples=samples, gbs=gbs)
    for i in range(10):
        rb.raw(
            f"Acme/results/box/bert/power/result_{i}/node_0.txt", node_log([(1000, 1e3)], 0, 1000)
        )
    rb.raw("Acme/results/box/bert/scaling.json", json.dumps({"scaling_factor": 1.5}))
    row = energy_table(read_round(rb.write_dir(tmp_path))).iloc[0]
    # kept: the 2..9-minute runs at 1 kW, 330 kJ on average; scored x1.5
    assert row["energy_kj"] == pytest.approx(1.5 * 330.0)
    assert row["energy_per_sample_j"] == pytest.approx(1000 * 330.0 / samples)


def test_the_bundled_power_results_read_their_scope_and_measured_energy() -> None:
    """Dell's v4.1 and Lenovo's v5.0 logs state AC (they read "unstated"); v4.0 SMC's
    state none and their folders say AC or DC. Per sample, unscaled: SMC's 8-GPU Llama2
    AC 3,815 J (3,948 J scaled by 1.0347), 72-GPU 3D U-Net AC 16.8 J (17.7 J by 1.0594);
    the energy scores stay MLCommons'."""
    from gpuscale import load_round
    from gpuscale.analysis.energy_per_result import energy_table

    energy = energy_table(load_round("v4.0", "v4.1", "v5.0"))
    scopes = energy.groupby(["round", "org"])["power_scope"].agg(set).to_dict()
    assert scopes == {
        ("v4.0", "smc-ac-power"): {"AC"},
        ("v4.0", "smc-dc-power"): {"DC"},
        ("v4.1", "Dell"): {"AC"},
        ("v5.0", "Lenovo"): {"AC"},
    }
    smc = energy[energy["org"] == "smc-ac-power"].set_index(["benchmark", "accelerators"])
    assert smc.loc[("llama2_70b_lora", 8), "energy_kj"] == pytest.approx(12127.9, abs=0.1)
    assert smc.loc[("llama2_70b_lora", 8), "energy_per_sample_j"] == pytest.approx(3815.4, abs=0.1)
    assert smc.loc[("unet3d", 72), "energy_kj"] == pytest.approx(6010.5, abs=0.1)
    assert smc.loc[("unet3d", 72), "energy_per_sample_j"] == pytest.approx(16.82, abs=0.01)


def test_node_logs_copied_from_another_node_are_said_and_still_summed(tmp_path: Path) -> None:
    """Three nodes per run, at 1, 2 and 3 kW; in runs 0 and 1 node_2's file is node_0's
    byte for byte (as v4.0's SMC multi-node logs come in identical pairs). The energy sums
    every file, as the official rule does, and the result folder gets one ``power log``
    problem counting the copies; ``gpuscale energy`` quotes it under its table. Identical
    switch files, and one node's file again in another run, are no copies."""
    rb = RoundBuilder().system("Acme", "box").runs("Acme", "box", "bert", [1, 2, 3, 4, 5])
    for i in range(5):
        stem = f"Acme/results/box/bert/power/result_{i}"
        watts = [1000.0, 2000.0, 1000.0 if i < 2 else 3000.0]
        for node, w in enumerate(watts):
            rb.raw(f"{stem}/node_{node}.txt", node_log([(1000, w)], 0, 1000))
        rb.raw(f"{stem}/sw_0.txt", line("interconnect_power_est", 0.0, 0))
        rb.raw(f"{stem}/sw_1.txt", line("interconnect_power_est", 0.0, 0))
    tables = read_round(rb.write_dir(tmp_path))
    runs = tables.runs.set_index("run_file")
    # run 0 takes 1 minute: (1 + 2 + 1) kW x 60 s, the copy counted; run 2, 3 minutes
    assert runs.loc["result_0.txt", "compute_energy_kj"] == pytest.approx(240.0)
    assert runs.loc["result_2.txt", "compute_energy_kj"] == pytest.approx(6 * 180.0)
    said = tables.problems[tables.problems["kind"] == "power log"]
    assert said[["path", "message"]].values.tolist() == [
        [
            "Acme/results/box/bert/power",
            "2 of its 15 node power logs repeat another node's of the same run byte for "
            "byte: the energy sums copies",
        ]
    ]
    view = energy_view(tables, ["bert"])
    assert [n for n in view.notes if "copies" in n] == [
        f"v4.1 Acme/box bert: {said['message'].iloc[0]}"
    ]


def test_the_bundled_smc_multi_node_power_logs_repeat_in_pairs() -> None:
    """v4.0 SMC's multi-node runs: 8 nodes give 4 distinct node logs (Llama2 70B LoRA),
    9 give 5 (3D U-Net), 64 give 32-34 (GPT-3) or 32-46 (Llama2); ResNet-50's and
    RetinaNet's 8 nodes one pair; single nodes none. Said per result folder, AC and DC
    alike; the energy scores stay MLCommons'."""
    from gpuscale import load_round

    problems = load_round("v4.0").problems
    copies = problems[problems["message"].str.endswith("the energy sums copies")]
    counts = {
        path.split("/")[2] + " " + path.split("/")[3]: message.split(" node power logs")[0]
        for path, message in zip(copies["path"], copies["message"], strict=True)
        if path.startswith("smc-ac-power/")
    }
    assert counts == {
        "8xSMC-H100-SXM-80GB llama2_70b_lora": "40 of its 80",
        "8xSMC-H100-SXM-80GB resnet": "5 of its 40",
        "8xSMC-H100-SXM-80GB ssd": "5 of its 40",
        "9xSMC-H100-SXM-80GB unet3d": "160 of its 360",
        "64xSMC-H100-SXM-80GB gpt3": "90 of its 192",
        "64xSMC-H100-SXM-80GB llama2_70b_lora": "236 of its 640",
    }
    assert len(copies) == 12 and set(copies["kind"]) == {"power log"}


def _drawing(rb: RoundBuilder, system_id: str, node_w: float, nodes: int = 1) -> None:
    """Five bert runs (1-5 minutes) of ``system_id`` whose nodes each log ``node_w``."""
    rb.system("Acme", system_id, nodes=str(nodes)).runs("Acme", system_id, "bert", [1, 2, 3, 4, 5])
    for i in range(5):
        for n in range(nodes):
            log = node_log([(1000, node_w)], 0, 1000)
            rb.raw(f"Acme/results/{system_id}/bert/power/result_{i}/node_{n}.txt", log)


def test_an_energy_no_accelerator_can_draw_is_flagged_and_left_out_of_findings(
    tmp_path: Path,
) -> None:
    """An energy to train over N x T is the power per accelerator, host included: a node of
    8 logging 6.4 (kW written for W) is 0.8 W each, one logging 48,000 W 6,000 W each; both
    are flagged (``energy_flag``) and said under the table, and neither sets the headline,
    the energy against scale nor the report's figure. The energy score stays MLCommons'."""
    from gpuscale.analysis.energy_per_result import energy_against_scale, energy_table
    from gpuscale.plausibility import MAX_ACCELERATOR_POWER_W, MIN_ACCELERATOR_POWER_W

    rb = RoundBuilder()
    _drawing(rb, "ok", 6_400.0)  # 800 W per accelerator
    _drawing(rb, "kw", 6.4)  # 0.8 W: the node's kW logged as W
    _drawing(rb, "hot", 48_000.0, nodes=2)  # 6,000 W per accelerator, 16 of them
    _drawing(rb, "ok2", 6_000.0, nodes=2)  # 750 W, 16 accelerators
    tables = read_round(rb.write_dir(tmp_path))
    # kept runs 2-4 minutes: the score is the mean energy, as the official rule has it
    scores = tables.scores.set_index("system_id")
    assert scores.loc["kw", "energy_kj"] == pytest.approx(6.4 * 180 / 1000)
    # flagged where the score is made: the round's problems name both folders
    problems = tables.problems[tables.problems["kind"] == "impossible value"]
    assert sorted(problems["path"]) == [f"Acme/results/{s}/bert/power" for s in ("hot", "kw")]
    assert all("W per accelerator" in m for m in problems["message"])
    energy = energy_table(tables).set_index("system_id")
    watts = energy["energy_per_accelerator_hour_kj"] / 3.6
    assert watts.to_dict() == pytest.approx({"ok": 800.0, "kw": 0.8, "hot": 6000.0, "ok2": 750.0})
    flagged = energy["energy_flag"] != ""
    assert flagged.to_dict() == {"ok": False, "kw": True, "hot": True, "ok2": False}
    assert f"under {MIN_ACCELERATOR_POWER_W:,.0f} W" in energy.loc["kw", "energy_flag"]
    assert f"above {MAX_ACCELERATOR_POWER_W:,.0f} W" in energy.loc["hot", "energy_flag"]
    # gpuscale dataset carries the same flag beside the energy
    from gpuscale.analysis.dataset import dataset

    results = dataset(tables)[0].set_index("system_id")
    assert results["energy_flag"].to_dict() == energy["energy_flag"].to_dict()
    # the scale compares the plausible results only: 8 -> 16 accelerators, ok -> ok2
    scale = energy_against_scale(energy_table(tables))
    assert scale[["accelerators_from", "accelerators_to"]].values.tolist() == [[8, 16]]
    assert scale["energy_from_kj"].iloc[0] == pytest.approx(6.4 * 180)
    assert scale["energy_to_kj"].iloc[0] == pytest.approx(2 * 6.0 * 180)
    view = energy_view(tables, ["bert"])
    # the least energy said is ok's (1,152 kJ), not kw's 1.15 kJ
    assert view.headline[0].split(": ", 1)[1].startswith("BERT 1,152 kJ, ok (Acme")
    notes = [n for n in view.notes if "W per accelerator" in n]
    assert [n.split()[1] for n in notes] == ["Acme/kw", "Acme/hot"]
    # the report says each flagged energy with its flag, and compares the others only
    from gpuscale.report.rounds_section import energy_section
    from gpuscale.report.svg import FigureFiles

    section = energy_section(tables, ["bert"], FigureFiles(tmp_path, every=False))
    rows = {f.split(", ")[0].split(": ")[1]: f for f in section.findings if "W per acc" in f}
    assert [k for k, f in rows.items() if f.endswith(": not drawn.")] == ["Acme kw", "Acme hot"]
    (scale_said,) = [f for f in section.findings if "it takes" in f]
    assert "1,152 kJ at 8 accelerators, 2,160 kJ at 16" in scale_said


def _official_run_joules(folder: Path, run: str) -> float:
    """A run's energy (J) by mlperf-logging's own summarizer functions, on ``folder``."""
    import contextlib
    import io

    from mlperf_logging.result_summarizer import result_summarizer as rs

    result_file = f"{folder}/{run}.txt"
    with contextlib.redirect_stdout(io.StringIO()):
        start, stop = rs._query_run_start_stop(
            rs._read_result_file(result_file, "training", "4.1.0")
        )
        return rs._compute_total_power(str(folder), result_file, stop - start, "4.1.0")


@pytest.mark.parametrize("stop_at_start", [False, True])
def test_each_runs_energy_is_the_official_summarizers(tmp_path: Path, stop_at_start: bool) -> None:
    """Run by run, gpuscale's energy is what mlperf-logging's summarizer computes from the
    same logs (readings out of order, a conversion efficiency, a switch). Where the stop
    marker is logged at the start (v4.0's SMC logs), the official tool divides by zero;
    gpuscale's energy is the official tool's on those logs without the marker."""
    rb = RoundBuilder().system("Acme", "box").runs("Acme", "box", "bert", [1, 2, 3, 4, 5])
    for i in range(5):
        stem = f"Acme/results/box/bert/power/result_{i}"
        readings = [(3000, 5200.0 + 10 * i), (1000, 5000.0), (2500, 5900.0), (4000, 6100.0)]
        stop = 0 if stop_at_start else 4500
        rb.raw(f"{stem}/node_0.txt", node_log(readings, 0, stop, 0.93))
        rb.raw(f"{stem}/node_1.txt", node_log([(700, 4800.0), (4200, 5100.0)], 0, stop))
        switch = [line("conversion_eff", 0.9, 0), line("interconnect_power_est", 300.0 + i, 0)]
        rb.raw(f"{stem}/sw_0.txt", "\n".join(switch))
    root = rb.write_dir(tmp_path)
    runs = read_round(root).runs.set_index("run_file")
    folder = root / "Acme/results/box/bert"
    if stop_at_start:
        with pytest.raises(ZeroDivisionError):
            _official_run_joules(folder, "result_0")
        for node in folder.glob("power/*/node_*.txt"):  # the official rule without a stop
            kept = [t for t in node.read_text().splitlines() if "power_measurement_stop" not in t]
            node.write_text("\n".join(kept))
    official = {f"result_{i}.txt": _official_run_joules(folder, f"result_{i}") for i in range(5)}
    ours = {name: 1000 * runs.loc[name, "energy_kj"] for name in official}
    assert ours == pytest.approx(official, rel=1e-12)

"""Calibration from measurements: collectives sweep -> curves and link, bench -> compute,
DDP overhead, overlap and communication, each counted once."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

import gpuscale
from gpuscale.advice.api import worded_refusal
from gpuscale.advice.calibrate.calibration import calibrate
from gpuscale.advice.calibrate.errors import CalibrationError
from gpuscale.advice.calibrate.fits import fit_compute
from gpuscale.advice.calibrate.measured import measured_network, read_comm
from gpuscale.advice.explain.phrasebook import said
from gpuscale.advice.model.network import comm_scale
from gpuscale.advice.model.step import step_at
from gpuscale.bench.config import BenchConfig
from gpuscale.bench.results import bench_table
from gpuscale.cli import app
from gpuscale.interconnect.measured import fit_link
from gpuscale.interconnect.network import Link, Network
from gpuscale.interconnect.records import read_collectives, read_sweeps
from gpuscale.tables.requests import NamedError

from ..builders import bench_record, sweep_rows
from ..golden import Golden

VIEW = "advice/calibrate"

PHB = Network(intra=Link(busbw_gbs=10.0, latency_us=20.0, name="phb"))


def sweep_file(
    tmp_path: Path, busbw_gbs: float, latency_us: float, ranks: int = 2, device: str = "cpu"
) -> Path:
    """An all-reduce sweep that follows the ring model exactly, 8 B to 128 MiB, timed on
    ``device`` (its header's: "cpu", gloo processes, or "cuda")."""
    rows = [
        {"kind": "sweep", "sweep_id": "s1", "device": device, "ranks": ranks, "nodes": 1},
        *sweep_rows(busbw_gbs, latency_us, ranks),
    ]
    path = tmp_path / "coll.jsonl"
    lines = [json.dumps({"schema": "gpuscale.collectives/2", "sweep_id": "s1", **r}) for r in rows]
    path.write_text("\n".join([*lines, "not json"]) + "\n")
    return path


@pytest.mark.parametrize("busbw, latency, ranks", [(0.86, 250.0, 2), (180.0, 8.0, 8)])
def test_link_read_off_a_sweep_recovers_the_ring_model(tmp_path, busbw, latency, ranks) -> None:
    read = read_collectives(sweep_file(tmp_path, busbw, latency, ranks))
    assert [(c.op, c.ranks, len(c.sizes)) for c in read.curves] == [("all_reduce", ranks, 25)]
    link = fit_link(read.curves[0], "measured")
    assert link.busbw_gbs == pytest.approx(busbw, rel=1e-6)
    assert link.latency_us == pytest.approx(latency, rel=1e-6)
    assert read.ranks == ranks


def test_the_curve_is_used_where_measured(tmp_path: Path) -> None:
    network = measured_network(read_collectives(sweep_file(tmp_path, 2.0, 100.0)), PHB)
    ring = 2 * 100e-6 + 1.0 * 5e6 / 2e9  # the sweep's own model at 5 MB, 2 ranks
    assert network.time_s(5e6, 2) == pytest.approx(ring, rel=0.02)  # log-log interpolation
    assert network.intra.busbw_gbs == pytest.approx(2.0, rel=1e-6)


def test_link_is_not_pulled_by_small_message_noise(tmp_path: Path) -> None:
    path = sweep_file(tmp_path, 1.0, 300.0)
    rows = []
    for line in path.read_text().splitlines():
        row = json.loads(line) if line.startswith("{") else None
        if row and row.get("op") == "all_reduce" and row["size_bytes"] <= 2**14:
            row["time_us"] *= 3.0  # jittery small messages
        rows.append(json.dumps(row) if row else line)
    path.write_text("\n".join(rows) + "\n")
    curves = read_collectives(path).curves
    assert fit_link(curves[0], "m").busbw_gbs == pytest.approx(1.0, rel=1e-6)


def test_calibration_needs_an_all_reduce_sweep(tmp_path: Path) -> None:
    path = tmp_path / "coll.jsonl"
    record = {
        "schema": "gpuscale.collectives/2",
        "kind": "result",
        "sweep_id": "s",
        "op": "all_gather",
        "status": "ok",
        "size_bytes": 8,
    }
    path.write_text(json.dumps(record) + "\n")
    with pytest.raises(NamedError, match="all_reduce"):
        read_collectives(path)


@pytest.mark.parametrize(
    "key, value, wanted",
    [
        ("time_us", "abc", "positive"),
        ("time_us", -5.0, "positive"),
        ("busbw_gbs", -1.0, "non-negative"),
    ],
)
def test_a_result_row_holding_no_measurement_is_refused_by_line(
    tmp_path, key, value, wanted
) -> None:
    """A result row whose number no sweep writes (text, a negative time or bandwidth) is
    skipped on reading, said by file and line, and the advice refuses the file rather than
    fit a curve on the rows left."""
    path = sweep_file(tmp_path, 2.0, 100.0)
    lines = path.read_text().splitlines()
    lines[3] = json.dumps({**json.loads(lines[3]), key: value})
    path.write_text("\n".join(lines) + "\n")
    sweeps = read_sweeps(path)
    assert len(sweeps.results) == 24 and len(sweeps.bad_rows) == 1
    said = f":4: {key} {json.dumps(value)} is not a {wanted} number; skipped"
    assert sweeps.bad_rows[0].endswith(said)
    with pytest.raises(NamedError, match=f"coll.jsonl:4: {key} "):
        read_collectives(path)


@pytest.mark.parametrize(
    "key, value, said",
    [
        ("nodes", "one", 'nodes "one" is not a whole count of 1 or more'),
        ("ranks", 0, "ranks 0 is not a whole count of 1 or more"),
        ("settings", [1], "settings [1] is not an object"),
    ],
)
def test_a_sweep_header_no_sweep_writes_is_refused_by_line(tmp_path, key, value, said) -> None:
    """A sweep header edited by hand (nodes as text, no ranks, settings not an object) is
    refused by file and line, as a result row holding no measurement is, where it ended
    in Python's "invalid literal for int() with base 10: 'one'" or a traceback."""
    path = sweep_file(tmp_path, 2.0, 100.0)
    lines = path.read_text().splitlines()
    lines[0] = json.dumps({**json.loads(lines[0]), key: value})
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(NamedError, match=re.escape(f"coll.jsonl:1: sweep header {said}: not a")):
        read_collectives(path)


def synthetic_bench(**n2) -> pd.DataFrame:
    """N = 1: forward 10, backward 20, optimizer 2 ms, DDP's own copies 3 ms; N = 2: the
    same compute, 10 ms of communication of which 60% hidden (exposed 4 ms)."""
    one = bench_record(
        "tf-7m",
        7_000_000,
        1,
        250.0,
        family="transformer",
        forward_ms=10.0,
        backward_ms=20.0,
        optimizer_ms=2.0,
        sync_overhead_ms=3.0,
        flops_per_sample=4.2e8,
    )
    two = bench_record(
        "tf-7m",
        7_000_000,
        2,
        410.0,
        family="transformer",
        forward_ms=10.0,
        backward_ms=20.0,
        optimizer_ms=2.0,
        sync_overhead_ms=3.0 + 4.0,
        comm_ms=10.0,
        flops_per_sample=4.2e8,
        **n2,
    )
    return bench_table([one, two])


def test_calibration_recovers_overlap_and_overhead_and_its_own_point() -> None:
    table = synthetic_bench()
    cal = read_comm(calibrate(table, "tf-7m"), PHB)  # PHB, scaled as measured
    network = cal.machine.network
    assert cal.run.overlap == pytest.approx(0.6)
    assert cal.model.compute.ddp_ms_per_mparam * 7 == pytest.approx(3.0)
    assert network == PHB.scaled(network.comm_scale) and network.comm_scale != 1.0
    assert len(comm_scale(PHB, cal.bench.comm)[1]) == 1  # read from its N = 2 run
    step = step_at(
        cal.model.spec, cal.model.compute, network, 2, batch=cal.run.batch, overlap=cal.run.overlap
    )
    assert step.comm_ms == pytest.approx(10.0)
    assert step.exposed_ms == pytest.approx(4.0)
    measured = table.loc[table["accelerators"] == 2, "step_ms_mean"].iloc[0]
    assert step.step_ms == pytest.approx(measured)  # 32 + 3 + 4 = 39 ms, not 42
    one = step_at(cal.model.spec, cal.model.compute, network, 1, batch=cal.run.batch)
    assert one.step_ms == pytest.approx(32.0)  # one device runs without DDP


def ladder(family: str, fixed: float, tflops: float, **config) -> list[dict]:
    """N = 1 rows whose forward + backward is exactly fixed + b F / R."""
    rows = []
    for params, flops in ((1e6, 6e6), (4e6, 2.4e7), (16e6, 9.6e7)):
        work_ms = 8 * flops / (tflops * 1e12) * 1e3
        rows.append(
            bench_record(
                f"{family}-{params / 1e6:g}m",
                int(params),
                1,
                100.0,
                family=family,
                forward_ms=(fixed + work_ms) / 3,
                backward_ms=2 * (fixed + work_ms) / 3,
                optimizer_ms=0.1 * params / 1e6,
                flops_per_sample=flops,
                **config,
            )
        )
    return rows


def test_compute_fit_recovers_floor_and_rate_per_family() -> None:
    table = bench_table(ladder("mlp", 0.5, 0.05) + ladder("cnn", 3.0, 0.2))
    for family, fixed, tflops in (("mlp", 0.5, 0.05), ("cnn", 3.0, 0.2)):
        found = fit_compute(table[table["family"] == family])
        assert found == pytest.approx((fixed, tflops), rel=1e-6)
    cal = calibrate(table, "cnn-4m")
    assert cal.model.compute.tflops == pytest.approx(0.2, rel=1e-6)
    assert cal.model.compute.fixed_ms == pytest.approx(3.0, abs=1e-9)


def test_rows_of_another_configuration_or_flagged_are_left_out(golden: Golden) -> None:
    # 21 timed steps: a noisy flag stands (on fewer it is re-judged a few-steps spread)
    fp32 = BenchConfig(steps=21, batch=8)
    bf16 = BenchConfig(steps=21, batch=8, precision="bf16")
    records = ladder("mlp", 0.5, 0.05, config=fp32) + ladder("mlp", 0.1, 5.0, config=bf16)
    flagged = bench_record(
        "mlp-4m", 4_000_000, 2, 1.0, comm_ms=50.0, sync_overhead_ms=80.0, config=fp32
    )
    flagged["flags"] = ["noisy no-sync steps"]
    table = bench_table([*records, flagged])
    cal = read_comm(calibrate(table, "mlp-4m"), PHB)
    # the model's latest N = 1 run is bf16: only the bf16 ladder calibrates it
    assert cal.model.compute.tflops == pytest.approx(5.0, rel=1e-6)
    assert cal.model.compute.fixed_ms == pytest.approx(0.1, rel=1e-6)
    # the flagged run taught nothing
    assert cal.run.overlap is None and comm_scale(PHB, cal.bench.comm) == (None, ())
    assert cal.machine.network == PHB  # nothing measured scales it
    notes = [said(note) for note in cal.bench.notes]
    assert any("noisy no-sync steps" in note for note in notes)
    assert any("precision" in note for note in notes)
    golden.check(VIEW, "flagged and other-configuration rows left out", "\n".join(notes))


def test_no_single_device_run_is_a_clear_error(golden: Golden) -> None:
    table = synthetic_bench()
    with pytest.raises(CalibrationError) as refused:
        calibrate(table, "mlp-9m")
    said = str(worded_refusal(refused.value))  # the record, in words where it is shown
    assert "'mlp-9m'" in said and "tf-7m" in said
    golden.check(VIEW, "no N = 1 run of the model", said)


def test_noise_scale_comes_from_the_gradient_norms() -> None:
    rng = np.random.default_rng(1)
    # |G|^2 = 1, tr(Sigma) = 64: B_simple = 64; E|G_b|^2 = 1 + 64 / b
    local = list(1 + 64 / 8 + rng.normal(0, 0.05, 40))
    glob = list(1 + 64 / 16 + rng.normal(0, 0.05, 40))
    noise = {"batch_small": 8, "batch_big": 16, "local_sq": local, "global_sq": glob}
    table = synthetic_bench(noise=noise)
    cal = calibrate(table, "tf-7m")
    assert cal.bench.noise is not None and cal.bench.noise.b_simple == pytest.approx(64, rel=0.05)


def test_advise_takes_a_results_file_as_documented(tmp_path: Path, golden: Golden) -> None:
    """``gpuscale.advise(bench="results.jsonl")`` (the README's call) raised ImportError;
    a path and the DataFrame of the same records give the same advice, and skipped
    lines are named among the warnings (the answer says them)."""
    import gpuscale

    from ..builders import write_jsonl

    records = ladder("mlp", 0.5, 0.05)
    path = write_jsonl(tmp_path / "results.jsonl", records, extra_lines=("not json",))
    from_file = gpuscale.advise(bench=str(path), link="pcie-phb")
    from_frame = gpuscale.advise(bench=bench_table(records), link="pcie-phb")
    assert from_file.recommended == from_frame.recommended
    skipped = [s for s in from_file.decision.warnings if "results.jsonl:" in s]
    assert len(skipped) == 1 and skipped[0].startswith("1 line")
    tmp = {str(tmp_path): "<tmp>"}
    golden.check(VIEW, "a line of the results skipped", skipped[0], paths=tmp)
    with pytest.raises(ValueError) as empty:
        gpuscale.advise(bench=write_jsonl(tmp_path / "empty.jsonl", [], extra_lines=("{}",)))
    golden.check(VIEW, "a file of no bench results", str(empty.value), paths=tmp)


def test_a_link_given_beside_measured_curves_is_refused(tmp_path: Path, golden: Golden) -> None:
    """`advise --collectives coll.jsonl --interconnect nvlink4` never mentioned nvlink4
    (a user walk); then it was said unused at exit 0; now the two are refused together,
    naming both (the curves give the link); a bench file given as --collectives is named
    as one."""
    import gpuscale

    curves = sweep_file(tmp_path, 2.0, 100.0, device="cuda")  # GPUs, as the model's
    numbers = dict(params=7e6, step_ms=20.0, batch=64, collectives=str(curves))
    for given in ({"interconnect": "NVLINK4"}, {"busbw_gbs": 50.0}):
        with pytest.raises(ValueError) as both:
            gpuscale.advise(**given, **numbers)
        assert "collectives=" in str(both.value) and "interconnect=" in str(both.value)
        # the same words whichever link was given
        golden.check(VIEW, "a link given beside measured curves", str(both.value))
    plain = " ".join(gpuscale.advise(**numbers).explanation)
    assert "is not used" not in plain
    bench = tmp_path / "b.jsonl"
    bench.write_text(json.dumps(bench_record("m", 10**6, 1, 100.0)) + "\n")
    with pytest.raises(ValueError) as bench_given:
        gpuscale.advise(params=7e6, step_ms=20.0, batch=64, collectives=str(bench))
    assert "bench=" in str(bench_given.value)
    golden.check(
        VIEW,
        "a bench file given as collectives",
        str(bench_given.value),
        paths={str(tmp_path): "<tmp>"},
    )


def test_a_sweep_of_other_hardware_is_refused(tmp_path: Path, golden: Golden) -> None:
    """A user walk: `advise --params 7M --step-ms 2 --batch 64 --collectives c.jsonl` of a
    gloo sweep of two CPU processes predicted the GPU model from the CPU's link (0.00435x
    at 2 devices) beside a warning. The sweep was asked for, so a sweep of other hardware
    is refused, naming what to give instead; one of the same kind is used as before."""
    path = sweep_file(tmp_path, 0.86, 250.0, 2)  # its header: device "cpu"
    cpu_rows = Path(__file__).with_name("cpu_tiny_model_gloo.jsonl")  # a CPU model: its own
    for given in ({}, {"device_name": "H100"}, {"max_devices": 4}):
        with pytest.raises(ValueError) as refused:
            gpuscale.advise(params=7e6, step_ms=2, batch=64, collectives=str(path), **given)
        said = str(refused.value)
        assert "CPU processes (gloo)" in said and "interconnect=" in said
    golden.check(VIEW, "a CPU sweep under a GPU model", said, paths={str(tmp_path): "<tmp>"})
    args = ["advise", "--params", "7M", "--step-ms", "2", "--batch", "64", "--collectives"]
    result = CliRunner().invoke(app, [*args, str(path)], env={"COLUMNS": "100"})
    out = result.output
    assert result.exit_code == 2 and out.count("\n") == 1 and "--interconnect" in out, out
    assert "Traceback" not in out and "Use " not in out
    # the path as typed (a folder, a space), not its file's name alone ("coll.jsonl")
    typed = tmp_path / "my sweep.jsonl"
    path.rename(typed)
    result = CliRunner().invoke(app, [*args, str(typed)], env={"COLUMNS": "400"})
    assert result.output.startswith(f"error: '{typed}' (--collectives) timed CPU"), result.output
    path = typed.rename(path)
    # the same kind of hardware: the sweep is the link, as before
    cpu = gpuscale.advise(bench=str(cpu_rows), collectives=str(path))
    assert cpu.calibration.machine.network.name.startswith("the link measured in")
    on_gpus = sweep_file(tmp_path, 0.86, 250.0, 2, device="cuda")
    gpu = gpuscale.advise(params=7e6, step_ms=2, batch=64, collectives=str(on_gpus))
    assert gpu.calibration.machine.network.name.startswith("the link measured in")
    # predicted on the sweep's own link: as a link of its figures given by hand
    by_hand = gpuscale.advise(params=7e6, step_ms=2, batch=64, busbw_gbs=0.86, latency_us=250)
    two, hand = (a.predictions.set_index("accelerators").loc[2, "speedup"] for a in (gpu, by_hand))
    assert two == pytest.approx(hand, rel=0.05) and two < 0.1
    # and the reverse: a sweep of GPUs under a model benched on CPU processes
    with pytest.raises(ValueError) as reverse:
        gpuscale.advise(bench=str(cpu_rows), collectives=str(on_gpus))
    assert "timed GPUs" in str(reverse.value) and "CPU processes the model" in str(reverse.value)
    said = str(reverse.value)
    golden.check(VIEW, "a GPU sweep under a CPU model", said, paths={str(tmp_path): "<tmp>"})


def test_flagged_runs_left_out_are_named_apart_and_whose(golden: Golden) -> None:
    """Each flagged run left out is named as the bench table names its run: two of one model
    at one count read apart; one of another model is said to be another model's, whose runs
    the calibration reads too (its contention at N > 1)."""
    noisy, timed = [], BenchConfig(steps=21, batch=8)  # a noisy flag stands on 21 steps
    for model, params in (("mlp-4m", 4_000_000), ("mlp-4m", 4_000_000), ("mlp-1m", 1_000_000)):
        run = bench_record(model, params, 2, 1.0, comm_ms=50.0, sync_overhead_ms=80.0, config=timed)
        noisy.append(run | {"flags": ["noisy no-sync steps"]})
    table = bench_table([*ladder("mlp", 0.5, 0.05, config=timed), *noisy])
    found = next(n for n in calibrate(table, "mlp-4m").bench.notes if n.kind == "flagged_left_out")
    runs = [(r["model"], r["run"], r["devices"]) for r in found.findings("pairs")]
    assert runs == [
        ("mlp-4m", "mlp-4m (run 1)", 2),
        ("mlp-4m", "mlp-4m (run 2)", 2),
        ("mlp-1m", "mlp-1m", 2),
    ]
    assert found["runs"] == 3 and found["others"] is True
    golden.check(VIEW, "flagged runs of two models, named apart", said(found))
    (own,) = (
        n
        for n in calibrate(table[table["model"] != "mlp-1m"], "mlp-4m").bench.notes
        if n.kind == "flagged_left_out"
    )
    assert own["others"] is False

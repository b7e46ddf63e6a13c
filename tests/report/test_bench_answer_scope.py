"""The top of the report sets beside its advice only runs of the model, device and
configuration the advice is on; every other measured run is said as what it is. A walk
read the advice for tf-7m on the H100 beside "mlp-4m 0.34x on 2 (CPU processes, gloo)"
from the same file, as one answer; and with --model mlp-4m on a file holding mlp-4m on
the CPU (N = 1, 2) and on the H100 (N = 1, the latest), the CPU run was checked against
the H100 advice ("0.169x against the advice's one-device step")."""

from __future__ import annotations

import json
from pathlib import Path

from gpuscale.advice.request import AdviceRequest
from gpuscale.analysis.bench_scaling import bench_scaling
from gpuscale.bench.config import BenchConfig
from gpuscale.bench.results import bench_table, read_results
from gpuscale.report.bench_advice import advice_on_bench
from gpuscale.report.bench_section import build_bench_section
from gpuscale.report.svg import FigureFiles

from ..builders import bench_record

HERE = Path(__file__).parent


def _section(path: Path, tmp_path: Path, **request: object):
    bench = bench_table(read_results(path)[0])
    advice = advice_on_bench(bench, AdviceRequest(interconnect="pcie-phb", **request))
    assert advice.advice is not None and advice.advice.calibration is not None
    section = build_bench_section(bench, FigureFiles(tmp_path), advice=advice)
    assert section is not None
    return bench_scaling(bench), advice.advice.calibration, section


def test_another_models_run_is_said_as_another_model_and_device(tmp_path: Path) -> None:
    scaling, inputs, section = _section(HERE / "h100_paths.jsonl", tmp_path)
    advised = scaling[scaling["model"] == inputs.model.name]
    platform = set(advised["platform"])
    assert len(platform) == 1  # the premise: the advice's model ran on one platform
    others = scaling[
        (scaling["accelerators"] > 1)
        & ~scaling["flagged"]
        & (scaling["model"] != inputs.model.name)
    ]
    assert len(others)  # the premise: mlp-4m on 2 CPU processes
    for r in others.itertuples():
        (line,) = [a for a in section.said if f"{r.configuration} {r.speedup:.2f}x" in a]
        what = "another model and device" if r.platform not in platform else "another model"
        assert f"({r.platform}, batch " in line and f" at each count): {what}" in line
        assert f"the advice is not on (it is on {inputs.model.name} on {platform.pop()})" in line
        assert f"--model {r.model}" in line
        # it names no decision of the advice's: that is its own line
        assert not line.startswith("Advice for")
    # the advice's own configuration was measured at N = 1 only: said so, not left out,
    # with the bench command that runs that configuration (tf-30m in bf16 with FSDP:
    # `bench --models tf-30m --nproc 1,2` runs fp32 DDP, another configuration)
    (none,) = [a for a in section.said if "no multi-device run of what the advice is on" in a]
    assert f"({inputs.model.name} on " in none
    (row,) = advised.itertuples()
    command = none[none.index("gpuscale bench") : none.index("--nproc 1,2")]
    assert f"--models {row.model} " in command and f"--batch {row.batch_per_device} " in command
    assert (row.precision, row.strategy) == ("bf16", "fsdp")  # the premise
    assert "--precision bf16" in command and "--strategy fsdp" in command


def test_a_run_on_another_device_is_not_checked_against_the_advice(tmp_path: Path) -> None:
    """mlp-4m on 1 and 2 CPU processes (batch 8), then on the H100 at batch 8 (N = 1, the
    latest: the advice's): the CPU run is no measurement of the H100 advice."""
    rows = [json.loads(line) for line in (HERE / "h100_paths.jsonl").read_text().splitlines()]
    sweep = [json.loads(line) for line in (HERE / "h100_sweep.jsonl").read_text().splitlines()]
    mine = [r for r in rows if r["config"]["model"] == "mlp-4m"]
    mine += [
        r
        for r in sweep
        if r["config"]["model"] == "mlp-4m" and r["config"]["batch_per_device"] == 8
    ]
    path = tmp_path / "mlp.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in mine))
    scaling, inputs, section = _section(path, tmp_path, model="mlp-4m")
    # the premise: the advice is on the H100 run (its N = 1 step, as it trained)
    (h100,) = scaling[scaling["platform"] != "CPU processes, gloo"].itertuples()
    assert inputs.runs.one_step_ms == h100.step_ms_mean
    (cpu,) = scaling[scaling["accelerators"] > 1].itertuples()
    assert cpu.platform == "CPU processes, gloo"  # the premise
    said = [a for a in section.said if cpu.configuration in a]
    assert said and not any("against the advice" in a or "interval" in a for a in said)
    (line,) = [a for a in section.said if f"{cpu.configuration} {cpu.speedup:.2f}x" in a]
    assert f"({cpu.platform}, batch " in line and " at each count): another device" in line
    # every line of the advice names what it is on: mlp-4m ran on two platforms
    advice = [a for a in section.answer + section.findings if a.startswith("Advice for")]
    assert advice and all(a.startswith("Advice for mlp-4m (") for a in advice)
    assert all(f" on {h100.platform}: " in a for a in advice)
    # the advice's figure draws no measured point: none is of its configuration
    (caption,) = [title for title, _, _ in section.figures if title.startswith("Predicted")]
    assert "not drawn" not in caption


def test_an_advice_in_another_strategy_says_so_and_measures_that_one(tmp_path: Path) -> None:
    """tf-30m was benched with FSDP only; asked to predict DDP, the advice is on no run the
    bench made: its lines say what it is on, and the command measures DDP (the run's
    configuration otherwise), not the FSDP run again."""
    scaling, inputs, section = _section(HERE / "h100_paths.jsonl", tmp_path, strategy="ddp")
    runs = scaling[scaling["model"] == inputs.model.name]
    assert set(runs["strategy"]) == {"fsdp"} and inputs.run.strategy == "ddp"  # the premise
    (row,) = runs.itertuples()
    scope = f"{inputs.model.name} on {row.platform}, predicted with DDP"
    advice = [a for a in section.answer if a.startswith("Advice for")]
    assert advice and all(a.startswith(f"Advice for {scope}: ") for a in advice)
    (none,) = [a for a in section.said if "no multi-device run of what the advice is on" in a]
    assert f"({scope})" in none
    command = none[none.index("gpuscale bench") : none.index("--nproc 1,2")]
    assert f"--precision {row.precision}" in command and "--strategy" not in command


def test_a_run_on_the_advised_platform_is_not_said_another_device(tmp_path: Path) -> None:
    """b benched with FSDP and predicted with DDP (no run of b is the advice's), a's run
    on the same CPU processes: another model, not another device."""
    fsdp = BenchConfig(steps=20, batch=8, strategy="fsdp")
    rows = [
        bench_record("a", 10**5, 1, 100.0),
        bench_record("a", 10**5, 2, 150.0, sync_overhead_ms=1.0, comm_ms=2.0),
        bench_record("b", 10**6, 1, 100.0, config=fsdp),
    ]
    path = tmp_path / "ab.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    scaling, inputs, section = _section(path, tmp_path, strategy="ddp", max_devices=2)
    assert inputs.model.name == "b" and inputs.run.strategy == "ddp"  # the premise
    (a,) = scaling[scaling["accelerators"] > 1].itertuples()
    (b,) = scaling[scaling["model"] == "b"].itertuples()
    assert a.platform == b.platform  # the premise: one platform
    (line,) = [x for x in section.said if f"a {a.speedup:.2f}x on 2" in x]
    assert f"({a.platform}, batch " in line and " at each count): another model," in line

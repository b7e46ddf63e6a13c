"""fp32 as PyTorch runs it by default: the MFU peak to match each mode, the
options that say it, and the H100 rows read as they ran."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from gpuscale.bench.results import bench_table, read_results
from gpuscale.hardware.peaks import mfu, peak_for

H100 = "NVIDIA H100 80GB HBM3"


def test_the_peak_matches_the_tf32_mode() -> None:
    peak = peak_for(H100)
    assert peak is not None
    assert peak.tflops("fp32", "off", conv_share=1.0) == peak.fp32
    assert peak.tflops("fp32", "on") == peak.tf32
    # by default convolutions run in TF32 and matmuls do not
    assert peak.tflops("fp32", "default", conv_share=1.0) == pytest.approx(peak.tf32)
    assert peak.tflops("fp32", "default", conv_share=0.0) == peak.fp32
    half = peak.tflops("fp32", "default", conv_share=0.5)
    assert peak.fp32 < half < peak.tf32
    # half the FLOPs at each peak: the time is the sum of the two halves' times
    assert 1 / half == pytest.approx(0.5 / peak.tf32 + 0.5 / peak.fp32)
    assert mfu(peak.tf32 / 2, H100, "fp32", "default", 1.0) == pytest.approx(0.5)
    assert peak.tflops("bf16", "default", conv_share=1.0) == peak.bf16


def test_the_options_reach_the_sweep(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    pytest.importorskip("torch")
    from gpuscale.bench import sweep_plan
    from gpuscale.bench.runner import SweepReport
    from gpuscale.cli import app

    seen = []

    def sweep(cfg, sizes, **_) -> SweepReport:
        seen.append(cfg.bench.tf32)
        return SweepReport()

    monkeypatch.setattr(sweep_plan, "run_sweep", sweep)
    base = ["bench", "--models", "mlp-0.2m", "--nproc", "1"]  # auto: a GPU where there is one
    for extra in ([], ["--tf32"], ["--no-tf32"]):
        result = CliRunner().invoke(app, [*base, "--out", str(tmp_path / "r.jsonl"), *extra])
        assert result.exit_code == 0, result.output
    assert seen == ["default", "on", "off"]
    # with gloo the ranks run on CPUs, where TF32 does nothing: refused, not a configuration
    # of its own that split the N = 1 baselines ("mlp-0.2m (TF32 off)")
    for extra in (["--tf32"], ["--no-tf32"]):
        args = [*base, "--backend", "gloo", "--out", str(tmp_path / "r.jsonl"), *extra]
        result = CliRunner().invoke(app, args)
        said = " ".join(result.stderr.split())
        assert result.exit_code == 2 and "--backend gloo" in said and f"{extra[0]} given" in said
    assert len(seen) == 3


def test_a_cpu_run_records_the_tf32_it_ran() -> None:
    """On CPUs (no GPU found under the default backend) no TF32 runs: the row says so."""
    from gpuscale.bench.config import BenchConfig
    from gpuscale.bench.row_keys import resolved_config

    cfg = BenchConfig(tf32="off")
    where = {"model": "m", "family": "mlp", "params": 1, "accelerators": 1, "nnodes": 1}
    assert resolved_config(cfg, **where, device="cpu", threads=1)["tf32"] == "default"
    assert resolved_config(cfg, **where, device="cuda", threads=1)["tf32"] == "off"


@pytest.mark.shared
def test_the_h100_rows_say_what_they_ran(h100) -> None:
    """Written before the modes: ``false`` turned cuDNN's TF32 off (the row's environment
    says so), so it reads as ``off``, and cnn-19m's --tf32 as ``on``."""
    records, _ = read_results(h100("paths.jsonl"))
    table = bench_table(records)
    cnn = table[table["model"] == "cnn-19m"]
    assert list(cnn["tf32"]) == ["on"]
    ladder = bench_table(read_results(h100("ladder.jsonl"))[0])
    assert set(ladder["tf32"]) == {"off"}


def test_a_row_of_every_mode_is_read_and_a_bad_mode_is_said(tmp_path: Path) -> None:
    """The row check reads ``config.tf32`` as true, false or ``"default"`` (what the bench
    writes), never skipping a row for it; a mode it does not know is refused, naming the
    field."""
    import json

    from gpuscale.bench.config import BenchConfig

    from ..builders import bench_record

    rows = [
        bench_record("m", 10**6, 1, 100.0, config=BenchConfig(steps=20, tf32=mode))
        for mode in ("default", "on", "off")
    ]
    old = bench_record("m", 10**6, 2, 150.0)
    old["config"]["tf32"] = False  # written before the modes
    bad = bench_record("m", 10**6, 4, 200.0)
    bad["config"]["tf32"] = "sometimes"
    path = tmp_path / "r.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in [*rows, old, bad]))
    records, problems = read_results(path)
    assert [r["config"]["tf32"] for r in records] == ["default", "on", "off", False]
    assert set(bench_table(records)["tf32"]) == {"default", "on", "off"}
    assert len(problems) == 1 and "config.tf32 is 'sometimes', not one of" in problems[0]


@pytest.mark.parametrize("device", ["cpu", "cuda"])
def test_a_gpu_option_that_does_nothing_here_is_said(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, device: str
) -> None:
    """`bench --tf32` under --backend auto on a host without a GPU runs as if --tf32 were
    not given (the row's tf32 'default' is what ran), which is said: on CPU
    ranks each GPU option given is said not to apply, on stderr before the sweep; on a
    GPU nothing is said."""
    pytest.importorskip("torch")
    from gpuscale.bench import sweep_plan
    from gpuscale.bench.runner import SweepReport
    from gpuscale.cli import app

    monkeypatch.setattr(sweep_plan, "run_sweep", lambda *a, **k: SweepReport())
    monkeypatch.setattr(sweep_plan, "device_kind", lambda backend: device)
    base = ["bench", "--models", "mlp-0.2m", "--nproc", "1", "--out", str(tmp_path / "r.jsonl")]
    for extra, flags in (
        (["--tf32"], ["--tf32"]),
        (["--no-tf32", "--no-nvml"], ["--no-tf32", "--no-nvml"]),
        ([], []),
    ):
        result = CliRunner().invoke(app, [*base, *extra])
        assert result.exit_code == 0, result.output
        notes = [line for line in result.stderr.splitlines() if line.startswith("note: ")]
        if device == "cuda":
            assert notes == [], result.stderr
            continue
        assert [n.split()[1] for n in notes] == flags, result.stderr
        assert all("does not apply here" in n and "CPUs" in n for n in notes)
        if "--tf32" in flags:
            assert "no CUDA device" in notes[0] and "tf32 'default'" in notes[0]

"""On a GPU (marked ``gpu``, skipped without CUDA): the bench's plain
step against an independent loop of the same module, its memory, NVML and MFU fields,
and the refusals of a host with fewer GPUs than asked. The refusals also run everywhere
with a faked device count (``test_device_refusals.py``)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest
from typer.testing import CliRunner

torch = pytest.importorskip("torch")

from gpuscale.bench.config import BenchConfig  # noqa: E402
from gpuscale.bench.models import parameter_count  # noqa: E402
from gpuscale.bench.results import read_results  # noqa: E402
from gpuscale.bench.runner import SweepConfig, run_sweep  # noqa: E402
from gpuscale.cli import app  # noqa: E402

# the independent loop: benchmarks/plain_step_probe.py's, which times it beside the bench's
PROBE = Path(__file__).resolve().parents[2] / "benchmarks" / "plain_step_probe.py"
_spec = importlib.util.spec_from_file_location("plain_step_probe", PROBE)
assert _spec is not None and _spec.loader is not None
probe = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(probe)

pytestmark = [
    pytest.mark.gpu,
    pytest.mark.slow,
    pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device"),
]
MODELS = ("mlp-4m", "cnn-4.7m", "tf-7m")  # the three kinds; a CNN runs cuDNN (TF32)
BATCH = probe.BATCH  # the loop's batch, so both time the same step


@pytest.fixture(scope="module")
def rows(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict]:
    out = tmp_path_factory.mktemp("gpu") / "results.jsonl"
    config = SweepConfig(
        models=MODELS,
        nproc=(1,),
        out=out,
        bench=BenchConfig(steps=20, warmup=5, batch=BATCH),
    )
    report = run_sweep(config, {m: parameter_count(m) for m in MODELS})
    assert report.failures == [], report.failures
    records, problems = read_results(out)
    assert problems == []
    return {r["config"]["model"]: r for r in records}


@pytest.mark.xfail(
    strict=False,
    reason="open: on three of five H100 hosts (2026-11-24) and three H200 hosts "
    "(2026-11-27/28) the bench's bare step of "
    "launch-bound models read above tight loops, by up to a third (mlp-4m 2.64 ms against "
    "1.97-2.15); on two all agreed; the cause is not isolated (docs/measure.md)",
)
@pytest.mark.parametrize("name", MODELS)
def test_the_plain_step_is_a_plain_loop(rows: dict[str, dict], name: str) -> None:
    row = rows[name]
    assert row["config"]["tf32"] == "default"
    assert row["environment"]["tf32_cudnn"] is True
    assert row["environment"]["tf32_matmul"] is False
    # the loop's own repeats set how close a comparison can be: on an H100 host a tight
    # loop of tf-7m took 14.99 and 17.52 ms in one process minutes apart, more than the
    # 10% asked; so the bench's step must lie within 10% of the range of three loops
    loops = [probe.loop_ms(name) for _ in range(3)]
    bench = row["timing"]["plain_step_ms_mean"]
    assert 0.9 * min(loops) < bench < 1.1 * max(loops), (name, bench, loops)


@pytest.mark.parametrize("name", MODELS)
def test_memory_nvml_and_mfu_are_recorded_and_possible(rows: dict[str, dict], name: str) -> None:
    row = rows[name]
    device = row["environment"]["device_memory_bytes"]
    assert device == torch.cuda.get_device_properties(0).total_memory
    assert row["memory"]["kind"] == "cuda_max_allocated"
    assert 0 < row["memory"]["peak_bytes"] < device
    nvml = row["nvml"]
    assert nvml is not None, "NVML not read (nvidia-ml-py installed?)"
    assert nvml["power_w_mean"] > 0 and nvml["energy_j_per_step"] > 0
    assert 0 < row["flops"]["mfu"] <= 1
    assert row["flops"]["peak_tflops"] > 0


def test_more_processes_than_gpus_is_refused(tmp_path: Path) -> None:
    count = torch.cuda.device_count()
    out = tmp_path / "r.jsonl"
    runner = CliRunner()
    args = ["bench", "--models", "mlp-0.2m", "--nproc", f"1,{count + 1}", "--out", str(out)]
    result = runner.invoke(app, args)
    assert result.exit_code == 2, result.output
    visible = f"{count} CUDA device{'' if count == 1 else 's'} visible"
    assert f"{visible}; --nproc {count + 1} needs {count + 1}" in result.output
    assert not out.exists()
    sweep = tmp_path / "collectives.jsonl"
    result = runner.invoke(app, ["collectives", "--nproc", "1", "--out", str(sweep)])
    assert result.exit_code == 2 and "two or more devices" in result.output
    assert not sweep.exists()

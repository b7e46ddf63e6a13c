"""Work beyond the batch a CPU run measured is priced at the run's precision's ceiling.
Where a run's plain steps at two batches differ by less than their work at the ceiling,
the step is a launch-bound floor and work beyond it is priced at the ceiling; on a CPU
that was 8 TFLOP/s a thread, Intel AMX's bf16 figure, for fp32 runs too ("priced at the
ceiling of 1 CPU thread, 8 TFLOP/s, beyond"): larger batches modelled ~30x too fast.

The fp32 ceiling of a thread, from the hardware: AVX-512, 2 FMA units x 16 fp32 lanes x 2
FLOPs a cycle at 4 GHz = 0.256 TFLOP/s; bf16 on AMX: 1,024 multiply-adds a cycle (2,048
FLOPs) at 4 GHz = 8.2 TFLOP/s."""

from __future__ import annotations

import gpuscale
from gpuscale.advice.explain import phrasebook
from gpuscale.advice.model.hardware import ceiling
from gpuscale.advice.types import Finding, FindingKind
from gpuscale.bench.config import BenchConfig
from gpuscale.bench.results import bench_table

from ..builders import bench_record

FP32_THREAD = 2 * 16 * 2 * 4e9 / 1e12  # TFLOP/s, AVX-512 at 4 GHz
AMX_THREAD = 2048 * 4e9 / 1e12
FLOPS, BATCH = 6e8, 8  # per sample; the batch measured (and a quarter of it)


def _fp32_floor_run(precision: str = "fp32") -> list[dict]:
    """One CPU thread, fp32, batch 8: forward + backward 30 ms, optimizer 1 ms; plain steps
    31.0 ms at batch 2 and 31.2 ms at 8 (the work unseen: 8 samples' 4.8 GFLOP take 19 ms
    at the fp32 ceiling), the intercept 30.5 ms."""
    config = BenchConfig(steps=400, batch=BATCH, precision=precision)
    record = bench_record(
        "m", 10**6, 1, BATCH / 0.031, config=config, flops_per_sample=FLOPS,
        forward_ms=10.0, backward_ms=20.0, optimizer_ms=1.0, plain_step_ms=31.2,
    )  # fmt: skip
    record["timing"].update(
        fixed_ms=30.5,
        fixed_ms_low=30.4,
        fixed_ms_high=30.6,
        small_batch_per_device=2.0,
        small_batch_step_ms_mean=31.0,
    )
    assert record["config"]["precision"] == precision  # the premise
    return [record]


def test_fp32_work_beyond_the_batch_measured_is_priced_at_the_fp32_ceiling() -> None:
    advice = gpuscale.advise(bench=bench_table(_fp32_floor_run()))
    compute, model = advice.calibration.model.compute, advice.calibration.model.spec
    assert model.flops == FLOPS
    # 64 samples a device: their work alone takes 150 ms at one thread's fp32 ceiling
    at_ceiling_ms = 64 * FLOPS / (FP32_THREAD * 1e12) * 1e3
    assert compute.micro_ms(model, 64) >= at_ceiling_ms * (1 - 1e-6), compute
    assert compute.tflops <= FP32_THREAD * (1 + 1e-6), compute
    said = phrasebook.said(advice.calibration.model.fixed.basis)
    assert "fp32" in said and "0.256 TFLOP/s" in said, said
    assert "8 TFLOP/s" not in said, said


def test_the_ceiling_names_the_precision_it_is_of() -> None:
    fp32, found = ceiling("cpu", 2, None, "fp32")
    assert abs(fp32 - 2 * FP32_THREAD) < 1e-9
    assert (found["of"], found["threads"], found["precision"]) == ("cpu", 2, "fp32")
    bf16, found = ceiling("cpu", 2, None, "bf16")
    assert abs(bf16 / (2 * AMX_THREAD) - 1) < 0.01 and found["precision"] == "bf16"
    # an accelerator without a recorded peak: the fastest's peak at the precision asked
    gpu32, found32 = ceiling("cuda", 0, None, "fp32")
    gpu16, found16 = ceiling("cuda", 0, None, "bf16")
    assert gpu32 < gpu16 and (found32["precision"], found16["precision"]) == ("fp32", "bf16")
    assert found32["of"] == "fastest" and found32["default"] is None
    # none given: the device's default, said as such
    _, cpu_default = ceiling("cpu", 2)
    _, gpu_default = ceiling("cuda", 0)
    assert (cpu_default["precision"], cpu_default["default"]) == ("fp32", "cpu")
    assert (gpu_default["precision"], gpu_default["default"]) == ("bf16", "gpu")
    # a recorded peak is the device's own, whatever the precision
    assert ceiling("cuda", 0, 67.0, "fp32") == (67.0, Finding.of(FindingKind.CEILING, of="peak"))


def test_bf16_work_is_priced_at_the_bf16_ceiling() -> None:
    """The same run in bf16: AMX's ceiling, the bound its work may reach, and said."""
    advice = gpuscale.advise(bench=bench_table(_fp32_floor_run("bf16")))
    compute, model = advice.calibration.model.compute, advice.calibration.model.spec
    at_fp32_ms = 64 * FLOPS / (FP32_THREAD * 1e12) * 1e3
    assert compute.micro_ms(model, 64) < at_fp32_ms  # faster than fp32 may go
    assert abs(compute.tflops / AMX_THREAD - 1) < 0.01, compute
    said = phrasebook.said(advice.calibration.model.fixed.basis)
    assert "bf16" in said, said

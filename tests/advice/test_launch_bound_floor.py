"""A step on a launch-bound floor (measured on an H100, not built): ``gpuscale bench
--nproc 1 --model torchvision:resnet50 --precision bf16`` twice on one H100 80GB HBM3
(2026-11-24, PyTorch 2.11, a 16-core host), two rows in ``h100_resnet50_bf16.jsonl``. The
step barely grows with the batch (the last row's plain steps: 29.3 ms at batch 8, 32.2 ms
at 32): the host launching kernels sets it. The fixed cost the bench measured (the plain
steps' intercept, less the optimizer) left less of the measured forward + backward than
32 samples' work at the device's peak, so the per-sample rate read from it is no rate the
device can reach (the advice read 1,940 TFLOP/s of a 989 TFLOP/s H100 and flagged its own
input IMPLAUSIBLE). ``h100_resnet50_bf16_large.jsonl``: the same model, same day, on a
fresh H100 host at ``--batch 128`` and ``--batch 256`` (60.7 and 116 ms a step), by the
build of commit 2e0de24, which read the step events after the timed phase (since
reverted)."""

from __future__ import annotations

from pathlib import Path

import gpuscale
from gpuscale.bench.results import bench_table, read_results

MEASURED = Path(__file__).with_name("h100_resnet50_bf16.jsonl")
# held out: the same model on the same kind of host at batch 128 and 256 (``--batch B``),
# never given to the advice below
LARGER = Path(__file__).with_name("h100_resnet50_bf16_large.jsonl")


def _last_row():  # type: ignore[no-untyped-def]
    records, problems = read_results(MEASURED)
    assert problems == [] and len(records) == 2
    return bench_table(records).iloc[-1]


def test_the_measured_rows_sit_on_a_floor() -> None:
    # what the test rests on, read from the rows: the measured fixed cost leaves less of the
    # step than the batch's work at the peak (the data, not the code under test)
    row = _last_row()
    at_peak_ms = 32 * row["flops_per_sample"] / (row["peak_tflops"] * 1e12) * 1e3
    fixed_ms = row["fixed_ms"] - row["optimizer_ms"]
    assert row["forward_ms"] + row["backward_ms"] - fixed_ms < at_peak_ms
    assert row["plain_step_ms_mean"] < 1.2 * row["small_batch_step_ms_mean"]  # nearly flat


def test_a_launch_bound_floor_is_no_rate_above_the_peak() -> None:
    row = _last_row()
    advice = gpuscale.advise(bench=MEASURED, samples=1.28e6, link="nvlink4")
    said = "\n".join(advice.explanation)
    assert "IMPLAUSIBLE" not in said, said
    assert advice.inputs is not None
    assert advice.inputs.compute.tflops <= row["peak_tflops"]
    assert "launch-bound floor" in said
    # a smaller per-device batch stays on the floor: never faster than the step measured
    fb = row["forward_ms"] + row["backward_ms"]
    for batch in (1, 4, 8, 16):
        assert advice.inputs.compute.micro_ms(advice.inputs.model, batch) >= fb * (1 - 1e-9)


def test_a_batch_above_the_floor_is_a_lower_bound_said_so() -> None:
    records, problems = read_results(LARGER)
    assert problems == [] and len(records) == 2
    for _, truth in bench_table(records).iterrows():
        batch = int(truth["batch_per_device"])
        advice = gpuscale.advise(bench=MEASURED, batch=batch, samples=1.28e6, link="nvlink4")
        one = advice.predictions.set_index("accelerators").loc[1]
        # priced at the peak: never above what the device took (held-out measurement)
        assert one["step_ms"] <= truth["plain_step_ms_mean"], (batch, one["step_ms"])
        said = [w for w in advice.decision.warnings if w.startswith("UNMEASURED")]
        assert len(said) == 1 and f"per-device batch {batch} " in said[0]
        assert f"--batch {batch}" in said[0]  # what to measure
    within = gpuscale.advise(bench=MEASURED, batch=16, samples=1.28e6, link="nvlink4")
    assert not [w for w in within.decision.warnings if w.startswith("UNMEASURED")]

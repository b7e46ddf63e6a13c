"""A fixed cost measured from weak runs can take (almost) all of the step: the plain
steps' intercept less the optimizer equal to the whole forward + backward. The per-sample
work is then ~0 ms and its rate infinite: the README's quickstart printed "IMPLAUSIBLE:
14,500 TFLOP/s per device ... check the step time, batch and FLOPs" for a CPU run whose
bench table showed 0.002 TFLOP/s. The split is bounded instead: the work runs no faster
than the device can (on a CPU, a stated ceiling per thread), and the note says the
intercept was set aside, not the user's input."""

from __future__ import annotations

import json
from pathlib import Path

import gpuscale
from gpuscale.advice.explain.phrasebook import said as in_words

ROWS = Path(__file__).with_name("cpu_tiny_model_gloo.jsonl")
# No CPU thread does 10 TFLOP/s: AMX bf16 tiles, the fastest, 2,048 FLOPs a cycle at about
# 4 GHz, 8.2 TFLOP/s (fp32 on AVX-512: 0.256).
FAR_ABOVE_A_CPU_THREAD = 10.0


def _all_fixed(tmp_path: Path) -> tuple[Path, list[dict]]:
    """The checked-in CPU rows with each N = 1 run's fixed cost set to its forward +
    backward + optimizer: the whole step, as the quickstart's weak runs measured it."""
    rows = [json.loads(line) for line in ROWS.read_text().splitlines() if line.strip()]
    for row in rows:
        t = row["timing"]
        if row["config"]["accelerators"] == 1:
            whole = t["forward_ms"] + t["backward_ms"] + t["optimizer_ms"]
            t["fixed_ms"], t["fixed_ms_low"], t["fixed_ms_high"] = whole, 0.0, whole
    path = tmp_path / "results.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path, rows


def test_a_fixed_cost_as_long_as_the_step_leaves_a_rate_a_cpu_can_reach(tmp_path: Path) -> None:
    path, rows = _all_fixed(tmp_path)
    advice = gpuscale.advise(bench=path)
    said = " ".join(map(in_words, advice.calibration.said.warnings)) + " ".join(advice.explanation)
    assert "IMPLAUSIBLE" not in said, said
    threads = rows[0]["config"]["threads"]
    assert 0 < advice.calibration.model.compute.tflops < FAR_ABOVE_A_CPU_THREAD * threads
    # what the bench measured still holds: the one-device step is its timed phases
    last = [r for r in rows if r["config"]["accelerators"] == 1][-1]["timing"]
    timed = last["forward_ms"] + last["backward_ms"] + last["optimizer_ms"]
    one = advice.predictions.iloc[0]
    assert one["accelerators"] == 1
    assert abs(one["step_ms"] - timed) < 0.05 * timed
    # the fixed cost said leaves the forward + backward work to do, and why is said
    fixed = advice.calibration.model.fixed
    assert fixed.ms < last["forward_ms"] + last["backward_ms"] - 1e-3
    said = in_words(fixed.basis)
    assert "intercept left less of it" in said and "CPU thread" in said


def test_a_family_fit_with_almost_no_slope_leaves_a_rate_a_cpu_can_reach() -> None:
    """Rows without a second batch (older results): the family's fit over two models whose
    forward + backward barely grows with their work (noise) gives a rate of thousands of
    TFLOP/s, and all of the step as fixed cost. The rate is bounded the same way."""
    from gpuscale.bench.results import bench_table

    from ..builders import bench_record

    flops = 1e6  # per sample; batch 8: 8 MFLOP and 80 MFLOP of work a step
    records = [
        bench_record("mlp-a", 10**5, 1, 1000.0, flops_per_sample=flops, backward_ms=2.0),
        bench_record("mlp-b", 10**6, 1, 1000.0, flops_per_sample=10 * flops, backward_ms=2.0001),
    ]
    advice = gpuscale.advise(bench=bench_table(records), model="mlp-a")
    said = " ".join(advice.explanation)
    assert "IMPLAUSIBLE" not in said, said
    assert 0 < advice.calibration.model.compute.tflops < FAR_ABOVE_A_CPU_THREAD, (
        advice.calibration.model.compute
    )

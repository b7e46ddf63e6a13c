"""The fixed per-step cost: from two step times, entered, or a prior; strong and weak
scaling priced with it; its range in the interval; the request's step/batch pairs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

import gpuscale
from gpuscale.advice.explain.phrasebook import measured
from gpuscale.advice.model import fixed_cost
from gpuscale.advice.model.step import Compute, ModelSpec
from gpuscale.advice.request import AdviceRequest
from gpuscale.cli import app

from ..golden import Golden
from .lines import flat, lines_on

VIEW = "advice/fixed_cost"
BENCH = str(Path(__file__).with_name("cpu_tiny_model_gloo.jsonl"))
runner = CliRunner()


def test_the_line_through_two_steps_by_hand(golden: Golden) -> None:
    # 10 ms + 0.1 ms per sample: 10.8 ms at 8, 16.4 ms at 64
    assert fixed_cost.line([(8, 10.8), (64, 16.4)]) == pytest.approx((10.0, 0.1))
    # a step that does not grow with the batch is all fixed cost
    assert fixed_cost.line([(8, 5.0), (64, 4.9)]) == pytest.approx((4.95, 0.0))
    # a negative intercept (noise) puts the line through the origin
    fixed, per_sample = fixed_cost.line([(10, 1.0), (20, 3.0)])
    assert fixed == 0.0 and per_sample == pytest.approx((10 + 60) / 500)
    with pytest.raises(ValueError) as one_batch:
        fixed_cost.line([(8, 1.0), (8, 2.0)])
    golden.check(VIEW, "two steps at one batch", str(one_batch.value))


def test_resplit_keeps_the_measured_step() -> None:
    model = ModelSpec(params=1e6)
    compute = Compute(tflops=0.1)
    before = compute.micro_ms(model, 32)
    split = compute.resplit(model, 32, 0.75 * before)
    assert split.micro_ms(model, 32) == pytest.approx(before)
    assert split.fixed_ms == pytest.approx(0.75 * before)
    # half the batch saves half of the quarter that is per-sample work
    assert split.micro_ms(model, 16) == pytest.approx(0.875 * before)


def test_two_step_times_price_strong_scaling_by_hand(golden: Golden) -> None:
    """10 ms fixed + 0.1 ms per sample, batch 64 (16.4 ms): on 2 devices of a global
    batch 64 each computes 32 samples, 13.2 ms, whatever the link adds."""
    advice = gpuscale.advise(
        params=1e6,
        step_ms=(16.4, 10.8),
        batch=(64, 8),
        interconnect="nvlink4",
        max_devices=2,
    )
    one, two = (advice.predictions.set_index("accelerators").loc[n] for n in (1, 2))
    assert (one["global_batch"], two["global_batch"], two["batch_per_device"]) == (64, 64, 32)
    assert two["compute_ms"] == pytest.approx(13.2)
    assert two["fixed_excess_ms"] == pytest.approx(13.2 - 16.4 / 2)
    assert (
        advice.calibration.model.fixed.source == "entered"
        and advice.calibration.model.fixed.ms == pytest.approx(10)
    )
    # the weak alternative keeps 64 per device: its compute is the measured step
    weak = advice.alternative.set_index("accelerators").loc[2]
    assert weak["batch_per_device"] == 64 and weak["compute_ms"] == pytest.approx(16.4)
    # asked for weak scaling, the same: the samples assumed unchanged and said so
    asked = gpuscale.advise(
        params=1e6, step_ms=(16.4, 10.8), batch=(64, 8), max_devices=2, scaling="weak"
    )
    assert asked.alternative is None
    assert (asked.predictions["batch_per_device"] == 64).all()
    golden.check(VIEW, "weak scaling asked", lines_on(asked.explanation, "Weak scaling"))


def test_an_entered_fixed_cost_and_its_prior() -> None:
    entered = gpuscale.advise(params=1e6, step_ms=20, batch=64, fixed_ms=15, max_devices=2)
    assert (
        entered.calibration.model.fixed.ms == 15
        and entered.calibration.model.fixed.source == "entered"
    )
    two = entered.predictions.set_index("accelerators").loc[2]
    assert two["compute_ms"] == pytest.approx(15 + 5 / 2)
    prior = gpuscale.advise(params=1e6, step_ms=20, batch=64, max_devices=2)
    fixed = prior.calibration.model.fixed
    assert fixed.source == "assumed" and (fixed.low_ms, fixed.ms, fixed.high_ms) == (1, 4, 19.98)
    how = measured(fixed.measure)  # on the command line, as the CLI reads it
    assert "measure it" not in how and "--step-ms" in how


def test_the_prior_is_narrowed_by_the_peak() -> None:
    # 1M parameters x 6 x 64 samples = 384 MFLOP; at the H100's 67 TFLOP/s fp32 peak
    # 0.00573 ms, at 1% of it 0.573 ms: at least 19.43 ms of a 20 ms step is fixed
    fixed = fixed_cost.prior(20.0, 64, work_at_peak_ms=384e6 / 67e12 * 1e3, measure="")
    assert fixed.low_ms == pytest.approx(20 - 0.573, abs=1e-3)
    # at most the step less its work at the peak, and never above 99.9% of the step
    assert fixed.ms == fixed.low_ms and fixed.high_ms == pytest.approx(min(20 - 0.00573, 19.98))
    # a large step at a plausible rate keeps the device prior
    plain = fixed_cost.prior(200.0, 64, work_at_peak_ms=80.0, measure="")
    assert (plain.low_ms, plain.ms, plain.high_ms) == (1.0, 4.0, 20.0)
    # above the peak nothing is left for it
    assert fixed_cost.prior(1.0, 64, work_at_peak_ms=2.0, measure="").high_ms == 0.0


def test_an_unknown_fixed_cost_widens_the_interval_to_include_no_gain(golden: Golden) -> None:
    """One step time and no device: the prior's 1-20 ms of a 20 ms step allows anything
    from a near-linear speedup to none; the same numbers with the fixed cost entered give
    a narrower interval."""
    unknown = gpuscale.advise(params=1e6, step_ms=20, batch=64, max_devices=2)
    known = gpuscale.advise(params=1e6, step_ms=20, batch=64, fixed_ms=4, max_devices=2)
    u, k = (a.predictions.set_index("accelerators").loc[2] for a in (unknown, known))
    assert u["speedup"] == pytest.approx(k["speedup"])  # the prior's point is 4 ms
    assert u["speedup_low"] < 1 < u["speedup"]
    assert u["speedup_high"] - u["speedup_low"] > k["speedup_high"] - k["speedup_low"]
    assert unknown.recommended == 1 and unknown.decision.held_back.accelerators == 2
    assert (
        unknown.calibration.model.fixed.source == "assumed" and "fixed" in unknown.decision.settle
    )
    golden.check(VIEW, "the assumed fixed cost to settle", unknown.decision.settle)
    golden.check(VIEW, "measure first", lines_on(unknown.explanation, "Measure first:"))


def test_step_and_batch_pairs_are_checked() -> None:
    both = AdviceRequest(params=1e6, step_ms=[18.6, 30.5], batch=[8, 64])
    assert both.step_points == ((8, 18.6), (64, 30.5))
    assert AdviceRequest.from_json(both.to_json()) == both
    assert AdviceRequest(params=1e6, step_ms=[20.0], batch=[8]).step_points == ((8, 20.0),)
    for bad, message in (
        (dict(step_ms=(1.0, 2.0), batch=8), "need as many batch="),
        (dict(step_ms=(1.0, 2.0), batch=(8, 8)), "must differ"),
        (dict(step_ms=(1.0, 2.0), batch=(8, 16), fixed_ms=1.0), "not both"),
        (dict(step_ms=(1.0, -2.0), batch=(8, 16)), "invalid step_ms"),
    ):
        with pytest.raises(ValueError, match=message):
            AdviceRequest(params=1e6, **bad)
    with pytest.raises(ValueError, match="once with bench="):
        gpuscale.advise(bench=BENCH, batch=(8, 16))


def test_the_cli_takes_step_times_at_two_batches(golden: Golden) -> None:
    typed = ["advise", "--params", "6.9M", "--step-ms", "18.6", "--batch", "8"]
    result = runner.invoke(app, [*typed, "--step-ms", "30.5", "--batch", "64", "-f", "json"])
    assert result.exit_code == 0, result.output
    fixed = json.loads(result.stdout)["scaling"]["fixed_cost"]
    assert fixed["source"] == "entered" and fixed["ms"] == pytest.approx(18.6 - 8 * 11.9 / 56)
    odd = runner.invoke(app, [*typed, "--step-ms", "30.5"])
    assert odd.exit_code != 0 and "--batch" in odd.output and "Traceback" not in odd.output
    golden.check(VIEW, "two step times, one batch, command", flat(odd.output))


def test_a_fixed_cost_not_below_the_step_is_refused_not_capped(golden: Golden) -> None:
    """--fixed-ms 30 for an 18.6 ms step cannot be true: said, never silently taken as
    the whole step."""
    with pytest.raises(ValueError) as above:
        AdviceRequest(params=6.9e6, step_ms=18.6, batch=8, fixed_ms=30)
    assert "fixed_ms=30" in str(above.value) and "step_ms=18.6" in str(above.value)
    golden.check(VIEW, "a fixed cost above the step, Python", str(above.value))
    typed = ["advise", "--params", "6.9M", "--step-ms", "18.6", "--batch", "8"]
    result = runner.invoke(app, [*typed, "--fixed-ms", "30"])
    assert result.exit_code != 0 and "--step-ms 18.6" in result.output
    assert "Traceback" not in result.output
    golden.check(VIEW, "a fixed cost above the step, command", flat(result.output))
    assert runner.invoke(app, [*typed, "--fixed-ms", "18"]).exit_code == 0


def test_the_break_even_quotes_the_rate_of_the_whole_step(golden: Golden) -> None:
    """1M parameters, 20 ms at batch 64, 15 ms of it fixed: the step does 64 x 6M FLOPs
    in 20 ms, 0.0192 TFLOP/s, and 20 ms per 4 MB of gradients; the per-sample work's own
    rate (0.0768 TFLOP/s, unbounded as the fixed cost nears the step) is not the one the
    break-even's ms per MB are read at."""
    advice = gpuscale.advise(params=1e6, step_ms=20, batch=64, fixed_ms=15, max_devices=2)
    line = lines_on(advice.explanation, "Break-even")
    # the whole step's rate and ms per MB of gradients, not the per-sample work's
    assert "0.0192 TFLOP/s" in line and "0.0768" not in line and " 5 ms per MB" in line
    golden.check(VIEW, "the break-even at the whole step's rate", line)
    # nearly all fixed: splitting the batch saves 0.01 ms, less than the prior wait for
    # the slower of two devices costs, so no compute makes 2 devices beat 1 (and no rate
    # of the per-sample work, unbounded there, is ever quoted)
    nearly_all = gpuscale.advise(params=1e6, step_ms=20, batch=64, fixed_ms=19.99, max_devices=2)
    assert nearly_all.break_even.compute_ms_per_grad_mb is None
    assert not any(s.startswith("Break-even") for s in nearly_all.explanation)


def test_an_fp32_step_faster_than_the_fp32_peak_keeps_the_prior() -> None:
    """A user walk: ResNet-50's published A100 step (25.6M parameters, 24.6 GFLOPs a
    sample, 250 ms at batch 256) implies 25.2 TFLOP/s, above the A100's 19.5 fp32 peak
    but well under its 156 TF32 peak, which convolutions use under PyTorch's defaults.
    The fixed cost came out 0 ms (0-0) beside a sentence saying "assumed 1-20 ms", and
    nothing was flagged; the fp32 peak left no room for a fixed cost."""
    advice = gpuscale.advise(
        params=25.6e6,
        flops_per_sample=24.6e9,
        step_ms=250,
        batch=256,
        device_name="A100 SXM",
        link="nvlink3",
        max_devices=8,
    )
    fixed = advice.calibration.model.fixed
    assert (fixed.low_ms, fixed.ms, fixed.high_ms) == (
        fixed_cost.GPU_PRIOR.low,
        fixed_cost.GPU_PRIOR.point,
        fixed_cost.GPU_PRIOR.high,
    )
    assert not any("IMPLAUSIBLE" in w for w in advice.decision.warnings)

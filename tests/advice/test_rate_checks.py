"""The achieved-rate check of a model given by numbers, with two step times (the fixed
cost measured): a per-sample rate above the device's peak cannot be true and is flagged,
as a whole step's is from one step time; a low one is a small model's, not flagged
(before, nothing was checked with two step times; a user walk asked why the one-step
case was flagged and the two-step one not)."""

from __future__ import annotations

import pytest

import gpuscale
from gpuscale.advice.model.hardware import PowerKind

from ..golden import Golden
from .lines import lines_on

VIEW = "advice/rate_checks"
DEVICE = {"device_name": "RTX 4070 Ti SUPER", "link": "pcie-phb", "params": 6.9e6}


def _implausible(advice) -> list[str]:
    return [w for w in advice.decision.warnings if w.startswith("IMPLAUSIBLE")]


def test_a_per_sample_rate_above_the_peak_is_flagged_with_two_step_times(golden: Golden) -> None:
    # 56 more samples in 0.01 ms: 232 TFLOP/s of per-sample work, above the 88.2 bf16 peak
    advice = gpuscale.advise(step_ms=(0.1, 0.11), batch=(8, 64), **DEVICE)
    flagged = _implausible(advice)
    assert len(flagged) == 1 and DEVICE["device_name"] in flagged[0] and "232" in flagged[0]
    assert advice.calibration.said.implausible
    golden.check(VIEW, "a per-sample rate above the device's peak", flagged[0])
    assert advice.recommended == 1  # nothing sure of its gain on an impossible input


def test_the_published_small_models_two_step_times_are_not_flagged() -> None:
    advice = gpuscale.advise(step_ms=(18.6, 30.5), batch=(8, 64), **DEVICE)
    assert _implausible(advice) == []


def test_the_device_a_link_implies_is_charged_its_power_as_it_is_checked(golden: Golden) -> None:
    """nvlink4 implied an H100 for the rate check while the power said "unknown device"
    (a user walk): the same device for both, said to be implied."""
    advice = gpuscale.advise(params=300e6, step_ms=10, batch=16, link="nvlink4")
    power = advice.calibration.machine.power
    assert power.watts is not None and "nvlink4 implies" in power.source
    golden.check(VIEW, "the power of the device a link implies", power.source)
    assert advice.predictions["energy_kwh"].notna().all()
    # a link implying no device: the device the memory check assumes, its board power said
    # as assumed (``test_one_assumed_device``)
    unimplied = gpuscale.advise(params=300e6, step_ms=10, batch=16, link="pcie-phb")
    machine = unimplied.calibration.machine
    assert machine.power.kind is PowerKind.ASSUMED and "implies" not in machine.power.source
    assert machine.assumed_device is not None and machine.assumed_device.part is not None
    assert machine.power.watts == machine.assumed_device.part.board_power_w == 350.0


def test_a_rate_above_every_known_peak_is_flagged_without_a_device_named(golden: Golden) -> None:
    """--flops-per-sample 2e16 at 64 samples in 20 ms is 64,000,000 TFLOP/s: flagged only
    with --device-name (a user walk); no device is that fast, whichever it is. A rate some
    device reaches stays unflagged when none is named."""
    numbers = dict(params=7e6, batch=64, step_ms=20.0, link="pcie-phb")
    flagged = _implausible(gpuscale.advise(flops_per_sample=2e16, **numbers))
    assert len(flagged) == 1 and "64,000,000" in flagged[0]
    golden.check(VIEW, "a rate above every known peak", flagged[0])
    assert _implausible(gpuscale.advise(flops_per_sample=4.2e7, **numbers)) == []


def test_a_low_rate_from_assumed_flops_is_a_reading_not_an_implausible_input(
    golden: Golden,
) -> None:
    """A ResNet-50 given by its numbers (25.6M parameters, 100 ms at batch 256) without its
    FLOPs: the low rate rests on the 6 x parameters assumed (a transformer's, a lower bound
    of a CNN's work), so it is no input that cannot be true: it is one reading of the step,
    priced apart (``decision.readings``) and said with the option that settles it; the
    same FLOPs given, the rate is flagged; ResNet-50's own FLOPs, it advises (issue 60)."""
    asked = {"params": 25.6e6, "step_ms": 100.0, "batch": 256, "link": "nvlink4"}

    def implausible(**more: float) -> list[str]:
        advice = gpuscale.advise(**asked, **more)
        return [w for w in advice.decision.warnings if w.startswith("IMPLAUSIBLE")]

    assert implausible() == []
    advice = gpuscale.advise(**asked)
    (reading,) = [r for r in advice.decision.readings if r.term == "flops_per_sample"]
    assert reading.value == pytest.approx(6 * asked["params"]) and reading.accelerators == 1
    said = lines_on(advice.explanation, "FLOPs per sample not given")
    assert "flops_per_sample=" in said and "flop_counter" in said  # as Python names it
    golden.check(VIEW, "a low rate read from assumed FLOPs", said)
    # the same FLOPs given, not assumed: the rate is as low, but no assumption is blamed
    given = implausible(flops_per_sample=6 * asked["params"])
    assert len(given) == 1 and "6 x parameters" not in given[0]
    assert implausible(flops_per_sample=12.3e9) == []  # ResNet-50's FLOPs: plausible


def test_a_rate_far_under_the_floor_prints_a_share_that_is_not_zero(golden: Golden) -> None:
    """1B parameters, 6 GFLOPs a sample, one sample in 90 s on an H100: 0.0000667 TFLOP/s,
    0.0001% of its peak, was printed "0.00%" (fixed to the decimals that tell it from the
    1% floor); it prints to its own significant digits."""
    from gpuscale.advice.types import Finding, FindingKind

    advice = gpuscale.advise(
        params=1e9, step_ms=90_000.0, batch=1, flops_per_sample=6e9, device_name="H100"
    )
    (found,) = [
        w
        for w in advice.decided.warnings
        if isinstance(w, Finding) and w.kind == FindingKind.RATE_UNDER_FLOOR
    ]
    share = dict(found.values)["share_pct"]
    assert 0 < share < 0.001
    (line,) = _implausible(advice)
    assert " 0.00%" not in line
    golden.check(VIEW, "a rate far under the floor", line)


def test_a_share_of_the_peak_read_from_assumed_flops_is_no_exponent(golden: Golden) -> None:
    """The same step without its FLOPs: the reading "this 90 s step runs at 1.3e-05% of the
    H100 SXM5 80GB's TF32 peak" printed an exponent; it prints the share's digits."""
    from gpuscale.advice.types import Finding, FindingKind

    advice = gpuscale.advise(params=1e9, step_ms=90_000.0, batch=1, device_name="H100")
    (found,) = [
        s
        for s in advice.calibration.said.sources
        if isinstance(s, Finding) and s.kind == FindingKind.FLOPS_TWO_READINGS
    ]
    assert 0 < dict(found.values)["share_pct"] < 0.001
    said = lines_on(advice.explanation, "FLOPs per sample not given")
    assert "e-0" not in said
    golden.check(VIEW, "a share far under the peak, read from assumed FLOPs", said)

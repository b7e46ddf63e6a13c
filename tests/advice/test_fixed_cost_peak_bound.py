"""From one step time, the fixed cost is bounded by the device's peak where gpuscale knows
one, and the advice says so: the device, its peak, the FLOPs per sample the bound rests
on, the bound, and what would replace it. Where no peak bounded it (a device named
without one, or none named) the advice says the fixed cost is the prior's. A walk:
``--device-name A10`` (or L4, V100) took 37.8 ms of a 40 ms step as fixed cost and
``A10G`` or no device the prior's ~4 ms, and the advices differed without a word why.
The bound rests on the FLOPs per sample: given, it bounds the fixed cost; not given, 6 x
parameters is a lower bound of the work and its bound is one reading of the step, never a
fixed cost (issue 60: ResNet-50 by its parameters was "Use 1 device" on 8 A100s)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

import gpuscale
from gpuscale.advice.types import FindingKind
from gpuscale.cli import app

from ..builders import sweep_rows
from ..golden import Golden

VIEW = "advice/fixed_cost_peak_bound"
UNBOUND = FindingKind.FIXED_UNBOUNDED

# the walk's numbers: a 7M-parameter model, 40 ms per step of 32 samples
PARAMS, STEP_MS, BATCH = 7e6, 40.0, 32
FLOPS = 6 * PARAMS  # what the advice assumes without --flops-per-sample
# dense peaks from NVIDIA's datasheets (TFLOP/s), by --precision: mixed precision's matmuls
# run at the bf16/fp16 tensor cores' (the default), fp32's at most at TF32's (V100: FP32);
# the V100 on the walk's PCIe link is its PCIe card
PEAKS = {
    "mixed": ("bf16", {"A10": 125.0, "L4": 121.0, "V100": 112.0}),
    "fp32": ("TF32", {"A10": 62.5, "L4": 60.0, "V100": 14.0}),
}
TF32 = PEAKS["fp32"][1]
BOUNDED = [(d, p) for p in PEAKS for d in sorted(PEAKS[p][1])]
WALK = ["--params", "7M", "--step-ms", "40", "--batch", "32", "--interconnect", "pcie-phb"]


def _advise(**named):
    return gpuscale.advise(
        params=PARAMS, step_ms=STEP_MS, batch=BATCH, link="pcie-phb", max_devices=4, **named
    )


def _said(advice, start: str) -> list[str]:
    return [s for s in advice.explanation if s.startswith(start)]


def _ms(sentence: str, before: str) -> float:
    """The ms figure just before ``before`` in ``sentence`` (``0.0215 ms at the``)."""
    found = re.search(r"([\d.,]+) (ms|us|s) " + re.escape(before), sentence)
    assert found, (before, sentence)
    scale = {"us": 1e-3, "ms": 1.0, "s": 1e3}[found.group(2)]
    return float(found.group(1).replace(",", "")) * scale


@pytest.mark.parametrize(("device", "precision"), BOUNDED)
def test_the_peak_that_bounds_the_fixed_cost_is_said_with_its_numbers(
    device: str, precision: str, golden: Golden
) -> None:
    advice = _advise(device_name=device, flops_per_sample=FLOPS, precision=precision)
    said = _said(advice, "Fixed cost bounded by the device's peak")
    assert len(said) == 1, advice.explanation
    sentence = said[0]
    # the work of the step at the datasheet's peak for the precision, and at 1% of it
    label, peaks = PEAKS[precision]
    at_peak_ms = BATCH * FLOPS / (peaks[device] * 1e12) * 1e3
    assert f"({peaks[device]:g} TFLOP/s" in sentence
    assert device in sentence and "given" in sentence
    golden.check(VIEW, f"bounded by the {device}'s {label} peak", sentence)
    assert _ms(sentence, f"at the {label} peak") == pytest.approx(at_peak_ms, rel=5e-3)
    assert _ms(sentence, "at 1% of it") == pytest.approx(100 * at_peak_ms, rel=5e-3)
    floor = _ms(sentence, "of the step is fixed cost")
    assert floor == pytest.approx(STEP_MS - 100 * at_peak_ms, rel=5e-3)
    # the fixed cost taken is the one said, and it is the one the advice prices
    taken = _ms(sentence, "(without a peak")
    assert taken == pytest.approx(advice.calibration.model.fixed.ms, rel=5e-3)
    assert advice.calibration.model.fixed.ms >= floor * (1 - 5e-3)
    # what would replace the bound
    for remedy in ("fixed_ms=", "gpuscale bench"):
        assert remedy in sentence
    assert not _said(advice, "Fixed cost not")


@pytest.mark.parametrize("named", [{"device_name": "A10G"}, {}], ids=["A10G", "none"])
def test_no_peak_bound_is_said_and_the_prior_stands(named: dict, golden: Golden) -> None:
    advice = _advise(**named)
    said = _said(advice, "Fixed cost not bounded by a peak")
    assert len(said) == 1, advice.explanation
    sentence = said[0]
    assert "no peak bound" in sentence and "fixed_ms=" in sentence
    golden.check(VIEW, f"not bounded, {named.get('device_name') or 'no device'} named", sentence)
    assert (named.get("device_name") or "device_name=") in sentence
    fixed = advice.calibration.model.fixed
    assert _ms(sentence, "(") == pytest.approx(fixed.ms, rel=5e-3)
    assert fixed.source == "assumed" and fixed.low_ms < fixed.ms < fixed.high_ms
    # the finding carries how to measure it as the fixed cost's record, its words explain's
    (found,) = [f for f in advice.calibration.said.sources if getattr(f, "kind", "") == UNBOUND]
    assert found["measure"] == fixed.measure and fixed.measure.bench.nproc == (1,)
    assert not _said(advice, "Fixed cost bounded")
    # the two devices differ by the bound, now said on both sides
    bounded = _advise(device_name="A10", flops_per_sample=FLOPS).calibration.model.fixed.ms
    assert bounded > 5 * fixed.ms


@pytest.mark.parametrize("device", sorted(TF32))
def test_without_flops_the_bound_is_a_reading_never_a_fixed_cost(device: str) -> None:
    advice = _advise(device_name=device)
    fixed = advice.calibration.model.fixed
    assert fixed.source == "assumed" and fixed.ms == pytest.approx(4.0)  # the prior's
    assert not _said(advice, "Fixed cost bounded")
    # the transformer's reading (6 x parameters): the bound's fixed cost, priced apart
    (reading,) = [r for r in advice.decision.readings if r.term == "flops_per_sample"]
    assert reading.value == pytest.approx(FLOPS) and reading.unit == "FLOPs per sample"
    bounded = _advise(device_name=device, flops_per_sample=FLOPS)
    assert bounded.calibration.model.fixed.ms > 5 * fixed.ms
    assert reading.accelerators == bounded.decision.chosen.accelerators
    # the count is withheld exactly where an end of an assumed range moves it
    moved = [
        r.term
        for r in advice.decision.readings
        if r.accelerators != advice.decision.chosen.accelerators
    ]
    assert advice.decision.withheld_by == (moved[0] if moved else None)
    assert advice.decision.count == (None if moved else advice.decision.chosen.accelerators)


def test_flops_given_are_named_in_the_bound(golden: Golden) -> None:
    advice = _advise(device_name="A10", flops_per_sample=FLOPS)
    (sentence,) = _said(advice, "Fixed cost bounded by the device's peak")
    assert "given" in sentence.split(",")[0] and "assumed" not in sentence.split(",")[0]
    golden.check(VIEW, "bounded by the A10's peak", sentence)


def test_a_measured_or_entered_fixed_cost_says_no_bound() -> None:
    advice = _advise(device_name="A10", fixed_ms=5.0)
    assert not [s for s in advice.explanation if s.startswith("Fixed cost ")]


def test_the_cli_says_it() -> None:
    for device, start in (("A10", "bounded by the device's peak"), ("A10G", "not bounded")):
        flops = ["--flops-per-sample", "42M"] if device == "A10" else []
        result = CliRunner().invoke(
            app, ["advise", "--explain", *WALK, *flops, "--device-name", device]
        )
        assert result.exit_code == 0, result.output
        assert f"Fixed cost {start}" in result.output


def _gpu_sweep(tmp_path: Path) -> Path:
    """An all-reduce sweep of two GPUs (the ring model's, 0.86 GB/s and 250 us a hop)."""
    rows = [
        {"kind": "sweep", "sweep_id": "s1", "device": "cuda", "ranks": 2, "nodes": 1},
        *sweep_rows(0.86, 250.0, 2),
    ]
    path = tmp_path / "coll.jsonl"
    header = {"schema": "gpuscale.collectives/2", "sweep_id": "s1"}
    path.write_text("".join(json.dumps(header | r) + "\n" for r in rows))
    return path


@pytest.mark.parametrize("link", ["measured", "custom", "preset"])
def test_the_link_that_implies_no_device_is_named_once(
    link: str, tmp_path: Path, golden: Golden
) -> None:
    """A measured link's name is already a phrase (``the link measured in c.jsonl (2
    ranks)``): the sentence read ``the link the link measured in``; a custom link's read
    ``the link custom``. The finding records whether the link was measured; its words name
    the link once, as measured, custom or a preset."""
    given = {
        "measured": {"collectives": str(_gpu_sweep(tmp_path))},
        "custom": {"busbw_gbs": 10.0, "latency_us": 20.0},
        "preset": {"link": "pcie-phb"},
    }[link]
    advice = gpuscale.advise(params=PARAMS, step_ms=STEP_MS, batch=BATCH, max_devices=4, **given)
    (found,) = [f for f in advice.calibration.said.sources if getattr(f, "kind", "") == UNBOUND]
    assert found["link_measured"] is (link == "measured")
    assert found["link"] == advice.calibration.machine.network.intra.name
    (sentence,) = _said(advice, "Fixed cost not")
    assert sentence.count("the link") == (link != "custom")
    golden.check(
        VIEW, f"not bounded, no device named, {link} link", sentence, paths={str(tmp_path): "<tmp>"}
    )

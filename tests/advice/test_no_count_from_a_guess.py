"""No confident count from a guess (issue 60): where the count chosen moves as an assumed
term crosses its own range (the FLOPs per sample not given, a fixed cost not measured, a
link assumed), the JSON decision's count is null with the term that moved it; a lower
bound of the FLOPs (6 x parameters) never turns into a fixed cost.

The issue's case: ResNet-50 measured on one A100 at the published 938 images/s (273 ms at
batch 256) and typed with ``--params 25.6M`` alone was "Use 1 device", 0.96x at 8."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

import gpuscale
from gpuscale.advice.types import Finding, FindingKind, Source, TermId
from gpuscale.cli import app

HERE = Path(__file__).parent
R50 = [
    *("--params", "25.6M", "--step-ms", "273", "--batch", "256"),
    *("--device-name", "A100 80GB", "--interconnect", "nvlink3", "--max-devices", "8"),
]


def _doc(*args: str) -> dict:
    result = CliRunner().invoke(app, ["advise", *args, "-f", "json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def _at(doc: dict, n: int) -> dict:
    return next(p for p in doc["predictions"] if p["accelerators"] == n)


def test_resnet50_by_parameters_withholds_the_count_or_scales() -> None:
    doc = _doc(*R50)
    decision = doc["decision"]
    assert decision["accelerators"] is None or _at(doc, 8)["speedup"] >= 4
    # here: withheld by the FLOPs, the table still shown and scaling
    assert decision["accelerators"] is None and decision["withheld_by"] == "flops_per_sample"
    assert doc["recommendation"]["accelerators"] is None
    assert _at(doc, 8)["speedup"] >= 4 and decision["chosen"]["accelerators"] == 8
    (flops,) = [r for r in decision["readings"] if r["term"] == "flops_per_sample"]
    assert flops["value"] == pytest.approx(6 * 25.6e6) and flops["accelerators"] == 1
    # the fixed cost is the prior's, never the step less its work at 1% of the peak
    assert doc["scaling"]["fixed_cost"]["ms"] == pytest.approx(4.0)
    assert not [w for w in decision["warnings"] if w.startswith("IMPLAUSIBLE")]


def test_resnet50_with_its_flops_stays_near_six() -> None:
    doc = _doc(*R50, "--flops-per-sample", "24.6G")
    # about 6x, never above the 7.73x NVIDIA publishes for it on a DGX A100 (TF32,
    # benchmarks/published/nvidia_dle_pytorch.csv), nor near the 1x of the 6 x parameters
    assert 5.7 <= _at(doc, 8)["speedup"] <= 7.73
    assert not [r for r in doc["decision"]["readings"] if r["term"] == "flops_per_sample"]


def test_resnet152_by_parameters_is_no_longer_one_device_for_sure() -> None:
    doc = _doc(
        *("--params", "60M", "--step-ms", "126", "--batch", "64"),
        *("--device-name", "RTX 4090", "--interconnect", "pcie-phb", "--max-devices", "2"),
    )
    decision = doc["decision"]
    assert decision["accelerators"] is None or decision["accelerators"] == 2
    assert _at(doc, 2)["speedup"] > 1.3  # the study measured 1.60x
    assert not [w for w in decision["warnings"] if w.startswith("IMPLAUSIBLE")]


def test_a_plausible_transformer_has_no_flops_reading() -> None:
    """At 6 x parameters a 1B-parameter step of 300 ms at batch 512 runs at 10 TFLOP/s, a
    rate an H100 reaches: the bound leaves the fixed cost the prior's, no reading apart."""
    advice = gpuscale.advise(params=1e9, step_ms=300, batch=512, link="nvlink4")
    assert not [r for r in advice.decision.readings if r.term == "flops_per_sample"]


def test_an_assumed_link_is_read_at_both_ends() -> None:
    advice = gpuscale.advise(params=125e6, step_ms=300, batch=32, fixed_ms=5.0)
    links = [r for r in advice.decision.readings if r.term == "link"]
    assert [r.end for r in links] == ["low", "high"]
    assert links[0].value < links[1].value
    moved = [
        r.term
        for r in advice.decision.readings
        if r.accelerators != advice.decision.chosen.accelerators
    ]
    assert advice.decision.withheld_by == (moved[0] if moved else None)
    given = gpuscale.advise(params=125e6, step_ms=300, batch=32, fixed_ms=5.0, link="pcie-phb")
    assert given.decision.readings == ()


SEVEN_B = {"params": 7e9, "step_ms": 900, "batch": 4, "global_batch": 64, "device_name": "H100"}


def test_the_flops_not_given_are_an_assumption_whose_range_holds_its_reading() -> None:
    """A 7B model by one step time on 4 nodes of H100s is withheld by the FLOPs per sample:
    they are an assumption like the others, their low end the reading at 6 x parameters,
    the rest the prior's fixed cost's work at 10-50% of the peak (the two readings' finding)."""
    advice = gpuscale.advise(**SEVEN_B, nodes=4)
    d = advice.decision
    assert d.withheld_by == "flops_per_sample"
    (flops,) = [a for a in advice.assumptions if a.term == TermId.FLOPS]
    q = flops.quantity
    assert q is not None and q.unit == "FLOPs per sample" and flops.source == Source.ASSUMED
    (reading,) = [r for r in d.readings if r.term == "flops_per_sample"]
    assert (reading.end, reading.value) == ("low", q.low) and q.low == pytest.approx(6 * 7e9)
    (two,) = [
        s
        for s in advice.calibration.said.sources
        if isinstance(s, Finding) and s.kind == FindingKind.FLOPS_TWO_READINGS
    ]
    assert q.high == two["flops_high"] and two["flops_low"] < q.value < q.high
    assert flops.measure.before == Finding.of(FindingKind.MEASURE_FLOPS)
    doc = _doc(*SEVEN_ARGS, "--nodes", "4")
    (said,) = [a for a in doc["assumptions"] if a["kind"] == "flops_per_sample"]
    assert (said["low"], said["high"]) == (q.low, q.high) and said["unit"] == q.unit


@pytest.mark.parametrize(
    "given",
    [{"flops_per_sample": 90e12}, {"preset": "llama2-7b", "nodes": 4, "checkpointing": "full"}],
)
def test_flops_given_or_counted_are_no_assumption(given: dict) -> None:
    advice = gpuscale.advise(**SEVEN_B, **given)
    assert not [a for a in advice.assumptions if a.term == TermId.FLOPS]
    assert not [r for r in advice.decision.readings if r.term == "flops_per_sample"]


SEVEN_ARGS = [
    *("--params", "7e9", "--step-ms", "900", "--batch", "4", "--global-batch", "64"),
    *("--device-name", "H100"),
]


@pytest.mark.parametrize("device", [{"device_name": "H100"}, {}])
def test_a_link_reading_is_its_assumption_s_low_or_high_end(device: dict) -> None:
    """An assumed link's readings are its assumption's range (an H100's NVLink: 10-370.8
    GB/s, not a preset inside it); with no device, pcie-phb's 10-24 GB/s."""
    advice = gpuscale.advise(params=7e9, step_ms=900, batch=4, global_batch=64, **device)
    (link,) = [a for a in advice.assumptions if a.term == TermId.LINK]
    q = link.quantity
    assert q is not None and q.low is not None and q.high is not None
    readings = {r.end: r.value for r in advice.decision.readings if r.term == "link"}
    assert readings == {"low": q.low, "high": q.high}
    assert q.low <= q.value <= q.high


def test_the_bench_host_s_link_assumed_is_searched_over_its_range() -> None:
    """One H100 benched: its NVLink is assumed, and the readings are the assumption's ends;
    CPU processes assume a link's figures with no range, and no link is read."""
    advice = gpuscale.advise(bench=str(HERE / "h100_resnet50_bf16.jsonl"))
    (link,) = [a for a in advice.assumptions if a.term == TermId.LINK]
    q = link.quantity
    readings = {r.end: r.value for r in advice.decision.readings if r.term == "link"}
    assert q is not None and readings == {"low": q.low, "high": q.high}
    cpu = gpuscale.advise(bench=str(HERE / "cpu_tiny_model_gloo.jsonl"))
    (processes,) = [a for a in cpu.assumptions if a.term == TermId.LINK]
    assert processes.quantity is not None and processes.quantity.low is None
    assert not [r for r in cpu.decision.readings if r.term == "link"]

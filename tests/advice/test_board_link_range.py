"""The range of a link assumed from the device named: a board (SXM, OAM, superchip) sits on
its baseboard's fabric, one preset of the catalogue, so its link has no range and no count is
withheld for it; a PCIe card (or a name that may mean one: ``H100``) keeps the range from
pcie-sys (10 GB/s at 25 us) to PCIe 4.0 through a switch or the link assumed, if faster.
The request: a 340M-parameter model, 60 ms steps of 48 samples, weak scaling."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

import gpuscale
from gpuscale.advice.records import Assumption
from gpuscale.advice.types import Source, TermId
from gpuscale.cli import app
from gpuscale.hardware.links import PRESETS

ASKED = {"params": 340e6, "step_ms": 60, "batch": 48, "fixed_ms": 4, "scaling": "weak"}
ARGS = [
    *("--params", "340M", "--step-ms", "60", "--batch", "48", "--flops-per-sample", "1T"),
    *("--fixed-ms", "4", "--scaling", "weak"),
]


def _advice(device: str) -> gpuscale.Advice:
    return gpuscale.advise(**ASKED, flops_per_sample=1e12, device_name=device)


def _link(advice: gpuscale.Advice) -> Assumption:  # the link's assumption
    (link,) = [a for a in advice.assumptions if a.term == TermId.LINK]
    return link


@pytest.mark.parametrize(
    ("device", "preset"),
    [
        ("H100 SXM", "nvlink4"),
        ("A100 SXM", "nvlink3"),  # two parts (40, 80 GB), both SXM4 boards
        ("GH200", "nvlink4"),
        ("B200", "nvlink5"),
        ("MI300X", "xgmi-mi300x"),
    ],
)
def test_a_board_named_takes_its_fabric_with_no_range(device: str, preset: str) -> None:
    advice = _advice(device)
    assert advice.calibration.machine.network.intra.name == preset
    link = _link(advice)  # still assumed (no link given): its value the fabric's
    assert link.source == Source.ASSUMED and link.quantity.value == PRESETS[preset].busbw_at(8)
    assert (link.quantity.low, link.quantity.high) == (None, None)
    assert not [r for r in advice.decision.readings if r.term == "link"]
    assert advice.decision.withheld_by != "link"


def test_an_sxm_board_is_advised_not_withheld_for_a_pcie_end() -> None:
    """At pcie-sys the H100 SXM's 8 devices read as 1: no such host holds an SXM board."""
    result = CliRunner().invoke(app, ["advise", *ARGS, "--device-name", "H100 SXM", "-f", "json"])
    assert result.exit_code == 0, result.output
    doc = json.loads(result.output)
    decision = doc["decision"]
    assert decision["withheld_by"] is None and decision["readings"] == []
    assert decision["accelerators"] == 8
    (link,) = [a for a in doc["assumptions"] if a["kind"] == "link"]
    assert (link["value"], link["low"], link["high"]) == (370.8, None, None)


@pytest.mark.parametrize(
    ("device", "preset", "high"),
    [
        ("H100 PCIe", "pcie-phb", "pcie4-x16"),
        ("A100 PCIe", "pcie-phb", "pcie4-x16"),
        ("L40S", "pcie-phb", "pcie4-x16"),
        ("H100", "nvlink4", "nvlink4"),  # may be a PCIe card: read as the SXM, range kept
    ],
)
def test_a_pcie_card_keeps_the_range(device: str, preset: str, high: str) -> None:
    advice = _advice(device)
    assert advice.calibration.machine.network.intra.name == preset
    link = _link(advice)
    low_gbs, high_gbs = PRESETS["pcie-sys"].busbw_gbs, PRESETS[high].busbw_gbs
    assert (link.quantity.low, link.quantity.high) == (low_gbs, high_gbs)
    ends = {(r.end, r.preset) for r in advice.decision.readings if r.term == "link"}
    assert ends == {("low", "pcie-sys"), ("high", high)}

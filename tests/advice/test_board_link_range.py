"""The range of a link assumed from the device named: a board (SXM, OAM, superchip) sits on
its baseboard's fabric, one preset of the catalogue, so its link has no range and no count is
withheld for it; a PCIe card's range runs from pcie-sys (10 GB/s at 25 us) to the best link
its catalogue row allows (P2P through a switch at its PCIe generation; through host memory,
pcie-phb, without P2P), or to the link assumed where faster (``H100``, which may mean an SXM
board: its NVLink); no device named, to PCIe 4.0 through a switch.
The request: a 340M-parameter model, 60 ms steps of 48 samples, weak scaling."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

import gpuscale
from gpuscale.advice.records import Assumption
from gpuscale.advice.types import Finding, Source, TermId
from gpuscale.cli import app
from gpuscale.hardware.links import PRESETS

ASKED = {"params": 340e6, "step_ms": 60, "batch": 48, "fixed_ms": 4, "scaling": "weak"}
ARGS = [
    *("--params", "340M", "--step-ms", "60", "--batch", "48", "--flops-per-sample", "1T"),
    *("--fixed-ms", "4", "--scaling", "weak"),
]


def _advice(device: str | None) -> gpuscale.Advice:
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
        ("H100 PCIe", "pcie-phb", "pcie5-x16"),  # PCIe Gen5
        ("A100 PCIe", "pcie-phb", "pcie4-x16"),  # Gen4: today's
        ("L40S", "pcie-phb", "pcie4-x16"),
        ("T4", "pcie-phb", "pcie3-x16"),  # Gen3
        ("RTX 4090", "pcie-phb", "pcie-phb"),  # no P2P: through host memory at best
        ("RTX 3090", "pcie-phb", "pcie-phb"),  # P2P only over its bridge (a link given)
        ("H100", "nvlink4", "nvlink4"),  # may be a PCIe card: read as the SXM, range kept
        (None, "pcie-phb", "pcie4-x16"),  # none named: today's
    ],
)
def test_a_pcie_cards_range_follows_its_catalogue_row(
    device: str | None, preset: str, high: str
) -> None:
    advice = _advice(device)
    assert advice.calibration.machine.network.intra.name == preset
    link = _link(advice)
    low_gbs, high_gbs = PRESETS["pcie-sys"].busbw_gbs, PRESETS[high].busbw_gbs
    assert (link.quantity.low, link.quantity.high) == (low_gbs, high_gbs)
    assert isinstance(link.value, Finding)
    assert (link.value["low_preset"], link.value["high_preset"]) == ("pcie-sys", high)
    ends = {(r.end, r.preset) for r in advice.decision.readings if r.term == "link"}
    assert ends == {("low", "pcie-sys"), ("high", high)}


# 100M parameters, 200 ms steps of 32 samples: at pcie4-x16 (24 GB/s) 4 devices, at 10 GB/s 2
WITHHELD = [
    *("--params", "100M", "--step-ms", "200", "--batch", "32", "--flops-per-sample", "600M"),
    *("--fixed-ms", "4"),
]


@pytest.mark.parametrize(
    ("named", "high", "high_gbs", "accelerators", "withheld"),
    [
        # no P2P: its best link through host memory reads as the link assumed, not withheld
        (["--device-name", "RTX 4090"], "pcie-phb", 10.0, 2, None),
        (["--device-name", "H100 PCIe"], "pcie5-x16", 48.0, None, "link"),  # Gen5
        (["--device-name", "A100 PCIe"], "pcie4-x16", 24.0, None, "link"),  # Gen4: today's
        ([], "pcie4-x16", 24.0, None, "link"),  # none named: today's
    ],
)
def test_the_json_range_and_its_ends(
    named: list[str], high: str, high_gbs: float, accelerators: int | None, withheld: str | None
) -> None:
    result = CliRunner().invoke(app, ["advise", *WITHHELD, *named, "-f", "json"])
    assert result.exit_code == 0, result.output
    doc = json.loads(result.output)
    (link,) = [a for a in doc["assumptions"] if a["kind"] == "link"]
    assert (link["value"], link["low"], link["high"]) == (10.0, 10.0, high_gbs)
    decision = doc["decision"]
    ends = [(r["end"], r["preset"], r["value"]) for r in decision["readings"]]
    assert ends == [("low", "pcie-sys", 10.0), ("high", high, high_gbs)]
    assert (decision["withheld_by"], decision["accelerators"]) == (withheld, accelerators)


def test_every_catalogue_part_has_its_usual_link_as_an_end() -> None:
    # a named device's high end is looked up among the device links: none may be missing
    from gpuscale.advice.calibrate.link import DEVICE_LINKS
    from gpuscale.hardware import catalogue, links

    usual = {links.usual_preset(part) for part in catalogue.devices()}
    assert usual and usual <= DEVICE_LINKS.keys()
    assert {"pcie5-x16", "pcie-phb", "nvlink4"} <= usual

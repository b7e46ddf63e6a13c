"""An MI300X (or MI250X) node: its GPUs are fully connected by AMD's Infinity Fabric (xGMI),
so an advice naming the part with no link given takes its xGMI preset (``xgmi-mi300x``,
319 GB/s all-reduce bus bandwidth) as an H100 takes NVLink 4, never ``pcie-phb`` (10 GB/s);
the link class the published fits are read at is NVLink's, said as assumed (no published
AMD row was judged) in --explain and -f json. The user's walk:
``advise --params 8e9 --step-ms 900 --batch 4 --device-name MI300X``."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

import gpuscale
from gpuscale.advice.api import Advice
from gpuscale.advice.explain.phrasebook import said as words
from gpuscale.advice.model.network import count_class, link_class
from gpuscale.advice.records import Assumption
from gpuscale.advice.types import Source, TermId
from gpuscale.cli import app
from gpuscale.hardware.links import PRESETS

from ..golden import Golden

VIEW = "advice/xgmi"
WALK = {"params": 8e9, "step_ms": 900, "batch": 4, "scaling": "weak"}
ARGS = ["advise", "--params", "8e9", "--step-ms", "900", "--batch", "4", "--device-name"]


def _link_assumed(advice: Advice) -> Assumption:
    (found,) = [a for a in advice.calibration.said.assumptions if a.term == TermId.LINK]
    return found


@pytest.mark.parametrize(
    ("device", "preset", "busbw_gbs"),
    [("MI300X", "xgmi-mi300x", 318.98), ("MI250X", "xgmi-mi250x", 72.0)],
)
def test_an_amd_board_takes_its_infinity_fabric(device: str, preset: str, busbw_gbs: float) -> None:
    advice = gpuscale.advise(device_name=device, **WALK)
    intra = advice.calibration.machine.network.intra
    assert (intra.name, intra.busbw_gbs, intra.latency_us) == (preset, busbw_gbs, 10.0)
    link = _link_assumed(advice)
    assert link.source == Source.ASSUMED and link.basis["name"] == preset
    assert (link.quantity.value, link.quantity.unit) == (busbw_gbs, "GB/s bus bandwidth")
    # an OAM module sits on its baseboard's fabric: no range searched again (no PCIe end)
    assert (link.quantity.low, link.quantity.high) == (None, None)
    assert advice.calibration.machine.link_assumed  # none given: the board's, as assumed


def test_the_mi300x_speedup_at_8_is_above_pcie_phb() -> None:
    """The same walk on the MI300X's own fabric against ``pcie-phb`` given: at 8 devices
    (weak scaling: each keeps its batch of 4) the speedup is far higher, and above 1 even at
    the low end of its interval where pcie-phb's is about 1."""
    fabric = gpuscale.advise(device_name="MI300X", **WALK).table.set_index("accelerators")
    phb = gpuscale.advise(device_name="MI300X", link="pcie-phb", **WALK).table
    phb = phb.set_index("accelerators")
    assert fabric.loc[8, "speedup"] > 4 * phb.loc[8, "speedup"]
    assert fabric.loc[8, "speedup_low"] > phb.loc[8, "speedup_high"]
    assert fabric.loc[8, "exposed_comm_ms"] < phb.loc[8, "exposed_comm_ms"] / 10


def test_the_link_class_of_an_xgmi_mesh_is_nvlink_and_said_assumed() -> None:
    advice = gpuscale.advise(device_name="MI300X", **WALK)
    network = advice.calibration.machine.network
    assert link_class("xgmi-mi300x", nodes=False) == "nvlink"
    assert {count_class(network, n) for n in (2, 4, 8)} == {"nvlink"}
    (said,) = [a for a in advice.assumptions if a.term == TermId.LINK_CLASS]
    assert said.source == Source.ASSUMED
    assert words(said.value).startswith("nvlink for xgmi-mi300x")


def test_a_link_whose_name_says_its_class_assumes_none() -> None:
    """NVLink, PCIe and a custom link: no class is assumed, none said."""
    for link in ("nvlink4", "pcie4-x16", "pcie-phb"):
        assert PRESETS[link].assumed_class is None
        advice = gpuscale.advise(device_name="H100", link=link, **WALK)
        assert TermId.LINK_CLASS not in {a.term for a in advice.assumptions}
    custom = gpuscale.advise(device_name="MI300X", busbw_gbs=300.0, **WALK)
    assert TermId.LINK_CLASS not in {a.term for a in custom.assumptions}


def test_on_nodes_given_no_count_reads_the_assumed_class_and_none_is_said() -> None:
    """With --nodes every count takes the multi-node class's terms (``terms_class``): the
    xGMI mesh's class, read by none, is no assumption; a search spilling past one node
    (``max_devices``) still reads it inside the node, and says it."""
    from gpuscale.advice.model.network import terms_class

    on_nodes = gpuscale.advise(device_name="MI300X", nodes=2, **WALK)
    network = on_nodes.calibration.machine.network
    assert {terms_class(network, n) for n in (1, 2, 8, 16)} == {"multinode"}
    assert on_nodes.calibration.machine.one_device_class == "multinode"  # read as built
    assert TermId.LINK_CLASS not in {a.term for a in on_nodes.assumptions}
    spilling = gpuscale.advise(device_name="MI300X", max_devices=16, **WALK)
    network = spilling.calibration.machine.network
    assert terms_class(network, 8) == "nvlink" and terms_class(network, 16) == "multinode"
    assert spilling.calibration.machine.one_device_class == "nvlink"
    assert TermId.LINK_CLASS in {a.term for a in spilling.assumptions}


def test_the_json_and_explain_say_the_link_and_its_class(golden: Golden) -> None:
    runner = CliRunner()
    data = json.loads(runner.invoke(app, [*ARGS, "MI300X", "-f", "json"]).output)
    (said,) = [a for a in data["assumptions"] if a["kind"] == "link_class"]
    # the term the in-node classes differ by, a number with its unit: the contention (the
    # ranks' spread is every class's), NVLink's 0 within the classes' 0-0.11
    assert (said["term"], said["source"], said["value"]) == ("Link class", "assumed", 0.0)
    assert "communication" in said["unit"] and (said["low"], said["high"]) == (0.0, 0.11)
    assert "no published row" in said["basis"]
    explained = runner.invoke(app, [*ARGS, "MI300X", "--explain"]).output
    lines = [line for line in explained.splitlines() if line.startswith("- Link")]
    assert len(lines) == 2
    for line in lines:
        case = line.split(":")[0].removeprefix("- ")
        golden.check(VIEW, f"MI300X: {case}", line)

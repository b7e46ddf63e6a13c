"""A device joined by an inter-chip fabric of its own (a TPU's ICI, a Gaudi's on-chip RoCE)
that no link preset models is no PCIe card: with no link given, detected or measured, the
link is unknown, so no count above 1 device is advised on the PCIe link that prices the
table (``withheld_by`` ``fabric``, its reading at 1 device), and no PCIe range is searched;
given a link's bus bandwidth, the advice is as for any link given."""

from __future__ import annotations

import pytest

import gpuscale
from gpuscale.advice.model.hardware import device_record
from gpuscale.advice.types import FindingKind, TermId
from gpuscale.hardware.accelerators import own_fabric

SEVEN_B = {"params": 7e9, "flops_per_sample": 42e9, "step_ms": 800, "batch": 8, "max_devices": 8}


@pytest.mark.parametrize(
    ("name", "fabric"),
    [
        ("TPU-v2", "ICI"),
        ("TPU v4", "ICI"),
        ("TPU-v5p", "ICI"),
        ("Trillium", "ICI"),
        ("TPU-Ironwood", "ICI"),
        ("Gaudi", "RoCE"),
        ("Gaudi2", "RoCE"),
        ("Gaudi 3", "RoCE"),
        ("H100", None),
        ("MI300X", None),
        ("RTX 4090", None),
    ],
)
def test_the_products_of_their_own_fabric_are_recorded(name: str, fabric: str | None) -> None:
    assert own_fabric(name) == fabric
    assert device_record(name).own_fabric == fabric  # a catalogue part has a preset's


@pytest.mark.parametrize(("device", "fabric"), [("TPU-v5p", "ICI"), ("Gaudi2", "RoCE")])
def test_no_count_above_one_rests_on_an_unknown_fabric(device: str, fabric: str) -> None:
    advice = gpuscale.advise(device_name=device, **SEVEN_B)
    d, machine = advice.decided, advice.calibration.machine
    assert machine.fabric == fabric and machine.link_assumed
    assert machine.network.intra.name == "pcie-phb"  # prices the table, advises no count
    assert d.read.accelerators == 2  # the fewest that hold the model with ZeRO-2
    assert d.count is None and d.withheld_by == "fabric"
    own = [r for r in d.readings if r.term == "fabric"]
    assert [(r.end, r.preset, r.accelerators) for r in own] == [("own", fabric, 1)]
    assert not [r for r in d.readings if r.term == "link"]  # no PCIe range searched
    (link,) = [a for a in advice.calibration.said.assumptions if a.term == TermId.LINK]
    assert link.basis.kind == FindingKind.LINK_ASSUMED
    assert dict(link.basis.values)["case"] == "fabric"
    assert dict(link.basis.values)["fabric"] == fabric
    assert link.quantity is not None and link.quantity.low is None


def test_one_device_on_an_unknown_fabric_stands() -> None:
    """A model one device trains fastest alone is advised on 1 device: no link in it."""
    advice = gpuscale.advise(params=1e8, step_ms=5, batch=8, device_name="TPU-v5p", max_devices=8)
    d = advice.decided
    assert advice.calibration.machine.fabric == "ICI"
    assert d.count == d.read.accelerators == 1 and d.withheld_by is None


@pytest.mark.parametrize("device", ["TPU-v5p", "Gaudi2"])
def test_a_bus_bandwidth_given_is_advised_on(device: str) -> None:
    advice = gpuscale.advise(device_name=device, busbw_gbs=200, latency_us=10, **SEVEN_B)
    d, machine = advice.decided, advice.calibration.machine
    assert machine.fabric is None and not machine.link_assumed
    assert machine.network.intra.busbw_gbs == 200
    assert d.withheld_by is None and d.count == d.read.accelerators >= 2
    assert not [r for r in d.readings if r.term == "fabric"]


def test_a_preset_given_is_advised_on() -> None:
    advice = gpuscale.advise(device_name="TPU-v4", interconnect="pcie4-x16", **SEVEN_B)
    assert advice.calibration.machine.fabric is None
    assert advice.decided.withheld_by != "fabric"

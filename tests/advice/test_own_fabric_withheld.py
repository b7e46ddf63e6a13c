"""A device joined by an inter-chip fabric of its own (a TPU's ICI, a Gaudi's on-chip RoCE)
that no link preset models is no PCIe card: with no link given, detected or measured, the
link is unknown: its range runs from PCIe (``pcie-sys``) to the fastest preset
(``nvlink5``), and a count that moves across it is withheld (``withheld_by`` ``fabric``);
given a link's bus bandwidth, the advice is as for any link given."""

from __future__ import annotations

import pytest

import gpuscale
from gpuscale.advice.model.hardware import device_record
from gpuscale.advice.types import FindingKind, TermId
from gpuscale.hardware.accelerators import own_fabric

SEVEN_B = {"params": 7e9, "flops_per_sample": 42e9, "step_ms": 800, "batch": 8, "max_devices": 8}
TEN_M = {"params": 1e7, "step_ms": 500, "batch": 32, "max_devices": 8}


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
def test_a_count_the_unknown_fabric_moves_is_withheld(device: str, fabric: str) -> None:
    advice = gpuscale.advise(device_name=device, **SEVEN_B)
    d, machine = advice.decided, advice.calibration.machine
    assert machine.link_assumed
    assert machine.network.intra.name == "pcie-phb"  # prices the table, advises no count
    assert d.read.accelerators == 2  # the fewest that hold the model with ZeRO-2
    assert d.count is None and d.withheld_by == "fabric"
    low, high = [r for r in d.readings if r.term == "fabric"]
    assert (low.end, low.preset, low.accelerators) == ("low", "pcie-sys", 2)
    assert (high.end, high.preset) == ("high", "nvlink5") and high.accelerators > 2
    assert high.value > 10 * low.value  # GB/s: the fastest preset against PCIe
    assert not [r for r in d.readings if r.term == "link"]  # the range is the fabric's
    (link,) = [a for a in advice.calibration.said.assumptions if a.term == TermId.LINK]
    assert link.basis.kind == FindingKind.LINK_ASSUMED
    assert dict(link.basis.values)["case"] == "fabric"
    assert dict(link.basis.values)["fabric"] == fabric
    assert link.quantity is not None  # the range said is the one searched
    assert (link.quantity.low, link.quantity.high) == (low.value, high.value)


def test_one_device_on_an_unknown_fabric_stands() -> None:
    """A model one device trains fastest alone is advised on 1 device: no link in it."""
    advice = gpuscale.advise(params=1e8, step_ms=5, batch=8, device_name="TPU-v5p", max_devices=8)
    d = advice.decided
    own = [r.accelerators for r in d.readings if r.term == "fabric"]
    assert own == [1, 1]  # ICI's range searched, from PCIe to nvlink5: 1 device at both ends
    assert d.count == d.read.accelerators == 1 and d.withheld_by is None


@pytest.mark.parametrize("device", ["TPU-v5p", "Gaudi2"])
def test_a_bus_bandwidth_given_is_advised_on(device: str) -> None:
    advice = gpuscale.advise(device_name=device, busbw_gbs=200, latency_us=10, **SEVEN_B)
    d, machine = advice.decided, advice.calibration.machine
    assert not machine.link_assumed
    assert machine.network.intra.busbw_gbs == 200
    assert d.withheld_by is None and d.count == d.read.accelerators >= 2
    assert not [r for r in d.readings if r.term == "fabric"]


def test_a_preset_given_is_advised_on() -> None:
    advice = gpuscale.advise(device_name="TPU-v4", interconnect="pcie4-x16", **SEVEN_B)
    assert not [r for r in advice.decided.readings if r.term == "fabric"]
    assert advice.decided.withheld_by != "fabric"


@pytest.mark.parametrize("device", ["TPU-v5p", "Gaudi2"])
@pytest.mark.parametrize("swept", ["cpu", "cuda"])
def test_a_sweep_of_gpus_or_cpus_is_no_fabric_of_its_own(tmp_path, device: str, swept: str) -> None:
    """`gpuscale collectives` times NCCL (GPUs) or gloo (CPU processes), never a TPU's ICI
    or a Gaudi's RoCE: a sweep of either under such a device is refused, naming the bus
    bandwidth to give instead; the fabric's settle names no --collectives."""
    import json

    from gpuscale.advice.explain.phrasebook import WITHHELD

    from ..builders import sweep_rows

    rows = [{"kind": "sweep", "sweep_id": "s1", "device": swept, "ranks": 8, "nodes": 1}]
    rows += sweep_rows(90.0, 10.0, 8)
    path = tmp_path / "c.jsonl"
    lines = [json.dumps({"schema": "gpuscale.collectives/2", "sweep_id": "s1", **r}) for r in rows]
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(ValueError) as refused:
        gpuscale.advise(device_name=device, collectives=str(path), **TEN_M)
    said = str(refused.value)
    assert f"not the {device} the model runs on" in said and "busbw_gbs=" in said
    assert "interconnect=" not in said
    assert "collectives" not in WITHHELD["fabric"]["short"]

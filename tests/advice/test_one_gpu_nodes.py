"""Nodes of one GPU each: no link inside a node carries a collective, so the link given
for inside a node (or assumed) moves nothing; the ring across nodes runs at the lesser of
each GPU's way to its NICs (its PCIe x16 link at its generation, NCCL's model) and the
NICs'. Two devices on two nodes were priced over the in-node link (1.35x on pcie-phb,
1.92x on pcie4-x16, and withheld with no link given: "Decides: the link")."""

from __future__ import annotations

import pytest

import gpuscale
from gpuscale.advice.types import FindingKind

ASKED = {"params": 1e9, "step_ms": 900.0, "batch": 64, "nodes": 3, "gpus_per_node": 1}


def _at_two(**more: object) -> tuple[float, float, object]:
    advice = gpuscale.advise(**ASKED, **more)
    row = advice.predictions.set_index("accelerators").loc[2]
    return float(row.speedup), float(row.comm_ms - row.latency_ms), advice


def test_the_link_inside_a_node_moves_nothing_where_a_node_holds_one_gpu() -> None:
    alone, bandwidth, advice = _at_two()
    assert advice.decision.withheld_by is None  # no link to settle: 2 devices advised
    assert advice.recommended == 2
    for link in ("pcie-phb", "pcie4-x16", "pcie-sys"):
        speedup, ms, _ = _at_two(link=link)
        assert (speedup, ms) == (alone, bandwidth), link
    found = [s for s in advice.calibration.said.sources if getattr(s, "kind", None)]
    path = next(s for s in found if s.kind is FindingKind.NIC_PATH)
    assert path["preset"] == "pcie4-x16" and path["gen"] is None  # no device: Gen4 assumed


def test_the_nic_path_is_the_gpus_pcie_generation_below_the_nics() -> None:
    """An H100's Gen5 x16 (48 GB/s) meets one NDR400 NIC (48 GB/s): half the Gen4 path's
    bandwidth time; two NICs a node leave the Gen5 path the lesser."""
    _, gen4, _ = _at_two(device_name="A100 SXM4 80GB", link="nvlink3")
    _, gen5, _ = _at_two(device_name="H100 SXM5 80GB", link="nvlink4")
    assert gen4 > 0 and gen5 == pytest.approx(gen4 / 2, rel=1e-6)
    _, two_nics, _ = _at_two(device_name="H100 SXM5 80GB", link="nvlink4", nics_per_node=2)
    assert two_nics == pytest.approx(gen5, rel=1e-6)

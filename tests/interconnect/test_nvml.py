"""Topology from NVML, on fake NVML systems built to NVML's documented behaviour."""

from __future__ import annotations

import pytest

from gpuscale.interconnect.nvml import nvml_topology
from gpuscale.interconnect.verdict import judge

from ..fake_nvml import FakeNvml, a100_x4_nvswitch, dual_socket, hgx_h100, phb_pair, rtx3090_bridge


@pytest.mark.parametrize(
    "system, code, switched, generation, preset, expected",
    [
        (hgx_h100, "NV18", True, "nvlink4", "nvlink4", 18 * 20.6),
        (a100_x4_nvswitch, "NV12", True, "nvlink3", "nvlink3", 12 * 20.0),
        (phb_pair, "PHB", False, "nvlink4", "pcie-phb", 10.0),
        (dual_socket, "SYS", False, "nvlink3", "pcie-sys", 10.0),
        (rtx3090_bridge, "NV4", False, "nvlink3-bridge", "nvlink3-bridge", 4 * 12.0),
    ],
)
def test_systems(system, code, switched, generation, preset, expected) -> None:
    topo = nvml_topology(FakeNvml(system()))
    assert topo.slowest_link() == ("NV" if code.startswith("NV") else code)
    assert code in {c for row in topo.matrix() for c in row}
    assert topo.nvswitch is switched
    if code.startswith("NV"):
        assert topo.nvlink_generation == generation
    assert topo.preset() == preset
    assert topo.expected_busbw_gbs() == pytest.approx(expected)


def test_nvswitch_is_not_mistaken_for_pcie() -> None:
    # Each NVLink's remote end is a switch, not a GPU: matching remote PCI ids to GPUs
    # finds no pair, which older tools read as "no NVLink" (PCIe SYS).
    topo = nvml_topology(FakeNvml(hgx_h100()))
    assert all(code == "NV18" for (i, j), code in topo.links.items())
    assert topo.nvlinks_per_gpu() == 18  # the bundle, not 18 x 7 peers


def test_only_the_visible_gpus() -> None:
    system = hgx_h100()
    topo = nvml_topology(FakeNvml(system), visible_uuids=["GPU-h100-3", "GPU-h100-6"])
    assert [g.name for g in topo.gpus] == ["GPU0", "GPU1"]
    assert [g.uuid for g in topo.gpus] == ["GPU-h100-3", "GPU-h100-6"]
    assert topo.links == {(0, 1): "NV18", (1, 0): "NV18"}


def test_pcie_downtraining_and_p2p_are_reported(golden) -> None:
    topo = nvml_topology(FakeNvml(phb_pair(downtrained=True)))
    first, second = topo.gpus
    assert (first.pcie_gen, first.pcie_max_gen, second.pcie_width, second.pcie_max_width) == (
        3,
        4,
        8,
        16,
    )
    said = topo.downtrained()
    assert sorted({line.split()[0] for line in said}) == ["GPU0", "GPU1"]  # both GPUs said
    golden.check("interconnect/topology", "downtrained PCIe links", "\n".join(said))
    assert len(topo.p2p) == 2 and all(status.endswith("status 5)") for status in topo.p2p.values())
    info = topo.to_dict()
    assert info["expected_busbw_gbs"] == 10.0 and info["preset"] == "pcie-phb"
    assert info["gpus"][0]["cpu_affinity"] == "0-15"


def test_verdict_names_the_causes_of_a_slow_phb_pair() -> None:
    import pandas as pd

    from gpuscale.interconnect.records import Sweeps
    from gpuscale.tables import COLLECTIVES_COLUMNS

    topo = nvml_topology(FakeNvml(phb_pair(downtrained=True)))
    rows = [
        {
            "sweep_id": "s1",
            "op": "all_reduce",
            "status": "ok",
            "size_bytes": 1 << 30,
            "ranks": 2,
            "busbw_gbs": 2.5,
        },
    ]
    sweeps = Sweeps(
        headers={"s1": {"device": "cuda"}},
        results=pd.DataFrame(rows).reindex(columns=list(COLLECTIVES_COLUMNS)),
    )
    (verdict,) = judge(sweeps, topology=topo, env={"NCCL_P2P_DISABLE": "1"})
    assert verdict.verdict == "suspicious" and verdict.ratio == pytest.approx(0.25)
    text = verdict.sentence()
    assert "PCIe Gen3 of Gen4" in text and "NCCL_P2P_DISABLE=1" in text
    assert "P2P not possible" in text

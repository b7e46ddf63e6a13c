"""A fully connected mesh's bus bandwidth at each device count (``LinkPreset.busbw_at``,
``Link.busbw_at``): 8 x MI300X's xGMI links each GPU to its 7 peers, one link each, so N
GPUs of the node use N-1 links, (N-1)/7 of the 8-GPU all-reduce AMD measured (318.98
GB/s); NVLink (an NVSwitch), PCIe and network presets keep one figure at every count. The
advice, its NCCL-tuned path, and the verdict on a sweep (``analyze --bench``, ``collectives
--interconnect``) all read the figure at the count."""

from __future__ import annotations

from pathlib import Path

import pytest

import gpuscale
from gpuscale.hardware.links import INFINITY_FABRIC, PRESETS, mesh_busbw_gbs
from gpuscale.interconnect import cost
from gpuscale.interconnect.cost import ring_factor
from gpuscale.interconnect.network import Link, Network
from gpuscale.interconnect.records import read_sweeps
from gpuscale.interconnect.verdict import LOW, NORMAL, judge

from .test_across_nodes import sweep

MI300X = PRESETS["xgmi-mi300x"]
MI300X_NAME = "AMD Instinct MI300X"  # torch's name of the part


def test_the_cited_figures() -> None:
    """The data's figures as cited (AMD's rccl-tests all-reduce on 8 x MI300X, 7 links a
    GPU): a change to either fails here until it is cited again."""
    assert (MI300X.busbw_gbs, MI300X.mesh_links) == (318.98, 7)
    assert PRESETS["xgmi-mi250x"].mesh_links is None  # no full mesh: one hop's figure


@pytest.mark.parametrize(("gpus", "links", "busbw_gbs"), [(2, 1, 45.57), (4, 3, 136.71)])
def test_mi300x_at_2_4_and_8_gpus(gpus: int, links: int, busbw_gbs: float) -> None:
    """From the data's per-link figure (318.98 / 7 = 45.57 GB/s, one link), within 6% of
    RCCL's own 48 GB/s a link (ROCm/rccl#1210: 4 x MI300X, 3 x 48 = 144)."""
    per_link = MI300X.busbw_gbs / MI300X.mesh_links
    assert MI300X.busbw_at(gpus) == pytest.approx(links * per_link)
    assert MI300X.busbw_at(gpus) == pytest.approx(busbw_gbs, abs=0.01)
    rccl = INFINITY_FABRIC["xgmi-mi300x"].rccl_gbs * links
    assert 0.94 < MI300X.busbw_at(gpus) / rccl < 1.0
    assert MI300X.busbw_at(8) == MI300X.busbw_gbs == MI300X.busbw_at(16)  # a node's whole


@pytest.mark.parametrize("name", [p for p in PRESETS if PRESETS[p].mesh_links is None])
def test_every_other_preset_keeps_its_figure(name: str) -> None:
    preset, link = PRESETS[name], Link.from_preset(name)
    for gpus in (1, 2, 3, 4, 8):
        assert preset.busbw_at(gpus) == link.busbw_at(gpus) == preset.busbw_gbs
    assert mesh_busbw_gbs(10.0, None, 2) == 10.0 == mesh_busbw_gbs(10.0, 7, 1)


@pytest.mark.parametrize("gpus", [2, 4, 8])
def test_the_modelled_and_nccl_paths_agree(gpus: int) -> None:
    """A 28 GB all-reduce on ``gpus`` MI300X: the ring model and NCCL's tuner both at the
    mesh's figure for the count (bandwidth-bound: within 0.1%)."""
    size, net = 28e9, Network(intra=Link.from_preset("xgmi-mi300x"))
    busbw = MI300X.busbw_at(gpus)
    assert net.time_s(size, gpus) == pytest.approx(ring_factor(gpus) * size / (busbw * 1e9), 1e-3)
    tuned = cost.collective("all_reduce", size, gpus, busbw, "pci").time_s
    assert net.time_s(size, gpus, nccl=True) == pytest.approx(tuned)
    assert net.time_s(size, gpus, nccl=True) == pytest.approx(net.time_s(size, gpus), 1e-3)


def test_across_nodes_the_node_link_at_its_devices() -> None:
    """Nodes of 4 MI300X and 8 NDR 400 NICs each: the ring through the NICs is bounded by the
    node's 3 links (136.7 GB/s), not the 8-GPU figure (8 x 48 = 384 GB/s NICs)."""
    net = Network(
        intra=Link.from_preset("xgmi-mi300x"),
        per_node=4,
        inter=Link.from_preset("ib-ndr400"),
        nics_per_node=8,
    )
    size = 1e10
    bandwidth_s = ring_factor(8) * size / (MI300X.busbw_at(4) * 1e9)
    assert net.time_s(size, 8) == pytest.approx(bandwidth_s, rel=1e-3)


def test_the_verdict_on_2_mi300x(tmp_path: Path) -> None:
    """A sweep on 2 MI300X at 44 GB/s is one link's worth, normal; at the 8-GPU figure it
    would be called low (14%). Named by its device, across 2 nodes of 4, the node's link is
    its 3 links'."""
    (v,) = judge(
        read_sweeps(sweep(tmp_path / "a.jsonl", 44.0, nodes=1, ranks=2)), preset="xgmi-mi300x"
    )
    assert v.expected_busbw_gbs == pytest.approx(MI300X.busbw_at(2))
    assert v.verdict == NORMAL
    nodes = sweep(tmp_path / "b.jsonl", 60.0, ranks=8, device_name=MI300X_NAME)
    (v,) = judge(read_sweeps(nodes), preset="ib-ndr400")
    assert v.expected_busbw_gbs == pytest.approx(MI300X.busbw_at(4))  # below 4 x 48 NICs
    assert v.verdict == LOW


def test_the_advice_prices_2_mi300x_at_one_link() -> None:
    """``advise --params 7B --step-ms 500 --batch 8 --device-name MI300X``: the 28 GB
    gradient all-reduce at 2 devices takes at least one link's time (614 ms), not the
    8-GPU figure's (88 ms)."""
    advice = gpuscale.advise(params=7e9, step_ms=500, batch=8, device_name="MI300X")
    table = advice.table.set_index("accelerators")
    one_link_ms = 28e9 / (MI300X.busbw_at(2) * 1e9) * 1e3
    assert table.loc[2, "comm_ms"] >= one_link_ms
    assert table.loc[2, "speedup"] < 1 < table.loc[8, "speedup"]
    assert advice.calibration.machine.network.intra.mesh_links == 7

"""A sweep across nodes judged against a network preset as the advice costs the network
(``interconnect.network.ring_through_nics_gbs``): one ring through the NICs, the smaller of
the node's own link and its NICs' sum, one NIC per device unless told otherwise; its
figures set beside NCCL's maintainers' measurements across nodes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gpuscale.hardware.links import PUBLISHED
from gpuscale.interconnect.network import Link, Network
from gpuscale.interconnect.nvml import nvml_topology
from gpuscale.interconnect.records import read_sweeps
from gpuscale.interconnect.verdict import LOW, NORMAL, SUSPICIOUS, judge

from ..fake_nvml import FakeNvml, hgx_h100

SCHEMA = "gpuscale.collectives/2"
VIEW = "interconnect/verdicts"
H100 = "NVIDIA H100 80GB HBM3"  # torch's name of an H100 SXM5


def sweep(
    path: Path,
    busbw_gbs: float,
    *,
    nodes: int = 2,
    ranks: int = 16,
    device_name: str | None = H100,
    op: str = "all_reduce",
) -> Path:
    """One sweep as the worker writes it: its header (nodes, ranks, device) and one
    result at 1 GiB."""
    header = {"schema": SCHEMA, "kind": "sweep", "sweep_id": "s", "device": "cuda"}
    header |= {"nodes": nodes, "ranks": ranks}
    if device_name is not None:
        header["device_name"] = device_name
    row = {
        "schema": SCHEMA,
        "kind": "result",
        "sweep_id": "s",
        "op": op,
        "status": "ok",
        "size_bytes": 1 << 30,
        "ranks": ranks,
        "busbw_gbs": busbw_gbs,
    }
    path.write_text(json.dumps(header) + "\n" + json.dumps(row) + "\n")
    return path


@pytest.mark.parametrize(
    "nics_per_node, expected_gbs",
    [
        (None, 370.8),  # one NIC per device: 8 x 48 = 384 GB/s, the node's NVLink ring lower
        (8, 370.8),
        (4, 192.0),  # 4 x 48
        (1, 48.0),
    ],
)
def test_two_nodes_of_8_h100_over_ndr400(
    tmp_path: Path, nics_per_node: int | None, expected_gbs: float
) -> None:
    (v,) = judge(
        read_sweeps(sweep(tmp_path / "c.jsonl", 300.0)),
        preset="ib-ndr400",
        nics_per_node=nics_per_node,
    )
    assert v.expected_busbw_gbs == pytest.approx(expected_gbs)
    assert v.ratio == pytest.approx(300.0 / expected_gbs)
    assert ("one per device, assumed" in v.reference) == (nics_per_node is None)


def test_the_verdict_expects_what_the_advice_costs(tmp_path: Path) -> None:
    """One expectation: the advice's network of the same nodes (8 H100s on NVLink 4, 8
    NDR 400 NICs a node) moves a large all-reduce across 2 nodes at the bus bandwidth the
    verdict expects."""
    (v,) = judge(read_sweeps(sweep(tmp_path / "c.jsonl", 300.0)), preset="ib-ndr400")
    network = Network(
        intra=Link.from_preset("nvlink4"), per_node=8, inter=Link.from_preset("ib-ndr400")
    )
    size = float(1 << 40)  # latency negligible beside the bandwidth term
    busbw_gbs = 2 * 15 / 16 * size / network.time_s(size, 16) / 1e9
    assert busbw_gbs == pytest.approx(v.expected_busbw_gbs, rel=1e-3)


def test_one_nic_s_bandwidth_on_8_nic_nodes_is_not_normal(tmp_path: Path, golden) -> None:
    """48 GB/s, one NDR 400 NIC's, across nodes of 8 H100s and 8 NICs: 7/8 of the fabric
    unused, 13% of the 370.8 GB/s expected (was "100% ... NORMAL" against one NIC)."""
    path = sweep(tmp_path / "c.jsonl", 48.0)
    (v,) = judge(read_sweeps(path), preset="ib-ndr400", nics_per_node=8)
    assert v.verdict == SUSPICIOUS and v.ratio == pytest.approx(48.0 / 370.8)
    assert "NCCL_IB_HCA" in v.causes[0]  # the NICs NCCL used, checked first
    golden.check(VIEW, "across 2 nodes, one NIC's bandwidth of 8", v.sentence())
    (v,) = judge(read_sweeps(path), preset="ib-ndr400", nics_per_node=1)
    assert v.verdict == NORMAL and v.ratio == pytest.approx(1.0)
    (v,) = judge(read_sweeps(sweep(tmp_path / "d.jsonl", 160.0)), preset="ib-ndr400")
    assert v.verdict == LOW  # 43% of 370.8


def test_a_one_node_sweep_is_judged_as_before(tmp_path: Path) -> None:
    """One node: no network preset applies, and the node's link is the figure, with no
    word of nodes or NICs."""
    path = sweep(tmp_path / "c.jsonl", 300.0, nodes=1, ranks=8)
    (v,) = judge(read_sweeps(path), preset="ib-ndr400", nics_per_node=8)
    assert v.ratio is None and v.expected_busbw_gbs is None and "one node" in v.reference
    (v,) = judge(read_sweeps(path), topology=nvml_topology(FakeNvml(hgx_h100())))
    assert v.expected_busbw_gbs == pytest.approx(370.8) and v.verdict == NORMAL
    assert "NIC" not in v.sentence() and "nodes" not in v.sentence()


def test_the_node_link_comes_from_the_topology_first(tmp_path: Path) -> None:
    """The topology's slowest link is the node's own (NVLink 4 on this HGX H100) even
    where the header names another GPU; without either, the NICs' sum alone, said so."""
    topo = nvml_topology(FakeNvml(hgx_h100()))
    path = sweep(tmp_path / "a.jsonl", 300.0, device_name="NVIDIA A100-SXM4-80GB")
    (v,) = judge(read_sweeps(path), preset="ib-ndr400", topology=topo)
    assert v.expected_busbw_gbs == pytest.approx(370.8) and "topology" in v.reference
    (v,) = judge(read_sweeps(path), preset="ib-ndr400")  # the A100's NVLink 3: 240 GB/s
    assert v.expected_busbw_gbs == pytest.approx(240.0) and "A100" in v.reference
    path = sweep(tmp_path / "b.jsonl", 300.0, device_name=None)
    (v,) = judge(read_sweeps(path), preset="ib-ndr400")
    assert v.expected_busbw_gbs == pytest.approx(384.0) and "not known" in v.reference


@pytest.mark.parametrize(
    "device_name, network, source, nics",
    [
        ("NVIDIA A100-SXM4-80GB", "ib-hdr200", "NVIDIA/nccl#812", 1),  # a node's 8 NICs
        (H100, "ib-ndr400", "NVIDIA/nccl-tests#290", 8),  # one NIC's, times 8
    ],
)
def test_the_expectation_meets_what_nccl_s_maintainers_measure(
    tmp_path: Path, device_name: str, network: str, source: str, nics: int
) -> None:
    """DGX A100 nodes with 8 HDR 200 NICs: 192 GB/s measured across nodes (nccl#812);
    H100 nodes with 8 NDR 400 NICs: 46-48 GB/s a NIC (nccl-tests#290), 8 of them 368-384:
    the figure expected within 2% of each."""
    (published,) = [m for m in PUBLISHED if m.source == source]
    path = sweep(tmp_path / "c.jsonl", 100.0, device_name=device_name)
    (v,) = judge(read_sweeps(path), preset=network)
    assert v.expected_busbw_gbs == pytest.approx(nics * published.busbw_gbs, rel=0.02)


def test_without_a_network_the_node_link_is_said_an_upper_bound(tmp_path: Path) -> None:
    (v,) = judge(read_sweeps(sweep(tmp_path / "c.jsonl", 300.0)), preset="nvlink4")
    assert v.expected_busbw_gbs == pytest.approx(370.8) and "upper bound" in v.reference


def test_above_the_nics_on_two_nodes_names_nccl_s_tree(tmp_path: Path) -> None:
    """80 GB/s through one 48 GB/s NIC a node on two nodes: NCCL's tree, not the ring,
    as busbw counts it; NCCL_ALGO=Ring measures the network."""
    (v,) = judge(
        read_sweeps(sweep(tmp_path / "c.jsonl", 80.0)), preset="ib-ndr400", nics_per_node=1
    )
    assert v.verdict == SUSPICIOUS and any("NCCL_ALGO=Ring" in c for c in v.causes)


def test_no_nics_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="NICs per node must be at least 1, got 0"):
        judge(read_sweeps(sweep(tmp_path / "c.jsonl", 48.0)), preset="ib-ndr400", nics_per_node=0)


def test_a_file_named_by_a_string_is_read_as_its_path(tmp_path: Path) -> None:
    """``read_sweeps`` takes the file's name as ``gpuscale.advise(collectives=...)`` does."""
    path = sweep(tmp_path / "c.jsonl", 48.0)
    (v,) = judge(read_sweeps(str(path)), preset="ib-ndr400", nics_per_node=1)
    assert v.expected_busbw_gbs == pytest.approx(48.0) and v.verdict == NORMAL


def test_a_preset_is_read_whatever_its_case(tmp_path: Path) -> None:
    (v,) = judge(read_sweeps(sweep(tmp_path / "c.jsonl", 48.0)), preset="IB-NDR400")
    assert v.expected_busbw_gbs == pytest.approx(370.8)


def test_an_unknown_preset_names_the_closest(tmp_path: Path) -> None:
    """A mistyped preset says which it meant and the known ones, not a bare ``KeyError``
    of the name alone."""
    with pytest.raises(KeyError, match=r"did you mean 'ib-ndr400'.*known: nvlink5"):
        judge(read_sweeps(sweep(tmp_path / "c.jsonl", 48.0)), preset="ib-ndr40")

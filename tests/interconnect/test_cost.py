"""A collective as NCCL's tuner costs it (``interconnect/cost.py``,
``data/nccl_tuning.json``): the tables pinned to NCCL 2.20.3's ``tuning.cc``, and the
choices NCCL is known to make (LL for small messages, the ring's bandwidth for large ones,
the tree across many nodes, no LL128 off NVLink)."""

from __future__ import annotations

import json
from importlib import resources

import pytest

from gpuscale.interconnect import cost
from gpuscale.interconnect.network import Link, Network

DATA = json.loads((resources.files("gpuscale") / "data" / "nccl_tuning.json").read_text())
MIB = 2**20


def test_the_tables_are_nccl_2_20_3s_with_their_source() -> None:
    # NVIDIA/nccl src/graph/tuning.cc at b6475625 (NCCL 2.20.3): baseLat and hwLat
    base = DATA["base_latency_us"]["value"]
    assert base["ring"] == {"LL": 6.6, "LL128": 14.0, "Simple": 8.4}
    assert base["tree"] == {"LL": 6.8, "LL128": 14.0, "Simple": 0.0}
    hop = DATA["hop_latency_us"]["value"]
    assert hop["nvlink"]["ring"] == {"LL": 0.6, "LL128": 1.9, "Simple": 3.4}
    assert hop["pci"]["ring"] == {"LL": 1.0, "LL128": 2.5, "Simple": 5.7}
    assert hop["net"]["ring"] == {"LL": 2.7, "LL128": 4.0, "Simple": 14.0}
    assert hop["net"]["tree"] == {"LL": 5.0, "LL128": 8.5, "Simple": 28.0}
    for entry in DATA.values():
        if isinstance(entry, dict):
            assert "b6475625" in entry["source"] and entry["unit"]


def test_small_buckets_take_ll_and_large_ones_the_rings_bandwidth() -> None:
    small = cost.collective("all_reduce", 4096, 8, 370.8, "nvlink")
    assert (small.algorithm, small.protocol) == ("ring", "LL")
    assert small.time_s < 20e-6  # microseconds, not 2(N-1) x 10 us = 140 us
    large = cost.collective("all_reduce", 1024 * MIB, 8, 370.8, "nvlink")
    assert large.protocol == "Simple"
    bandwidth_s = 2 * 7 / 8 * 1024 * MIB / 370.8e9  # nccl-tests' bus bandwidth at 1 GiB
    assert large.time_s == pytest.approx(bandwidth_s, rel=0.02)  # + 56 us of latency


def test_a_25_mib_bucket_on_nvlink_pays_nccls_latency_not_140_us() -> None:
    # issue 73: a 1.3B model's 25 MiB buckets paid 2(N-1) x 10 us = 140 us each
    bucket = cost.collective("all_reduce", 25 * MIB, 8, 370.8, "nvlink")
    assert bucket.latency_s < 60e-6


def test_pcie_never_takes_ll128() -> None:
    for size in (1024, MIB, 64 * MIB, 1024 * MIB):
        found = cost.choices("all_reduce", size, 8, 24.0, "pci")
        assert {c.protocol for c in found} == {"LL", "Simple"}


def test_across_many_nodes_the_tree_wins_a_medium_message() -> None:
    # the ring's latency grows with the ranks, the tree's with log2 of the nodes
    chosen = cost.collective("all_reduce", 4 * MIB, 512, 370.8, "nvlink", nodes=64)
    assert chosen.algorithm == "tree"
    ring = min(
        (
            c
            for c in cost.choices("all_reduce", 4 * MIB, 512, 370.8, "nvlink", 64)
            if c.algorithm == "ring"
        ),
        key=lambda c: c.time_s,
    )
    assert ring.latency_s > 1e-3  # over 1 ms of ring steps at 512 ranks


def test_a_link_is_costed_by_nccl_only_where_asked() -> None:
    link = Link.from_preset("nvlink4")
    assert link.nccl_hardware == "nvlink"
    nccl = Network(intra=link).time_s(4096, 8, nccl=True)
    ring = Network(intra=link).time_s(4096, 8)
    assert ring == pytest.approx(2 * 7 * 10e-6, rel=0.01)  # the preset's 10 us a hop
    assert nccl < ring / 5


def test_a_custom_link_keeps_its_own_latency() -> None:
    custom = Link(busbw_gbs=100.0, latency_us=7.0, name="custom")
    assert custom.nccl_hardware is None
    time_s = Network(intra=custom).time_s(1.0, 4, nccl=True)
    assert time_s == pytest.approx(2 * 3 * 7e-6, rel=1e-3)


def test_across_nodes_the_network_is_nccls_net() -> None:
    network = Network(
        intra=Link.from_preset("nvlink4"),
        per_node=8,
        inter=Link.from_preset("ib-ndr400"),
        nics_per_node=8,
    )
    assert network.inter is not None and network.inter.nccl_hardware == "net"
    time, latency = network.cost_s(25 * MIB, 64, nccl=True)
    assert 0 < latency < time
    # the bandwidth is the node's link or the NICs' sum, whichever is less (370.8 GB/s)
    assert time > 2 * 63 / 64 * 25 * MIB / 370.8e9

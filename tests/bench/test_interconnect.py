"""Topology parsing, bus bandwidth and the verdict."""

from __future__ import annotations

import pytest

from gpuscale.bench.collectives import bus_bandwidth, judge_busbw, message_sizes
from gpuscale.bench.topology import parse_topo_matrix

PHB_PAIR = """\tGPU0\tGPU1\tCPU Affinity\tNUMA Affinity\tGPU NUMA ID
GPU0\t X \tPHB\t0-15\t0\t\tN/A
GPU1\tPHB\t X \t0-15\t0\t\tN/A

Legend:

  X    = Self
  PHB  = Connection traversing PCIe as well as a PCIe Host Bridge (typically the CPU)
"""

NVLINK_8 = (
    "\t"
    + "\t".join(f"GPU{i}" for i in range(8))
    + "\tNIC0\tCPU Affinity\n"
    + "".join(
        f"GPU{i}\t" + "\t".join(" X " if i == j else "NV18" for j in range(8)) + "\tPXB\t0-55\n"
        for i in range(8)
    )
    + "NIC0\t"
    + "\t".join(["PXB"] * 8)
    + "\t X \n"
)

DUAL_SOCKET = """\x1b[4m\tGPU0\tGPU1\tGPU2\tGPU3\tCPU Affinity\x1b[0m
GPU0\t X \tPIX\tSYS\tSYS\t0-23
GPU1\tPIX\t X \tSYS\tSYS\t0-23
GPU2\tSYS\tSYS\t X \tPIX\t24-47
GPU3\tSYS\tSYS\tPIX\t X \t24-47
"""


@pytest.mark.parametrize(
    "text, gpus, slowest, preset",
    [
        (PHB_PAIR, 2, "PHB", "pcie-phb"),
        (NVLINK_8, 8, "NV", "nvlink4"),
        (DUAL_SOCKET, 4, "SYS", "pcie-sys"),
    ],
)
def test_topology_samples(text: str, gpus: int, slowest: str, preset: str) -> None:
    topo = parse_topo_matrix(text)
    assert len(topo.gpus) == gpus and topo.slowest_link() == slowest and topo.preset() == preset
    matrix = topo.matrix()
    assert all(matrix[i][i] == "X" for i in range(gpus))


def test_topology_rejects_other_text() -> None:
    with pytest.raises(ValueError):
        parse_topo_matrix("No devices were found")


@pytest.mark.parametrize(
    "op, n, factor",
    [
        ("all_reduce", 2, 1.0),
        ("all_reduce", 8, 1.75),
        ("all_gather", 4, 0.75),
        ("reduce_scatter", 8, 0.875),
    ],
)
def test_busbw_formula(op: str, n: int, factor: float) -> None:
    algbw, busbw = bus_bandwidth(op, 2e9, 0.5, n)  # 2 GB in 0.5 s
    assert algbw == pytest.approx(4.0) and busbw == pytest.approx(4.0 * factor)


def test_message_sizes_and_verdict() -> None:
    sizes = message_sizes(1 << 30)
    assert sizes[0] == 8 and sizes[-1] == 1 << 30 and len(sizes) == 28
    ratio, sentence = judge_busbw(4.0, "pcie-phb")
    assert ratio == pytest.approx(0.4) and "FAR BELOW" in sentence
    assert judge_busbw(350.0, "nvlink4")[1].endswith("as expected")
    assert judge_busbw(1.0, None)[0] is None

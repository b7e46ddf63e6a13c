"""Interconnect presets: the bandwidth and latency gpuscale assumes for each link type.

Shared by ``gpuscale collectives`` (is the measured bus bandwidth what the link should
give?) and the advice model. ``busbw_gbs`` is the all-reduce *bus bandwidth* (the
nccl-tests convention, ``algbw * 2(n-1)/n``) a well-configured system reaches on large
messages; ``latency_us`` the per-step latency of a ring all-reduce. They are round,
documented assumptions (vendor link rates and typical nccl-tests results), not
measurements: calibrate with ``gpuscale collectives`` and pass ``--busbw-gbs``.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class LinkPreset:
    name: str
    busbw_gbs: float
    latency_us: float
    description: str


PRESETS: dict[str, LinkPreset] = {
    p.name: p
    for p in (
        LinkPreset(
            "nvlink4",
            360.0,
            10.0,
            "NVLink 4 + NVSwitch (H100 SXM): 900 GB/s per GPU; "
            "nccl-tests all-reduce busbw about 360-480 GB/s on 8 GPUs",
        ),
        LinkPreset(
            "nvlink3",
            230.0,
            10.0,
            "NVLink 3 + NVSwitch (A100 SXM): 600 GB/s per GPU; all-reduce busbw about 230 GB/s",
        ),
        LinkPreset(
            "pcie5-x16",
            48.0,
            15.0,
            "PCIe 5.0 x16 through a switch: 64 GB/s per direction, about 48 GB/s achieved",
        ),
        LinkPreset(
            "pcie4-x16",
            24.0,
            15.0,
            "PCIe 4.0 x16 through a switch: 32 GB/s per direction, about 24 GB/s achieved",
        ),
        LinkPreset(
            "pcie-phb",
            10.0,
            20.0,
            "PCIe through the CPU host bridge (nvidia-smi PHB, "
            "no P2P): traffic staged through host memory, about 10 GB/s",
        ),
        LinkPreset(
            "pcie-sys",
            6.0,
            25.0,
            "PCIe across CPU sockets (nvidia-smi SYS/NODE over "
            "the inter-socket link): about 6 GB/s",
        ),
        LinkPreset(
            "ib-ndr400",
            45.0,
            6.0,
            "InfiniBand NDR 400 Gb/s per GPU (one NIC per GPU): "
            "50 GB/s line rate, about 45 GB/s achieved",
        ),
        LinkPreset("ib-hdr200", 22.0, 6.0, "InfiniBand HDR 200 Gb/s per GPU: about 22 GB/s"),
        LinkPreset("eth100", 10.0, 30.0, "100 GbE (RoCE or TCP): about 10 GB/s"),
        LinkPreset("eth25", 2.5, 50.0, "25 GbE: about 2.5 GB/s"),
    )
}

# nvidia-smi topo -m link codes -> the preset for traffic over that link.
TOPOLOGY_PRESET: dict[str, str] = {
    "NV": "nvlink4",
    "PIX": "pcie4-x16",
    "PXB": "pcie4-x16",
    "PHB": "pcie-phb",
    "NODE": "pcie-sys",
    "SYS": "pcie-sys",
}


def get_preset(name: str) -> LinkPreset:
    """The preset called ``name``; ``KeyError`` lists the known ones."""
    try:
        return PRESETS[name]
    except KeyError:
        raise KeyError(f"unknown interconnect {name!r}; known: {', '.join(PRESETS)}") from None

"""What a link should deliver: one documented table, each figure with its source.

Two kinds of figures. **Line rates** are the vendors' (per direction). **Expected bus
bandwidth** (``busbw``, nccl-tests' convention: what a ring all-reduce moves per GPU over
its slowest link, comparable across GPU counts) is NCCL's own model of each link, from
its topology code (``src/graph/topo.h``): the per-link figures NCCL plans its rings with,
about 80% of the line rate (protocol overhead). Beside them, **published measurements**
that NCCL's maintainers and cloud health checks quote.

Sources:
* NVLink line rates: NVIDIA V100, A100, H100, B200 datasheets (per link and direction:
  25 GB/s for NVLink 2-4, 50 GB/s for NVLink 5); the GA102 (RTX 3090, RTX A5000/A6000)
  NVLink bridge: 112.5 GB/s both directions over 4 links.
* NCCL's model (``src/graph/topo.h``, NCCL 2.18-2.21): NVLink per link SM70 20, SM80 20,
  SM86 12 (GA102), SM90 20.6 GB/s; PCIe Gen3 x16 12 GB/s, scaled by generation and width;
  Intel UPI (SKL_QPI_BW) 10, AMD Infinity Fabric (AMD_BW) 16, older QPI 6 GB/s;
  network 12 GB/s per 100 Gb/s.
* PCIe line rates: PCI-SIG (Gen3 8 GT/s, Gen4 16 GT/s, Gen5 32 GT/s per lane, 128b/130b).
* Measured: NVIDIA/nccl-tests#212 (S. Jeaugey: 8 x H100 all-reduce peak busbw ~480 GB/s
  with NVLink SHARP, ~370 GB/s effective NVLink bandwidth otherwise); nccl-tests#272 (8 x
  H200: 475 GB/s); nccl-tests#149 (8 x A100 SXM: ~200-230 GB/s); nccl-tests#194 (2 x H100
  PCIe with NVLink bridge: 116 GB/s); Azure azurehpc-health-checks, ``conf/
  nd96isr_h100_v5.conf`` (healthy 8 x H100: all-reduce busbw >= 460 GB/s at 16 GiB) and
  ``conf/nd96amsr_a100_v4.conf`` (8 x A100: >= 228 GB/s at 4 GiB).
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from typing import Any

from gpuscale.hardware.catalogue import Device
from gpuscale.hardware.device_names import lookup
from gpuscale.tables.requests import FieldError


@dataclass(frozen=True, slots=True)
class NvlinkGeneration:
    """One NVLink generation: per-link line rate and NCCL's per-link model (GB/s, one
    direction), the links a GPU has, and the architecture."""

    generation: str
    line_rate_gbs: float
    nccl_gbs: float
    links_per_gpu: int
    architecture: str


NVLINK: dict[str, NvlinkGeneration] = {
    g.generation: g
    for g in (
        NvlinkGeneration("nvlink2", 25.0, 20.0, 6, "Volta (V100)"),
        NvlinkGeneration("nvlink3", 25.0, 20.0, 12, "Ampere (A100)"),
        NvlinkGeneration("nvlink3-bridge", 14.06, 12.0, 4, "GA102 (RTX 3090, RTX A5000/A6000)"),
        NvlinkGeneration("nvlink4", 25.0, 20.6, 18, "Hopper (H100, H200)"),
        NvlinkGeneration("nvlink5", 50.0, 40.0, 18, "Blackwell (B200, GB200)"),
    )
}

# The device an NVLink preset implies when no device is named (the plausibility check of
# the advice reads its peak): the generation's flagship part of the device catalogue.
LINK_DEVICE = {"nvlink4": "H100 SXM5 80GB", "nvlink5": "B200 180GB", "nvlink3": "A100 SXM4 80GB"}

# NVML's architecture codes (nvmlDeviceGetArchitecture) -> NVLink generation.
NVML_ARCH_NVLINK = {5: "nvlink2", 7: "nvlink3", 9: "nvlink4", 10: "nvlink5"}

# PCIe: line rate per lane and direction (GB/s), by generation.
PCIE_LANE_GBS = {1: 0.25, 2: 0.5, 3: 0.985, 4: 1.969, 5: 3.938, 6: 7.563}
NCCL_PCI_GEN3_X16_GBS = 12.0  # NCCL's PCI_BW; scaled by generation and width
# Host memory between GPUs without P2P (NCCL's SHM transport, the default beyond PXB):
# typically 8-12 GB/s busbw on PCIe Gen4 hosts (copies through host memory).
SHM_TYPICAL_GBS = 10.0
CROSS_SOCKET_GBS = {"intel": 10.0, "amd": 16.0, "old-qpi": 6.0}
NCCL_NET_GBS_PER_100GBIT = 12.0


def nvlink_for_gpu(name: str | None) -> str | None:
    """The NVLink generation of a GPU by its name (the device catalogue's: an H100 any
    form is NVLink 4, an RTX A6000 the GA102 bridge), None when it has none or the
    catalogue does not know it."""
    part = lookup(name)
    return None if part is None else part.nvlink


def usual_preset(part: Device) -> str:
    """The link preset of a part's usual setup: its NVLink where it is a board on an NVLink
    baseboard (SXM), else PCIe with P2P through a switch at its generation, else
    ``pcie-phb`` (no P2P: a GeForce card, whose copies go through host memory)."""
    if part.board and part.nvlink in PRESETS:
        return str(part.nvlink)
    gen = f"pcie{part.pcie_gen}-x16"
    if part.p2p_pcie and gen in PRESETS:
        return gen
    return "pcie-phb" if not part.p2p_pcie else "pcie4-x16"


def pcie_busbw_gbs(generation: int, width: int = 16) -> float:
    """NCCL's model of a PCIe link: 12 GB/s for Gen3 x16, doubled per generation."""
    return NCCL_PCI_GEN3_X16_GBS * 2 ** (generation - 3) * width / 16


def network_busbw_gbs(gbit_per_s: float) -> float:
    """NCCL's model of a network link: 12 GB/s per 100 Gb/s."""
    return NCCL_NET_GBS_PER_100GBIT * gbit_per_s / 100


@dataclass(frozen=True, slots=True)
class Measured:
    """A published all-reduce measurement people compare against."""

    setup: str
    busbw_gbs: float
    note: str
    source: str


PUBLISHED: tuple[Measured, ...] = (
    Measured(
        "8 x H100 SXM, NVSwitch",
        480.0,
        "peak all-reduce busbw with NVLink SHARP; ~370 GB/s effective NVLink without it",
        "NVIDIA/nccl-tests#212",
    ),
    Measured(
        "8 x H100 SXM, NVSwitch",
        460.0,
        "health-check floor, all-reduce at 16 GiB",
        "Azure/azurehpc-health-checks conf/nd96isr_h100_v5.conf",
    ),
    Measured("8 x H200 SXM, NVSwitch", 475.0, "peak all-reduce busbw", "NVIDIA/nccl-tests#272"),
    Measured(
        "8 x A100 SXM, NVSwitch",
        228.0,
        "health-check floor, all-reduce at 4 GiB",
        "Azure/azurehpc-health-checks conf/nd96amsr_a100_v4.conf",
    ),
    Measured("8 x A100 SXM, NVSwitch", 210.0, "all-reduce busbw reported", "NVIDIA/nccl-tests#149"),
    Measured(
        "2 x H100 PCIe, NVLink bridge",
        116.0,
        "all-reduce busbw at 1-4 GiB",
        "NVIDIA/nccl-tests#194",
    ),
)


# What a preset links: GPUs inside one node (NVLink, PCIe, the host bridge, the sockets)
# or nodes (their NICs), in the words every sentence about a preset says it with.
LINK_KINDS = {
    "gpu": "a GPU-to-GPU link inside a node",
    "network": "a network link between nodes",
}


@dataclass(frozen=True, slots=True)
class LinkPreset:
    """A link class: the bus bandwidth a healthy system reaches on large all-reduces
    (GB/s, nccl-tests convention), the line rate, a per-step latency (us) for the advice
    model, where the figure comes from, and its ``kind`` (of :data:`LINK_KINDS`)."""

    name: str
    busbw_gbs: float
    latency_us: float
    description: str
    line_rate_gbs: float | None = None
    kind: str = "gpu"

    @property
    def kind_words(self) -> str:
        """What the preset links, in words (``a network link between nodes``)."""
        return LINK_KINDS[self.kind]


def _nvlink_preset(generation: str, latency_us: float, note: str) -> LinkPreset:
    g = NVLINK[generation]
    return LinkPreset(
        generation,
        g.links_per_gpu * g.nccl_gbs,
        latency_us,
        f"{g.architecture}: {g.links_per_gpu} NVLinks per GPU x {g.nccl_gbs:g} GB/s "
        f"(NCCL's model; line rate {g.links_per_gpu * g.line_rate_gbs:g} GB/s per "
        f"direction){note}",
        g.links_per_gpu * g.line_rate_gbs,
    )


PRESETS: dict[str, LinkPreset] = {
    p.name: p
    for p in (
        _nvlink_preset("nvlink5", 10.0, ""),
        _nvlink_preset(
            "nvlink4", 10.0, "; all-reduce with NVLink SHARP reaches ~480 (nccl-tests#212)"
        ),
        _nvlink_preset("nvlink3", 10.0, "; healthy 8 x A100 >= 228 GB/s (Azure health check)"),
        _nvlink_preset("nvlink3-bridge", 12.0, ""),
        _nvlink_preset("nvlink2", 12.0, ""),
        LinkPreset(
            "pcie5-x16",
            pcie_busbw_gbs(5),
            15.0,
            "PCIe 5.0 x16 through a switch, P2P: NCCL's model (line rate 63 GB/s)",
            PCIE_LANE_GBS[5] * 16,
        ),
        LinkPreset(
            "pcie4-x16",
            pcie_busbw_gbs(4),
            15.0,
            "PCIe 4.0 x16 through a switch, P2P: NCCL's model (line rate 31.5 GB/s)",
            PCIE_LANE_GBS[4] * 16,
        ),
        LinkPreset(
            "pcie3-x16",
            pcie_busbw_gbs(3),
            15.0,
            "PCIe 3.0 x16 through a switch, P2P: NCCL's model (line rate 15.8 GB/s)",
            PCIE_LANE_GBS[3] * 16,
        ),
        LinkPreset(
            "pcie-phb",
            SHM_TYPICAL_GBS,
            20.0,
            "PCIe through the CPU host bridge (nvidia-smi PHB/NODE): NCCL moves data through "
            "host memory (SHM) unless NCCL_P2P_LEVEL allows P2P there; typically 8-12 GB/s",
            PCIE_LANE_GBS[4] * 16,
        ),
        LinkPreset(
            "pcie-sys",
            CROSS_SOCKET_GBS["intel"],
            25.0,
            "across CPU sockets (nvidia-smi SYS): NCCL's UPI model 10 GB/s (AMD 16, older QPI 6)",
        ),
        LinkPreset(
            "ib-ndr400",
            network_busbw_gbs(400),
            6.0,
            "InfiniBand NDR 400 Gb/s, one NIC per GPU: NCCL's model (line rate 50 GB/s)",
            50.0,
            "network",
        ),
        LinkPreset(
            "ib-hdr200",
            network_busbw_gbs(200),
            6.0,
            "InfiniBand HDR 200 Gb/s, one NIC per GPU: NCCL's model (line rate 25 GB/s)",
            25.0,
            "network",
        ),
        LinkPreset(
            "eth100",
            network_busbw_gbs(100),
            30.0,
            "100 GbE (RoCE or TCP): NCCL's model",
            12.5,
            "network",
        ),
        LinkPreset("eth25", network_busbw_gbs(25), 50.0, "25 GbE: NCCL's model", 3.125, "network"),
    )
}


def get_preset(name: str) -> LinkPreset:
    """The preset called ``name``, whatever its case (``NVLINK4``; an abbreviation is
    none: ``pcie4``); ``KeyError`` lists the known ones and the closest (``nvlnk4``: "did
    you mean 'nvlink4'?")."""
    key = str(name).strip().lower()
    if key in PRESETS:  # every preset's name is lower case: `NVLINK4`; never `pcie4`
        return PRESETS[key]
    raise KeyError(f"unknown interconnect {name!r}{_closest(key)}; known: {', '.join(PRESETS)}")


def _closest(key: str) -> str:
    close = difflib.get_close_matches(key, list(PRESETS), n=1)
    return f" (did you mean {close[0]!r}?)" if close else ""


def check_preset(request: Any, field: str = "interconnect") -> None:
    """A request's link preset checked when the request is made, before any file is read:
    :class:`~gpuscale.tables.requests.FieldError` naming ``field`` where it is given and
    names no preset (``--interconnect nvlnk: not a link preset (did you mean ...)``)."""
    name = getattr(request, field)
    if name is None:
        return
    try:
        get_preset(name)
    except KeyError:
        rule = f"not a link preset{_closest(str(name).strip().lower())}; known: "
        raise FieldError(field, name, rule + ", ".join(PRESETS)) from None

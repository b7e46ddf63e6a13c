"""What a link should deliver: one table (``data/links.json``), each figure with its unit,
its source and, where the source says otherwise, a note.

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
* AMD Infinity Fabric (xGMI): a node's GPUs fully connected, no switch. MI300X (MI325X the
  same fabric): 7 links of 64 GB/s per direction, RCCL's model 48 GB/s a link
  (``ncclTopoXGMISpeed``), and an all-reduce busbw of 319 GB/s measured by AMD with
  rccl-tests on 8 x MI300X (ROCm blogs, "Understanding RCCL Bandwidth and xGMI Performance
  on AMD Instinct MI300X", 2025): the preset's, the whole node's. With no switch, N GPUs of
  the node use the N-1 links between them (``mesh_links``, ``mesh_busbw_gbs``): (N-1)/7 of
  it, one link at 2 (RCCL's README, ROCm/rccl#1270; RCCL's topology of 4 x MI300X, 3 links
  of 48 GB/s, ROCm/rccl#1210). MI250X: 50 GB/s a link per direction, RCCL's
  model 36 (``MI200_XGMI_WIDTH``); no measured all-reduce found, so the preset is the model
  at the double link a ring crosses between modules. Each xGMI preset's link class (the
  published tables' fits) is assumed NVLink's: no published AMD row was judged.
* Measured: NVIDIA/nccl-tests#212 (S. Jeaugey: 8 x H100 all-reduce peak busbw ~480 GB/s
  with NVLink SHARP, ~370 GB/s effective NVLink bandwidth otherwise); nccl-tests#272 (8 x
  H200: 475 GB/s); nccl-tests#149 (8 x A100 SXM: ~200-230 GB/s); nccl-tests#194 (2 x H100
  PCIe with NVLink bridge: 116 GB/s); Azure azurehpc-health-checks, ``conf/
  nd96isr_h100_v5.conf`` (healthy 8 x H100: all-reduce busbw >= 460 GB/s at 16 GiB) and
  ``conf/nd96amsr_a100_v4.conf`` (8 x A100: >= 228 GB/s at 4 GiB). Across nodes, where
  NCCL's rings go through the NICs (its maintainers, on rings: ``NCCL_ALGO=Ring``; on two
  nodes NCCL's tree otherwise exceeds the NICs' limit as busbw counts it): NVIDIA/nccl#812
  (DGX A100 nodes, 8 x HDR 200 Gb/s NICs each: 192 GB/s all-reduce busbw, 8 x 24),
  NVIDIA/nccl-tests#290 (NDR 400 Gb/s: 46-48 GB/s per NIC).
* Latency per ring hop (``hop_latency_us``: an all-reduce on N ranks takes 2(N-1) hops):
  gpuscale's assumptions, set beside NCCL's own tuning table (``src/graph/tuning.cc``,
  ``hwLat``: Ring/Simple 3.4 us a hop on NVLink, 5.7 on PCI, 14.0 on the network, and
  ``baseLat`` 8.4 us once per collective); each preset's note says how far it is from it.
"""

from __future__ import annotations

import difflib
import json
from dataclasses import dataclass
from importlib import resources
from typing import TypedDict

from gpuscale.hardware.catalogue import Device
from gpuscale.hardware.device_names import lookup
from gpuscale.quantities import joined
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


# Every figure below is read from ``data/links.json``, each value there with its unit and
# source (and a note where the source says otherwise); tests/advice/test_parameters.py
# pins them.
LINKS_FILE = "links.json"


class Said(TypedDict, total=False):
    """The note some sourced entries have."""

    note: str  # where the source says otherwise (the value is kept)


class Sourced(Said):
    """A sourced entry of ``data/links.json``: ``{"value", "unit", "source"}`` (and a note)."""

    unit: str
    source: str


class SourcedRate(Sourced):
    value: float


class SourcedCount(Sourced):
    value: int


class SourcedText(Sourced):
    value: str


class SourcedRateOrNone(Sourced):
    value: float | None  # none known


class SourcedCountOrNone(Sourced):
    value: int | None  # none known


class SourcedRates(Sourced):
    value: dict[str, float]  # by PCIe generation, by CPU vendor


class _Nvlink(TypedDict):
    architecture: str
    line_rate_gbs: SourcedRate
    nccl_gbs: SourcedRate
    links_per_gpu: SourcedCount


class _Fabric(TypedDict):
    architecture: str
    catalogue_architecture: str
    line_rate_gbs: SourcedRate
    rccl_gbs: SourcedRate
    links_per_gpu: SourcedCount


class _PresetMeshed(TypedDict, total=False):
    """What some presets have: the link class assumed, a mesh's links per GPU."""

    link_class: SourcedText
    mesh_links: SourcedCountOrNone


class _Preset(_PresetMeshed):
    kind: str
    description: str
    busbw_gbs: SourcedRate
    hop_latency_us: SourcedRate
    line_rate_gbs: SourcedRateOrNone


class _Links(TypedDict):
    """``data/links.json``."""

    about: str
    nccl_tuning: str
    nvlink: dict[str, _Nvlink]
    infinity_fabric: dict[str, _Fabric]
    pcie_lane_gbs: SourcedRates
    nccl_pci_gen3_x16_gbs: SourcedRate
    shm_typical_gbs: SourcedRate
    cross_socket_gbs: SourcedRates
    nccl_net_gbs_per_100gbit: SourcedRate
    presets: dict[str, _Preset]


_DATA: _Links = json.loads((resources.files("gpuscale") / "data" / LINKS_FILE).read_text())


@dataclass(frozen=True, slots=True)
class FabricGeneration:
    """One AMD Infinity Fabric (xGMI) generation: per-link line rate and RCCL's per-link
    model (GB/s, one direction), the links a GPU has, the architecture in words and as the
    device catalogue names it (``CDNA 3``)."""

    preset: str
    line_rate_gbs: float
    rccl_gbs: float
    links_per_gpu: int
    architecture: str
    catalogue_architecture: str


NVLINK: dict[str, NvlinkGeneration] = {
    name: NvlinkGeneration(
        name,
        g["line_rate_gbs"]["value"],
        g["nccl_gbs"]["value"],
        g["links_per_gpu"]["value"],
        g["architecture"],
    )
    for name, g in _DATA["nvlink"].items()
}

INFINITY_FABRIC: dict[str, FabricGeneration] = {
    name: FabricGeneration(
        name,
        g["line_rate_gbs"]["value"],
        g["rccl_gbs"]["value"],
        g["links_per_gpu"]["value"],
        g["architecture"],
        g["catalogue_architecture"],
    )
    for name, g in _DATA["infinity_fabric"].items()
}
INFINITY_FABRIC_LINK = "infinity-fabric"  # the device catalogue's gpu_link of such a part
# The prefixes of the presets of a GPU fabric a part has or has not (NVLink, xGMI).
GPU_FABRICS = ("nvlink", "xgmi")

# The device an NVLink or xGMI preset implies when no device is named (the plausibility
# check of the advice reads its peak): the generation's flagship part of the catalogue.
LINK_DEVICE = {
    "nvlink4": "H100 SXM5 80GB",
    "nvlink5": "B200 180GB",
    "nvlink3": "A100 SXM4 80GB",
    "xgmi-mi300x": "MI300X",
    "xgmi-mi250x": "MI250X",
}

# The presets whose name says the GPUs are PCIe cards: PCIe itself, and the NVLink bridge
# of two cards (a board's NVLink or xGMI says a board on its fabric).
CARD_LINKS = ("pcie", "nvlink3-bridge")


def implied_device(link_name: str) -> str | None:
    """The device a link preset's name implies (``nvlink4 (detected)``: H100 SXM), else None."""
    name = link_name.strip().lower()
    return next((d for prefix, d in LINK_DEVICE.items() if name.startswith(prefix)), None)


def implies_card(link_name: str) -> bool | None:
    """Whether a link preset's name (``pcie-phb``, ``nvlink4 (detected)``) says its GPUs are
    PCIe cards (True) or boards on their fabric (NVLink, xGMI: False); None for a network
    or a custom link, which say neither."""
    name = link_name.strip().lower()
    if name.startswith(CARD_LINKS):
        return True
    return False if name.startswith(GPU_FABRICS) else None


# NVML's architecture codes (nvmlDeviceGetArchitecture) -> NVLink generation.
NVML_ARCH_NVLINK = {5: "nvlink2", 7: "nvlink3", 9: "nvlink4", 10: "nvlink5"}

# PCIe: line rate per lane and direction (GB/s), by generation.
PCIE_LANE_GBS = {int(gen): rate for gen, rate in _DATA["pcie_lane_gbs"]["value"].items()}
NCCL_PCI_GEN3_X16_GBS = _DATA["nccl_pci_gen3_x16_gbs"]["value"]  # scaled by generation, width
# Host memory between GPUs without P2P (NCCL's SHM transport, the default beyond PXB).
SHM_TYPICAL_GBS = _DATA["shm_typical_gbs"]["value"]
# The citations of the figures a topology's expected bus bandwidth is made of (NCCL's
# model of each NVLink generation, of PCIe; the typical SHM figure with its note)
NVLINK_NCCL_SOURCE = {name: g["nccl_gbs"]["source"] for name, g in _DATA["nvlink"].items()}
PCIE_NCCL_SOURCE = _DATA["nccl_pci_gen3_x16_gbs"]["source"]
SHM_TYPICAL_SOURCE = (
    f"{_DATA['shm_typical_gbs']['source']} ({_DATA['shm_typical_gbs'].get('note', '')})"
)
CROSS_SOCKET_GBS = _DATA["cross_socket_gbs"]["value"]
NCCL_NET_GBS_PER_100GBIT = _DATA["nccl_net_gbs_per_100gbit"]["value"]


def nvlink_for_gpu(name: str | None) -> str | None:
    """The NVLink generation of a GPU by its name (the device catalogue's: an H100 any
    form is NVLink 4, an RTX A6000 the GA102 bridge), None when it has none or the
    catalogue does not know it."""
    if (part := lookup(name)) is None:
        return None
    return part.nvlink


def fabric_preset(part: Device) -> str | None:
    """The xGMI preset of a part whose GPU link is AMD's Infinity Fabric, by its
    architecture (an MI300X's CDNA 3: ``xgmi-mi300x``); None for another link, or an
    architecture no preset models."""
    if part.gpu_link != INFINITY_FABRIC_LINK:
        return None
    found = (
        g.preset for g in INFINITY_FABRIC.values() if g.catalogue_architecture == part.architecture
    )
    return next(found, None)


def own_link(part: Device) -> str | None:
    """The preset of a part's own GPU-to-GPU link: its NVLink (a bridge's too) or its
    Infinity Fabric; None where it has none or no preset models it."""
    return part.nvlink or fabric_preset(part)


def board_link(part: Device) -> str | None:
    """The preset of the baseboard's fabric a board part sits on: its NVLink (an SXM board)
    or its Infinity Fabric (an OAM module); None for a PCIe card (an NVLink bridge is no
    given) or a board whose fabric no preset models."""
    if not part.board:
        return None
    link = own_link(part)
    return link if link in PRESETS else None


def usual_preset(part: Device) -> str:
    """The link preset of a part's usual setup: its baseboard's fabric where it is a board
    (NVLink on SXM, Infinity Fabric on OAM: ``board_link``), else PCIe with P2P through a
    switch at its generation, else ``pcie-phb`` (no P2P: a GeForce card, whose copies go
    through host memory)."""
    if (board := board_link(part)) is not None:
        return board
    if not part.p2p_pcie:
        return "pcie-phb"
    return pcie_preset(part.pcie_gen)


def pcie_preset(generation: int | None) -> str:
    """The preset of a PCIe x16 link with P2P at ``generation``; Gen4's where the table
    has none for it (or it is not known)."""
    preset = f"pcie{generation}-x16"
    return preset if preset in PRESETS else "pcie4-x16"


def nic_path(generation: int | None) -> tuple[str, str]:
    """A GPU's way to its node's NICs where a node holds one GPU (no link inside a node
    carries a collective): its PCIe x16 link at its ``generation`` (``pcie_preset``), as
    NCCL's topology prices a GPU-to-NIC path (the PCI links it crosses); the preset and its
    bus bandwidth's citation."""
    name = pcie_preset(generation)
    return name, busbw_source(name)


def busbw_source(preset: str) -> str:
    """The citation of a preset's bus bandwidth (``data/links.json``)."""
    return _DATA["presets"][preset]["busbw_gbs"]["source"]


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
    Measured(
        "nodes of 8 x A100 SXM (DGX A100), 8 x InfiniBand HDR 200 Gb/s NICs each",
        192.0,
        "all-reduce busbw across nodes, measured by NCCL's maintainers: 8 NICs x 24 GB/s",
        "NVIDIA/nccl#812",
    ),
    Measured(
        "nodes of H100 SXM, one InfiniBand NDR 400 Gb/s NIC",
        47.0,
        "46-48 GB/s busbw per NIC across nodes (ring), as NCCL's maintainers expect it",
        "NVIDIA/nccl-tests#290",
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
    (GB/s, nccl-tests convention), the latency of one hop of a ring all-reduce (us; an
    all-reduce on N ranks takes 2(N-1) hops), what the figures are, the line rate, its
    ``kind`` (of :data:`LINK_KINDS`) and the link class it is assumed to be of."""

    name: str
    busbw_gbs: float
    hop_latency_us: float
    description: str
    line_rate_gbs: float | None = None
    kind: str = "gpu"
    # the link class (``advice.model.network.CLASSES``) the preset is taken as where its
    # name does not say one and no published row was judged on it (an xGMI mesh: nvlink)
    assumed_class: str | None = None
    # a fully connected mesh's links per GPU, over which ``busbw_gbs`` is reached (8 x
    # MI300X: 7); None where every count gets ``busbw_gbs`` (``mesh_busbw_gbs``)
    mesh_links: int | None = None

    @property
    def kind_words(self) -> str:
        """What the preset links, in words (``a network link between nodes``)."""
        return LINK_KINDS[self.kind]

    def busbw_at(self, ranks: int) -> float:
        """The bus bandwidth (GB/s) ``ranks`` GPUs of one node reach (``mesh_busbw_gbs``)."""
        return mesh_busbw_gbs(self.busbw_gbs, self.mesh_links, ranks)


def mesh_busbw_gbs(full_gbs: float, mesh_links: int | None, ranks: int) -> float:
    """The bus bandwidth (GB/s) of ``ranks`` GPUs of one node on a link whose ``full_gbs``
    is reached over ``mesh_links`` links per GPU: a fully connected mesh (xGMI of 8 x
    MI300X, 7 links) gives each pair of GPUs its own link, so a GPU's rings on N GPUs cross
    the N-1 links to its peers, ``full_gbs x min(N-1, mesh_links) / mesh_links`` (one link
    at 2 GPUs: RCCL's README, ROCm/rccl#1270; RCCL's topology of 4 x MI300X, 3 links:
    ROCm/rccl#1210). ``full_gbs`` unchanged where ``mesh_links`` is None (NVSwitch gives
    each GPU its whole bandwidth at any count; a PCIe or network figure is one link's) and
    for fewer than 2 ranks (no ring)."""
    if mesh_links is None or ranks < 2:
        return full_gbs
    return full_gbs * min(ranks - 1, mesh_links) / mesh_links


PRESETS: dict[str, LinkPreset] = {
    name: LinkPreset(
        name,
        p["busbw_gbs"]["value"],
        p["hop_latency_us"]["value"],
        p["description"],
        p["line_rate_gbs"]["value"],
        p["kind"],
        p["link_class"]["value"] if "link_class" in p else None,
        p["mesh_links"]["value"] if "mesh_links" in p else None,
    )
    for name, p in _DATA["presets"].items()
}
# Where each assumed link class is said: its source and note (``data/links.json``).
ASSUMED_CLASS_SAID: dict[str, SourcedText] = {
    name: p["link_class"] for name, p in _DATA["presets"].items() if "link_class" in p
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
    """`` (did you mean 'nvlink4'?)``: the presets ``key`` begins (``ib``: both InfiniBand
    presets, at most three), else the one closest to it; "" for none."""
    begun = [p for p in PRESETS if key and p.startswith(key)]
    close = begun[:3] or difflib.get_close_matches(key, list(PRESETS), n=1)
    return f" (did you mean {joined([repr(c) for c in close], 'or')}?)" if close else ""


def check_preset(request: object, field: str = "interconnect") -> LinkPreset | None:
    """A request's link preset (None: not given), checked when the request is made, before
    any file is read: :class:`~gpuscale.tables.requests.FieldError` naming ``field`` where it
    is given and names no preset (``--interconnect nvlnk: not a link preset (did you mean
    ...)``)."""
    name = getattr(request, field)
    if name is None:
        return None
    try:
        return get_preset(name)
    except KeyError:
        rule = f"not a link preset{_closest(str(name).strip().lower())}; known: "
        raise FieldError(field, name, rule + ", ".join(PRESETS)) from None

"""GPU topology as ``nvidia-smi topo -m`` means it, and what its slowest link should give.

Link codes: ``X`` self, ``NV#`` # bonded NVLinks, ``PIX`` one PCIe switch, ``PXB``
several PCIe switches, ``PHB`` a PCIe host bridge (through the CPU), ``NODE`` across host
bridges within a NUMA node, ``SYS`` across NUMA nodes (sockets); ``SOC`` is older drivers'
``SYS``. A :class:`Topology` comes from NVML (``gpuscale.interconnect.nvml``) or from saved
``nvidia-smi topo -m`` text (:func:`parse_topo_matrix`, NIC rows and affinity columns
included), and tells the link class an all-reduce ring through its GPUs runs over (a
preset of ``gpuscale.hardware.links``), the bus bandwidth that link should give, and the
class of its slowest GPU pair; the same of a few of its GPUs (:meth:`Topology.ring_of`):
torchrun's ranks on one node take GPUs 0..n-1 (local rank -> ``cuda:local_rank``), so n
devices run over the ring through the first n (:meth:`Topology.first_rings`), and another
n may give a faster one (:meth:`Topology.best_ring`).
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from functools import lru_cache
from itertools import combinations
from pathlib import Path

from gpuscale.hardware.catalogue import Device
from gpuscale.hardware.device_names import Resolved, UnknownDevice, lookup, on_link, resolve
from gpuscale.hardware.links import (
    NVLINK,
    NVLINK_NCCL_SOURCE,
    PCIE_NCCL_SOURCE,
    PRESETS,
    SHM_TYPICAL_GBS,
    SHM_TYPICAL_SOURCE,
    busbw_source,
    pcie_busbw_gbs,
    pcie_preset,
)
from gpuscale.sources.bounded import TooLarge, read_at_most, saved_text
from gpuscale.tables.commands import quoted_path
from gpuscale.tables.inputs import STDIN_UNREAD
from gpuscale.tables.json_depth import JSON

# Slowest first: the worst link along the ring NCCL builds bounds a ring all-reduce.
LINK_ORDER = ("SYS", "NODE", "PHB", "PXB", "PIX", "NV")
# The most GPUs whose ring is searched pair by pair (2^16 subsets, well under a second);
# beyond, a ring over the faster links is found only where they join every pair.
MAX_RING_SEARCH = 16
# The most sets of n GPUs searched for the best ring of n (8 choose 4 is 70, 12 choose 6
# 924: about a third of a second): beyond, the first n GPUs' ring stands
MAX_SUBSETS = 1000
_CODE = re.compile(r"^(X|NV\d+|PIX|PXB|PHB|NODE|SYS|SOC)$")
MAX_NVLINKS = max(g.links_per_gpu for g in NVLINK.values())  # a GPU's most (H100, B200: 18)


@dataclass(frozen=True, slots=True)
class Gpu:
    """One GPU: its name in the matrix, model, identity, PCIe link and NUMA placement."""

    name: str
    model: str = ""
    uuid: str = ""
    bus_id: str = ""
    pcie_gen: int | None = None
    pcie_width: int | None = None
    pcie_max_gen: int | None = None
    pcie_max_width: int | None = None
    cpu_affinity: str = ""
    numa_node: str = ""


@dataclass(frozen=True, slots=True)
class Nic:
    """A network interface as ``topo -m`` lists it (``NIC0: mlx5_0``), its rate where the
    system says, and its link code to each GPU."""

    name: str
    device: str = ""
    rate_gbit: float | None = None
    numa_node: str = ""
    to_gpus: tuple[str, ...] = ()


# older nvidia-smi wrote SOC for what it now writes SYS (across the CPU sockets)
_CODE_ALIASES = {"SOC": "SYS"}


def link_class(code: str) -> str:
    if code.startswith("NV"):
        return "NV"
    return _CODE_ALIASES.get(code, code)


@dataclass(frozen=True, slots=True)
class Ring:
    """The ring NCCL builds through ``gpus`` (indices of a topology's GPUs, in order): its
    link class (``Topology.ring_link``), preset and expected bus bandwidth (GB/s; None where
    not known)."""

    gpus: tuple[int, ...]
    link: str | None
    preset: str | None
    busbw_gbs: float | None

    def rank(self) -> tuple[int, float]:
        """Faster first by link class (NCCL searches NVLink rings first), then by bus
        bandwidth: an NVLink ring of unknown figure above a PCIe one of a known figure."""
        link = -1 if self.link is None else LINK_ORDER.index(self.link)
        return link, self.busbw_gbs or 0.0


@dataclass(frozen=True)
class Topology:
    """GPUs, the link code of every ordered pair (``links[(i, j)]``), NICs, and what is
    known of NVLink: whether GPUs meet through NVSwitch and the generation."""

    gpus: list[Gpu]
    links: dict[tuple[int, int], str] = field(default_factory=dict)
    nics: list[Nic] = field(default_factory=list)
    nvswitch: bool = False
    nvlink_generation: str | None = None
    p2p: dict[tuple[int, int], str] = field(default_factory=dict)
    source: str = "nvidia-smi topo -m"
    problems: list[str] = field(default_factory=list)  # what a saved matrix got wrong
    # the topologies of some of the GPUs (``within``), each built once
    _within: dict[tuple[int, ...], Topology] = field(
        default_factory=dict, init=False, repr=False, compare=False
    )

    def matrix(self) -> list[list[str]]:
        n = len(self.gpus)
        return [
            ["X" if i == j else self.links.get((i, j), "?") for j in range(n)] for i in range(n)
        ]

    def slowest_link(self) -> str | None:
        """The slowest link class between any two GPUs (``NV`` for NVLink), or None: what
        two GPUs exchanging directly get at worst (an all-reduce's is :meth:`ring_link`)."""
        classes = {link_class(code) for code in self.links.values()}
        return next((link for link in LINK_ORDER if link in classes), None)

    def ring_link(self) -> str | None:
        """The link class a ring all-reduce through all the GPUs is limited by: the fastest
        class whose links, with the faster ones, form a cycle through every GPU (the best
        Hamiltonian cycle's slowest link), else :meth:`slowest_link`; None without links.

        NCCL builds its rings so: ``ncclTopoCompute`` (NVIDIA/nccl ``src/graph/search.cc``)
        searches rings over NVLink paths first (``typeIntra = PATH_NVL``) and widens the path
        type a step at a time (PIX, PXB, PHB, ... SYS) only while no ring through every GPU
        is found. An NVLink ring 0-1-3-2-0 with PCIe between 0-3 and 1-2 runs over NVLink;
        a chain 0-1-2-3 of NVLink cannot close a ring without PCIe. Up to
        ``MAX_RING_SEARCH`` GPUs every cycle is searched (:func:`_has_ring`)."""
        slowest = self.slowest_link()
        n = len(self.gpus)
        if slowest is None or n < 2:
            return slowest
        rank = {pair: LINK_ORDER.index(link_class(code)) for pair, code in self.links.items()}
        for floor in range(len(LINK_ORDER) - 1, LINK_ORDER.index(slowest), -1):
            # GPU i's peers over links of class ``floor`` or faster, a bit per GPU
            adj = tuple(
                sum(1 << j for j in range(n) if rank.get((i, j), -1) >= floor) for i in range(n)
            )
            if _has_ring(adj):
                return LINK_ORDER[floor]
        return slowest

    def nvlinks_per_gpu(self) -> int | None:
        """NVLinks a GPU uses for the others: the bundle to the switches on NVSwitch
        systems, the sum over its NVLink peers on a direct mesh or ring (the smallest over
        GPUs: NCCL runs rings both ways, so a GPU on an NVLink ring uses both neighbours'
        bundles), None where the ring is not NVLink (:meth:`ring_link`)."""
        if not self.gpus or self.ring_link() != "NV":
            return None
        counts = [nvlinks_of(self.links, i, self.nvswitch) for i in range(len(self.gpus))]
        return min(counts)  # one count per GPU, and there are GPUs

    def part(self) -> Resolved | None:
        """The device catalogue's part of the GPUs' model (``--gpu`` or NVML's name), None
        where none is named or the catalogue does not know it; a name of several parts read
        as a PCIe card where the GPUs' ring runs over PCIe (an SXM board's GPUs form an
        NVLink ring: ``device_names.on_link``), but never as a card without NVLink where
        two GPUs share it (``V100`` with an NV4 pair on PHB: the SXM2 board, as no V100
        PCIe card has NVLink)."""
        model = next((g.model for g in self.gpus if g.model), "")
        try:
            found = resolve(model)
        except UnknownDevice:  # none named ("") too
            return None
        ring = self.ring_link()
        if ring in (None, "NV"):
            return found
        card = on_link(found, True, ring)
        shared = any(link_class(code) == "NV" for code in self.links.values())
        no_nvlink = card.device.nvlink is None and found.device.nvlink is not None
        return found if shared and no_nvlink else card

    def p2p_by_driver(self) -> bool:
        """Whether the driver allows P2P over PCIe between these GPUs: not on GeForce cards
        (the catalogue's ``p2p_pcie``), where NCCL copies through host memory (SHM) even
        behind one PCIe switch."""
        part = self.part()
        return part is None or part.device.p2p_pcie

    def preset(self) -> str | None:
        """The link class of the ring (:meth:`ring_link`), as a preset name of the
        reference table."""
        ring = self.ring_link()
        if ring == "NV":
            return self.nvlink_generation
        if ring in ("PIX", "PXB") and self.p2p_by_driver():
            return pcie_preset(self._pcie()[0])
        if ring in ("PIX", "PXB", "PHB", "NODE"):
            return "pcie-phb"
        return "pcie-sys" if ring == "SYS" else None

    def board_link(self) -> str | None:
        """The link the GPUs' boards imply: their NVLink generation where any two GPUs share
        NVLink (SXM boards, or PCIe cards bridged where the generation says bridge), though
        the ring runs over PCIe; else the ring's preset (:meth:`preset`)."""
        shared = any(link_class(code) == "NV" for code in self.links.values())
        return self.nvlink_generation if shared and self.nvlink_generation else self.preset()

    def expected_busbw_gbs(self) -> float | None:
        """The all-reduce bus bandwidth the ring's link (:meth:`ring_link`) should give
        (NCCL's model of it; see ``gpuscale.hardware.links``), None when the link is not
        known."""
        return self._expected()[0]

    def expected_source(self) -> str | None:
        """What :meth:`expected_busbw_gbs` is made of and the citation of each figure in
        ``data/links.json`` (``18 NVLinks x 20.6 GB/s, NCCL's model: NVIDIA/nccl ...``),
        and what was assumed for it; None with no figure."""
        return self._expected()[1]

    def _expected(self) -> tuple[float | None, str | None]:
        """(:meth:`expected_busbw_gbs`, :meth:`expected_source`)."""
        ring = self.ring_link()
        if ring == "NV":
            links = self.nvlinks_per_gpu()
            generation = NVLINK.get(self.nvlink_generation or "")
            if not links or generation is None or links > generation.links_per_gpu:
                return None, None  # unknown, or more links than such a GPU has: no figure
            part = self.part()
            names = [g.name for g in self.gpus]
            if part and bridge_misfits(self.links, names, part.device, self.nvswitch):
                return None, None  # links a PCIe card's bridge cannot give: no figure
            name = generation.generation
            return links * generation.nccl_gbs, (
                f"{links} NVLinks x {generation.nccl_gbs:g} GB/s, NCCL's model of {name}: "
                f"{NVLINK_NCCL_SOURCE[name]}"
            )
        if ring in ("PIX", "PXB") and self.p2p_by_driver():
            gen, width, whose = self._pcie()
            return pcie_busbw_gbs(gen, width), (
                f"PCIe Gen{gen} x{width} ({whose}), NCCL's model: {PCIE_NCCL_SOURCE}, doubled "
                "per generation, in proportion to the lanes"
            )
        if ring in ("PIX", "PXB", "PHB", "NODE"):
            return SHM_TYPICAL_GBS, SHM_TYPICAL_SOURCE
        if ring == "SYS":
            return PRESETS["pcie-sys"].busbw_gbs, busbw_source("pcie-sys")
        return None, None

    def _pcie(self) -> tuple[int, int, str]:
        """The PCIe generation and lanes of the slowest GPU's link and whose they are: as
        NVML reads them now, else the named part's (``--gpu``: a saved matrix holds no
        PCIe generation; a V100 PCIe is Gen3, an H100 PCIe Gen5), else Gen4 x16, assumed."""
        known = [(g.pcie_gen, g.pcie_width or 16) for g in self.gpus if g.pcie_gen]
        if known:
            return (*min(known), "the GPUs' links as read")
        part = self.part()
        if part is not None and part.device.pcie_gen:
            lanes = part.device.pcie_lanes or 16
            return part.device.pcie_gen, lanes, f"the {part.device.name}'s, from the catalogue"
        return 4, 16, "assumed: no GPU's PCIe generation is known here"

    def within(self, gpus: Iterable[int]) -> Topology:
        """The topology of ``gpus`` alone (indices of ``self.gpus``, in order): their links
        and P2P, with the whole matrix's NVLink generation and NVSwitch (a few GPUs of a
        switched node still meet through its switches); ``self`` for every GPU."""
        key = tuple(gpus)
        if key == tuple(range(len(self.gpus))):
            return self
        if key not in self._within:
            at = {g: k for k, g in enumerate(key)}

            def kept(pairs: dict[tuple[int, int], str]) -> dict[tuple[int, int], str]:
                return {(at[i], at[j]): v for (i, j), v in pairs.items() if i in at and j in at}

            self._within[key] = Topology(
                gpus=[self.gpus[g] for g in key],
                links=kept(self.links),
                nvswitch=self.nvswitch,
                nvlink_generation=self.nvlink_generation,
                p2p=kept(self.p2p),
                source=self.source,
            )
        return self._within[key]

    def ring_of(self, gpus: Iterable[int]) -> Ring:
        """The ring through ``gpus`` alone, by the rules of the whole one (:meth:`ring_link`,
        :meth:`preset`, :meth:`expected_busbw_gbs`)."""
        key = tuple(gpus)
        sub = self.within(key)
        return Ring(key, sub.ring_link(), sub.preset(), sub.expected_busbw_gbs())

    def first_rings(self) -> tuple[Ring, ...]:
        """The ring through GPUs 0..n-1 for each n from 2 to all the GPUs less one, where its
        preset or bus bandwidth is not the whole's: what n ranks of torchrun run over on
        this node (``CUDA_VISIBLE_DEVICES`` unset) where it is not all the GPUs' ring."""
        whole = (self.preset(), self.expected_busbw_gbs())
        rings = (self.ring_of(range(n)) for n in range(2, len(self.gpus)))
        return tuple(r for r in rings if (r.preset, r.busbw_gbs) != whole)

    def best_ring(self, n: int) -> Ring:
        """The best ring of ``n`` GPUs (:meth:`Ring.rank`), the first such in order (GPUs 0,1
        before 0,2); GPUs 0..n-1's where more than ``MAX_SUBSETS`` sets would be searched."""
        if not 2 <= n < len(self.gpus) or math.comb(len(self.gpus), n) > MAX_SUBSETS:
            return self.ring_of(range(min(n, len(self.gpus))))
        return max(map(self.ring_of, combinations(range(len(self.gpus)), n)), key=Ring.rank)

    def downtrained(self) -> list[str]:
        """GPUs whose PCIe link runs below its generation or width (NVML's current vs
        max): a common cause of low bandwidth."""
        out = []
        for g in self.gpus:
            if g.pcie_gen and g.pcie_max_gen and g.pcie_gen < g.pcie_max_gen:
                out.append(f"{g.name} PCIe Gen{g.pcie_gen} of Gen{g.pcie_max_gen}")
            if g.pcie_width and g.pcie_max_width and g.pcie_width < g.pcie_max_width:
                out.append(f"{g.name} PCIe x{g.pcie_width} of x{g.pcie_max_width}")
        return out

    def to_dict(self) -> dict[str, JSON]:
        return {
            "source": self.source,
            "gpus": [asdict(g) for g in self.gpus],
            "matrix": self.matrix(),
            "nics": [asdict(n) for n in self.nics],
            "nvswitch": self.nvswitch,
            "nvlink_generation": self.nvlink_generation,
            "nvlinks_per_gpu": self.nvlinks_per_gpu(),
            "p2p": {f"{i}-{j}": status for (i, j), status in sorted(self.p2p.items())},
            "slowest_link": self.slowest_link(),
            "ring_link": self.ring_link(),
            "preset": self.preset(),
            "expected_busbw_gbs": self.expected_busbw_gbs(),
            "expected_source": self.expected_source(),
            "downtrained": self.downtrained(),
            "device": _part_dict(self.part()),
            "matrix_problems": self.problems,
        }


@lru_cache(maxsize=64)
def _has_ring(adj: tuple[int, ...]) -> bool:
    """Whether a cycle visits every GPU once (a Hamiltonian cycle), ``adj[i]`` the bits of
    the GPUs ``i`` links to. Every pair linked: yes; a GPU with no link out or in: no; over
    ``MAX_RING_SEARCH`` GPUs: no; else by the paths from GPU 0 (Held-Karp):
    ``ends[mask]``, the GPUs a path from 0 through exactly ``mask`` can end on."""
    n = len(adj)
    every = (1 << n) - 1
    if all(adj[i] | 1 << i == every for i in range(n)):
        return True
    into = 0
    for bits in adj:
        into |= bits
    if into != every or not all(adj) or n > MAX_RING_SEARCH:
        return False
    ends = [0] * (1 << n)
    ends[1] = 1
    for mask in range(1, every + 1, 2):  # the masks holding GPU 0, smaller before larger
        if not ends[mask]:
            continue
        reach = 0
        for v in range(n):
            if ends[mask] >> v & 1:
                reach |= adj[v]
        reach &= ~mask
        while reach:
            low = reach & -reach
            ends[mask | low] |= low
            reach ^= low
    return any(ends[every] >> v & 1 and adj[v] & 1 for v in range(n))


def _part_dict(part: Resolved | None) -> dict[str, JSON] | None:
    """The catalogue part a topology's GPUs were read as, and how (``assumed``)."""
    if part is None:
        return None
    d = part.device
    return {"name": d.name, "assumed": part.assumed, "nvlink": d.nvlink, "p2p_pcie": d.p2p_pcie}


def infer_nvlink(
    links: dict[tuple[int, int], str], n_gpus: int, gpu_name: str | None
) -> tuple[str | None, bool]:
    """(NVLink generation, behind NVSwitch) from the bundles and a GPU name if given.

    Without a name (or one the catalogue does not know) the bundle size tells the
    generation where only one fits: NV18 is Hopper's NVLink 4, NV12 Ampere's NVLink 3, NV4
    between two GPUs a GA102 bridge; a part named that has no NVLink (an RTX 4090, an
    L40S) has none, whatever the bundles (:func:`_nvlink_not_on_part` says so).
    GPUs meet through NVSwitch when every pair shows the same bundle and the GPU could not
    have that many links to each peer directly."""
    bundles = [int(code[2:]) for code in links.values() if code.startswith("NV")]
    part = lookup(gpu_name)
    generation = part.nvlink if part is not None else None
    if part is None and bundles:
        largest = max(bundles)
        generation = {18: "nvlink4", 12: "nvlink3"}.get(largest)
        if generation is None and largest == 4 and n_gpus == 2:
            generation = "nvlink3-bridge"
    switched = False
    if bundles and len(bundles) == n_gpus * (n_gpus - 1) and len(set(bundles)) == 1:
        per_gpu = NVLINK[generation].links_per_gpu if generation else max(bundles)
        switched = n_gpus > 2 and bundles[0] * (n_gpus - 1) > per_gpu
    return generation, switched


def _affinity(cells: list[str], start: int) -> tuple[str, str]:
    """The CPU and NUMA affinity cells after the matrix ("" where a row has none)."""
    rest = [*cells[start:], "", ""]
    return rest[0], rest[1]


# What a text holding no GPU matrix is told to do: what to save, and how.
_SAVE_ONE = (
    ": not a saved `nvidia-smi topo -m`; save one on the machine: nvidia-smi topo -m > topo.txt"
)

# The most a saved `nvidia-smi topo -m` may hold (a 64-GPU host's is ~50 kB).
MAX_TOPO_BYTES = 1 << 20


def read_topo_file(path: Path, gpu_name: str | None = None) -> Topology:
    """The topology a saved ``nvidia-smi topo -m`` holds; ``ValueError`` naming the file
    when it cannot be read, is larger than 1 MiB (``/dev/zero`` included) or holds no GPU
    matrix."""
    try:
        data = read_at_most(path, MAX_TOPO_BYTES, "a saved `nvidia-smi topo -m`")
        return parse_topo_matrix(saved_text(data), gpu_name)
    except TooLarge as exc:
        raise ValueError(str(exc)) from None
    except FileNotFoundError:  # said as the results and collectives files are
        if str(path) == "-":
            raise ValueError(STDIN_UNREAD) from None
        raise ValueError(
            f"{quoted_path(path)}: no such topology file (a saved `nvidia-smi topo -m`)"
        ) from None
    except IsADirectoryError:  # said as a folder given for a results file is
        raise ValueError(
            f"{quoted_path(path)} is a folder: give a saved `nvidia-smi topo -m` in it "
            f"(nvidia-smi topo -m > {quoted_path(path / 'topo.txt')})"
        ) from None
    except (OSError, ValueError) as exc:
        raise ValueError(f"{quoted_path(path)}: {getattr(exc, 'strerror', exc)}") from None


def parse_topo_matrix(text: str, gpu_name: str | None = None) -> Topology:
    """Parse ``nvidia-smi topo -m`` output: the GPU matrix, NIC rows and columns, the CPU
    and NUMA affinity columns and the NIC legend. ``gpu_name`` (``--gpu``) tells the NVLink
    generation where the bundles do not. ``ValueError`` when there is no GPU matrix."""
    text = re.sub(r"\x1b\[[0-9;]*m", "", text)  # colour codes of newer drivers
    rows = [line.split() for line in text.splitlines() if line.split()]
    header = next((r for r in rows if r[0] == "GPU0" and (len(r) < 2 or r[1] != "X")), None)
    if header is None:
        raise ValueError(f"no GPU header row (GPU0 GPU1 ...) in the topology text{_SAVE_ONE}")
    names = [h for h in header if re.fullmatch(r"(GPU|NIC)\d+", h)]
    gpu_names = [h for h in names if h.startswith("GPU")]
    legend = dict(re.findall(r"^\s*(NIC\d+)\s*:\s*(\S+)", text, re.M))
    links: dict[tuple[int, int], str] = {}
    gpus: list[Gpu] = []
    nic_links: dict[str, list[str]] = {}
    read: set[str] = set()
    for cells in rows:
        label = cells[0]
        if cells is header or label not in names or label in read:  # a row again: the first
            continue
        read.add(label)
        codes = cells[1 : 1 + len(names)]
        if label.startswith("GPU"):
            i = gpu_names.index(label)
            for j, other in enumerate(gpu_names):
                value = codes[names.index(other)] if names.index(other) < len(codes) else ""
                if i != j and _CODE.match(value):
                    links[(i, j)] = value
            cpu, numa = _affinity(cells, 1 + len(names))
            gpus.append(Gpu(name=label, model=gpu_name or "", cpu_affinity=cpu, numa_node=numa))
        else:
            nic_links[label] = [
                codes[names.index(g)] for g in gpu_names if names.index(g) < len(codes)
            ]
    if not gpus:
        raise ValueError(f"no GPU rows in the topology text{_SAVE_ONE}")
    gpus.sort(key=lambda g: gpu_names.index(g.name))
    # the GPUs with a row, numbered in order: a GPU of the header without one is unknown,
    # its column left out, so that GPU i of ``gpus`` is ``links``' i (a missing row said)
    at = {gpu_names.index(g.name): i for i, g in enumerate(gpus)}
    kept = {(at[a], at[b]): code for (a, b), code in links.items() if a in at and b in at}
    generation, switched = infer_nvlink(kept, len(gpus), gpu_name)
    nics = [
        Nic(
            name=n,
            device=legend.get(n, ""),
            to_gpus=tuple(c for k, c in enumerate(nic_links.get(n, ())) if k in at),
        )
        for n in names
        if n.startswith("NIC")
    ]
    return Topology(
        gpus=gpus,
        links=kept,
        nics=nics,
        nvswitch=switched,
        nvlink_generation=generation,
        problems=[
            *matrix_problems(rows, header, gpu_names, links),
            *_beyond_generation(kept, [g.name for g in gpus], generation, switched),
            *_nvlink_not_on_part(kept, [g.name for g in gpus], gpu_name),
            *bridge_misfits(kept, [g.name for g in gpus], lookup(gpu_name), switched),
        ],
    )


def nvlinks_of(links: dict[tuple[int, int], str], gpu: int, nvswitch: bool) -> int:
    """GPU ``gpu``'s NVLinks to the others: its bundle to the switches on NVSwitch systems
    (the largest NV# it has), else the sum over its NVLink peers."""
    bundles = [int(code[2:]) for (a, _), code in links.items() if a == gpu and code[:2] == "NV"]
    return max(bundles, default=0) if nvswitch else sum(bundles)


def _nvlink_not_on_part(
    links: dict[tuple[int, int], str], names: list[str], gpu_name: str | None
) -> list[str]:
    """GPUs the matrix joins by NVLink where ``--gpu`` names a part that has none (an RTX
    4090, an L40S, an MI300X): no figure of an NVLink generation applies, so the matrix or
    the name is wrong."""
    part = lookup(gpu_name)
    if part is None or part.nvlink is not None:
        return []
    nv = {pair: code for pair, code in links.items() if code.startswith("NV")}
    if not nv:
        return []
    joined = sorted({i for pair in nv for i in pair})
    codes = sorted(set(nv.values()), key=lambda code: int(code[2:]))
    return [
        f"{', '.join(names[i] for i in joined)} share NVLink ({', '.join(codes)}), which the "
        f"{part.name} does not have: the matrix or the GPU named is wrong"
    ]


def _bridge_links(part: Device) -> int:
    """The NVLinks of a PCIe card's bridge: its bidirectional GB/s over its generation's
    per link (H100 PCIe 600 GB/s, 12 links of NVLink 4, where the SXM part has 18)."""
    return round((part.gpu_link_gbs or 0.0) / (2 * NVLINK[str(part.nvlink)].line_rate_gbs))


def bridge_misfits(
    links: dict[tuple[int, int], str], names: list[str], part: Device | None, switched: bool
) -> list[str]:
    """What a matrix shows that a PCIe card named (``--gpu``) cannot have: its NVLink is a
    bridge between two cards (every such part in the catalogue), so no GPU meets more than
    one peer over NVLink, none sits on NVSwitch, and none has more NVLinks than its bridge
    (the generation's count is the SXM part's). Empty for any other part."""
    if part is None or part.form_factor != "PCIe" or part.nvlink not in NVLINK:
        return []
    nv = {pair: code for pair, code in links.items() if code.startswith("NV")}
    peers: dict[int, set[int]] = {}
    for a, b in nv:
        peers.setdefault(a, set()).add(b)
    many = [names[i] for i in sorted(peers) if len(peers[i]) > 1]
    codes = ", ".join(sorted(set(nv.values()), key=lambda code: int(code[2:])))
    wrong = "the matrix or the GPU named is wrong"
    if many:
        how = "meet through NVSwitch" if switched else "each share NVLink with several GPUs"
        return [
            f"{', '.join(many)} {how} ({codes}), where the {part.name}'s NVLink is a bridge "
            f"between two cards: {wrong}"
        ]
    most, generation = _bridge_links(part), NVLINK[str(part.nvlink)].links_per_gpu
    beyond: dict[int, list[str]] = {}  # NVLinks: the GPUs that have them (more than the
    for i in sorted(peers):  # generation has: _beyond_generation says it)
        if most < (count := nvlinks_of(links, i, switched)) <= generation:
            beyond.setdefault(count, []).append(names[i])
    return [
        f"{', '.join(gpus)} {'has' if len(gpus) == 1 else 'have'} {count} NVLinks"
        f"{' each' * (len(gpus) > 1)}, more than the {part.name}'s bridge has ({most}): {wrong}"
        for count, gpus in sorted(beyond.items())
    ]


def _beyond_generation(
    links: dict[tuple[int, int], str], names: list[str], generation: str | None, switched: bool
) -> list[str]:
    """A GPU with more NVLinks than a GPU of the matrix's NVLink generation has (``NV6``
    to two peers on a V100, whose generation has 6): no such GPU is made (the links' count
    per generation: ``data/links.json``), so the matrix or ``--gpu`` is wrong."""
    known = NVLINK.get(generation or "")
    if known is None:
        return []
    beyond: dict[int, list[str]] = {}  # NVLinks: the GPUs that have them
    for i, name in enumerate(names):
        if (count := nvlinks_of(links, i, switched)) > known.links_per_gpu:
            beyond.setdefault(count, []).append(name)
    return [
        f"{', '.join(gpus)} {'has' if len(gpus) == 1 else 'have'} {count} NVLinks"
        f"{' each' * (len(gpus) > 1)}, more than a GPU of {generation} has "
        f"({known.links_per_gpu}, {known.architecture}): the matrix or the GPU named is wrong"
        for count, gpus in sorted(beyond.items())
    ]


def matrix_problems(
    rows: list[list[str]], header: list[str], names: list[str], links: dict[tuple[int, int], str]
) -> list[str]:
    """What a saved matrix cannot be, each said (``nvidia-smi`` writes none of them): a GPU
    row missing, given twice (the first is read) or short of cells, a cell that is no link
    code (read as unknown), a GPU's own cell not ``X``, a pair whose two cells differ (a
    link is one link both ways), no NVLink (``NV0``) or more NVLinks between two GPUs than
    any GPU has (``MAX_NVLINKS``). ``names``: the GPUs of the header."""
    out = []
    labels = [c[0] for c in rows if c is not header and c[0] in names]
    out += [f"{g} has no row: its links are unknown" for g in names if g not in labels]
    out += [f"{g} has {labels.count(g)} rows: the first is read" for g in dict.fromkeys(labels)
            if labels.count(g) > 1]  # fmt: skip
    for cells in (c for c in rows if c is not header and c[0] in names):
        codes = cells[1 : 1 + len(names)]
        if len(codes) < len(names):
            out.append(
                f"{cells[0]}'s row has {len(codes)} of {len(names)} GPU cells: the rest are unknown"
            )
        odd = [c for c in codes if not _CODE.match(c)]
        if odd:
            out.append(f"{cells[0]}'s row holds {', '.join(odd)}: no link code, read as unknown")
        own = names.index(cells[0])
        if own < len(codes) and codes[own] != "X":
            out.append(f"{cells[0]} to itself is {codes[own]}, not X")
    for (i, j), code in sorted(links.items()):
        back = links.get((j, i))
        if i < j and back is not None and back != code:
            out.append(
                f"{names[i]} to {names[j]} is {code} but {names[j]} to {names[i]} is {back}: "
                "a link is the same both ways"
            )
        count = int(code[2:]) if code.startswith("NV") else 1
        if i < j and not 0 < count <= MAX_NVLINKS:
            out.append(
                f"{names[i]} to {names[j]} is {code}: "
                + ("no NVLink" if count == 0 else f"more NVLinks than any GPU has ({MAX_NVLINKS})")
            )
    return list(dict.fromkeys(out))

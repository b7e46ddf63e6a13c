"""The network collectives cross: links and curves, the time of one collective.

What a step issues (DDP's buckets; FSDP's ``2 t_ag(G) + t_rs(G)``): the advice's
``advice/model/network.py``.
A collective costs the measured time at its size and device count (log-log interpolation
of a ``gpuscale collectives`` sweep) or, without a sweep, the ring model of nccl-tests'
convention ``t = 2(N-1)/N s / busbw + 2(N-1) alpha``, ``busbw`` and ``alpha`` the link's at N
devices (a fully connected mesh's N-1 links, the ring through a topology's first N GPUs:
``Link.on``, ``Link.busbw_at``). Across nodes NCCL builds its rings
through the NICs, so the bottleneck bus bandwidth is ``min(intra busbw, NICs per node x
NIC busbw)`` (one ring over all N ranks), with latency the smaller of the ring's and the
tree's (``2 (log2 nodes alpha_inter + (g-1) alpha_intra)``): NCCL picks the tree for small
messages across nodes. A measured multi-node sweep replaces the model for its own device
count (and its bus bandwidth for other counts). Asked for (``nccl``: the advice's fitted
``nccl_latency`` term), a preset link's collective is costed as NCCL's tuner costs it
(``cost.py``).

A sweep's measured curves, and the link read off them: ``measured.py``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

import numpy as np

from gpuscale.hardware.links import LinkPreset, get_preset, mesh_busbw_gbs
from gpuscale.interconnect import cost
from gpuscale.interconnect.cost import OP_SHARE, ring_factor

if TYPE_CHECKING:
    from gpuscale.interconnect.topology import Ring


def ring_through_nics_gbs(node_gbs: float | None, nics: int, nic_gbs: float) -> float:
    """The bus bandwidth of one ring over several nodes (GB/s): NCCL builds its rings
    through the NICs, so it is the smaller of the node's own link (``node_gbs``; None where
    it is not known: the NICs' sum alone) and the sum of its ``nics`` NICs of ``nic_gbs``
    each. The advice's cost across nodes (``Network``) and the verdict on a sweep across
    nodes (``verdict``) both read it here."""
    if nics < 1:
        raise ValueError(f"NICs per node must be at least 1, got {nics}")
    through_nics = nics * nic_gbs
    return through_nics if node_gbs is None else min(node_gbs, through_nics)


@dataclass(frozen=True, kw_only=True, slots=True)
class Link:
    """A link: bus bandwidth (GB/s, nccl-tests' convention) and the latency of one hop of a
    ring all-reduce (us; 2(N-1) hops on N ranks); ``mesh_links``: a fully connected mesh's
    links per GPU, over which ``busbw_gbs`` is reached (``busbw_at``), None for a link
    whose every count gets ``busbw_gbs``; ``within``: (devices, link) where fewer devices
    of one node run over another link (the ring through a topology's first n GPUs:
    ``Topology.first_rings``), each count's link class and figures its own (``on``)."""

    busbw_gbs: float
    latency_us: float
    name: str = "custom"
    mesh_links: int | None = None
    within: tuple[tuple[int, Link], ...] = ()

    def __post_init__(self) -> None:
        if not (self.busbw_gbs > 0 and math.isfinite(self.busbw_gbs)):
            raise ValueError(f"bus bandwidth must be positive, got {self.busbw_gbs} GB/s")
        if not (self.latency_us >= 0 and math.isfinite(self.latency_us)):
            raise ValueError(f"latency must be >= 0, got {self.latency_us} us")

    @classmethod
    def from_preset(cls, name: str) -> Link:
        """A preset of ``gpuscale.hardware.links`` (``ValueError`` lists them)."""
        try:
            preset = get_preset(name)
        except KeyError as exc:
            raise ValueError(exc.args[0]) from None
        return cls.of(preset)

    @classmethod
    def of(cls, preset: LinkPreset) -> Link:
        """A preset's bus bandwidth, latency per ring hop and name."""
        return cls(
            busbw_gbs=preset.busbw_gbs,
            latency_us=preset.hop_latency_us,
            name=preset.name,
            mesh_links=preset.mesh_links,
        )

    def with_rings(self, rings: Iterable[Ring], name: Callable[[str], str]) -> Link:
        """This link, fewer devices of one node on ``rings`` (``Topology.first_rings``) where
        their preset and figure are known: each its preset's link at its bus bandwidth, named
        ``name(preset)``; the others on this one."""
        within = tuple(
            (
                len(r.gpus),
                replace(Link.from_preset(r.preset), busbw_gbs=r.busbw_gbs, name=name(r.preset)),
            )
            for r in rings
            if r.preset is not None and r.busbw_gbs is not None
        )
        return replace(self, within=within)

    def on(self, ranks: int) -> Link:
        """The link ``ranks`` devices of one node run over: ``within``'s, else this one."""
        return next((link for n, link in self.within if n == ranks), self)

    def busbw_at(self, ranks: int) -> float:
        """The bus bandwidth (GB/s) ``ranks`` devices of one node reach over this link (the
        one they run over, ``on``): on a mesh the links ``ranks - 1`` peers use
        (``links.mesh_busbw_gbs``), else ``busbw_gbs``."""
        link = self.on(ranks)
        return mesh_busbw_gbs(link.busbw_gbs, link.mesh_links, ranks)

    def figures_at(self, counts: Iterable[int]) -> tuple[tuple[int, float], ...]:
        """A mesh's bus bandwidth (GB/s, ``busbw_at``) on each of ``counts`` devices of one
        node, 2 or more: ``((2, 45.57), (4, 136.71), (8, 318.98))`` for 8 x MI300X; none on
        a link of one figure at every count (``mesh_links`` None)."""
        if self.mesh_links is None:
            return ()
        return tuple((n, self.busbw_at(n)) for n in counts if n >= 2)

    def busbw_over(self, counts: Iterable[int]) -> float:
        """The bus bandwidth (GB/s) at the most devices of ``counts`` of one node: a mesh's
        figure there (``figures_at``; 136.7 over 1, 2 and 4 MI300X), else ``busbw_gbs``."""
        return max((g for _, g in self.figures_at(counts)), default=self.busbw_gbs)

    @property
    def nccl_hardware(self) -> str | None:
        """NCCL's hardware class (``cost.hardware_of``), None for a custom or measured link."""
        return cost.hardware_of(self.name)


@dataclass(frozen=True, slots=True)
class CommCurve:
    """A measured collective: time (s) at each size (bytes) on ``ranks`` ranks."""

    op: str
    ranks: int
    sizes: tuple[float, ...]
    times_s: tuple[float, ...]

    def time_s(self, size_bytes: float) -> float:
        """Log-log interpolation inside the sweep; below it the smallest size's time,
        above it the largest's plus the rest at the largest size's bandwidth."""
        if size_bytes <= 0:
            return 0.0
        sizes, times = np.asarray(self.sizes), np.asarray(self.times_s)
        if size_bytes <= sizes[0]:
            return float(times[0])
        if size_bytes >= sizes[-1]:
            return float(times[-1] * size_bytes / sizes[-1])
        return float(np.exp(np.interp(np.log(size_bytes), np.log(sizes), np.log(times))))


def searched_counts(most: int, per_node: int | None = None) -> list[int]:
    """The device counts searched up to ``most``: 1, 2, 4, ... and ``most``; past one node
    of ``per_node`` devices only whole nodes: one, its doublings (nodes of 6 search 6, 12
    and 24, which no power of two of devices is) and the most whole nodes within ``most``
    (18 of at most 20)."""
    counts, n = [], 1
    while n < most:
        counts.append(n)
        n *= 2
    counts.append(most)
    if per_node:
        nodes = [per_node * 2**k for k in range(most.bit_length()) if per_node * 2**k <= most]
        kept = {c for c in counts if c <= per_node or c % per_node == 0}
        top = most // per_node * per_node  # the most whole nodes allowed
        counts = sorted(kept.union(nodes, [top] if top >= per_node else []))
    return counts


@dataclass(frozen=True, kw_only=True, slots=True)
class Network:
    """Where gradients travel: the link inside a node, optionally nodes of ``per_node``
    devices joined by ``nics_per_node`` NICs of the ``inter`` link, and measured curves
    (which win where they exist). ``comm_scale`` multiplies every time: the measured
    communication inside DDP over the curve's (contention with compute), 1 when unknown."""

    intra: Link
    per_node: int | None = None
    inter: Link | None = None
    nics_per_node: int | None = None
    curves: tuple[CommCurve, ...] = ()
    comm_scale: float = 1.0
    nodes_given: bool = False  # the nodes the machine has (--nodes), not a search's spill
    # each GPU's way to its node's NICs where a node holds one GPU (``links.nic_path``): the
    # link inside a node then carries no collective
    nic_path: Link | None = None

    def __post_init__(self) -> None:
        if not (self.comm_scale > 0 and math.isfinite(self.comm_scale)):
            raise ValueError(f"communication scale must be positive, got {self.comm_scale}")
        if self.per_node is not None and self.per_node < 1:
            raise ValueError("devices per node must be >= 1")

    def scaled(self, comm_scale: float | None) -> Network:
        """This network with every communication time multiplied by ``comm_scale`` (the
        communication a bench measured over this network's prediction); unchanged where
        it is unknown (None) or not a positive finite number."""
        if comm_scale is None or not math.isfinite(comm_scale) or comm_scale <= 0:
            return self
        return replace(self, comm_scale=comm_scale)

    @property
    def name(self) -> str:
        if self.inter is None or not self.per_node:
            return self.intra.name
        return f"{self.node_link.name} x {self.per_node}, {self.inter.name} between nodes"

    @property
    def node_link(self) -> Link:
        """The link a node's ``per_node`` devices run over (``Link.on``: a topology's ring
        of its first GPUs), else the link inside a node; a node of one GPU: its way to the
        NICs (``nic_path``), where one is set."""
        if self.per_node == 1 and self.nic_path is not None:
            return self.nic_path
        return self.intra.on(self.per_node) if self.per_node else self.intra

    def spans_nodes(self, n: int) -> bool:
        return bool(self.inter is not None and self.per_node and n > self.per_node)

    def inside_curves(self) -> list[CommCurve]:
        """Its measured all-reduce curves within one node (``measured.network_from_collectives``
        fits the link inside a node to them, and names it as measured)."""
        return [c for c in self.curves if c.op == "all_reduce" and not self.spans_nodes(c.ranks)]

    def counts_up_to(self, most: int) -> list[int]:
        """The device counts searched up to ``most`` (:func:`searched_counts`), nodes of
        ``per_node`` devices where a link joins them."""
        return searched_counts(most, self.per_node if self.inter is not None else None)

    def name_over(self, counts: Iterable[int]) -> str:
        """``name``, with the link between nodes only where a count of ``counts`` spans
        nodes (``--max-devices 12`` of 8 per node names the link between nodes; a search
        of 1 to 8 devices on one node does not)."""
        return self.name if any(self.spans_nodes(n) for n in counts) else self.intra.name

    def _curve(self, op: str, n: int) -> tuple[CommCurve, bool] | None:
        """The curve measured at ``n`` ranks (exact), else the nearest one on the same
        side of the node boundary (converted by ring factors)."""
        same = [
            c
            for c in self.curves
            if c.op == op and self.spans_nodes(c.ranks) == self.spans_nodes(n)
        ]
        if not same:
            return None
        best = min(same, key=lambda c: (abs(math.log(c.ranks / n)), -c.ranks))
        return best, best.ranks == n

    def time_s(
        self, size_bytes: float, n: int, op: str = "all_reduce", *, nccl: bool = False
    ) -> float:
        """One collective of ``size_bytes`` on ``n`` devices (seconds); ``nccl``: preset
        links costed as NCCL's tuner costs them (``_nccl``), else by the ring's alpha-beta."""
        if n < 2 or size_bytes <= 0:
            return 0.0
        return self._timed(size_bytes, n, op, nccl)[0]

    def cost_s(
        self, size_bytes: float, n: int, op: str = "all_reduce", *, nccl: bool = False
    ) -> tuple[float, float]:
        """One collective of ``size_bytes`` on ``n`` devices (seconds, ``time_s``): its time
        and its latency part, NCCL's choice's latency where NCCL costs the link and no curve
        was measured, else a collective of one byte's time."""
        if n < 2 or size_bytes <= 0:
            return 0.0, 0.0
        (time_s, chosen), (one_byte_s, _) = [self._timed(s, n, op, nccl) for s in (size_bytes, 1.0)]
        if chosen is not None and not self.curves:
            return time_s, chosen.latency_s * self.comm_scale
        return time_s, one_byte_s

    def _timed(
        self, size_bytes: float, n: int, op: str, nccl: bool
    ) -> tuple[float, cost.Choice | None]:
        """(time, NCCL's choice where it gave the time) of one collective on ``n`` >= 2
        devices: the curve measured nearest, else NCCL's model where asked (``nccl``) and it
        costs the links (``_nccl``), else the ring's alpha-beta (``_modelled_s``)."""
        found = self._curve(op, n)
        if found is not None:
            curve, exact = found
            t = curve.time_s(size_bytes)
            if not exact:
                t *= ring_factor(n) / ring_factor(curve.ranks)
            return t * self.comm_scale, None
        chosen = self._nccl(size_bytes, n, op) if nccl else None
        if chosen is None:
            return self._modelled_s(size_bytes, n, op) * self.comm_scale, None
        return chosen.time_s * self.comm_scale, chosen

    def _modelled_s(self, size_bytes: float, n: int, op: str) -> float:
        """The alpha-beta time (the module's docstring): the node's link's ring inside a
        node; across nodes a ring through the NICs, its latency the ring's or the tree's,
        the smaller."""
        share = OP_SHARE[op]
        if not self.spans_nodes(n):
            link = self.intra.on(n)
            bandwidth = ring_factor(n) * size_bytes / (link.busbw_at(n) * 1e9)
            return share * (bandwidth + 2 * (n - 1) * link.latency_us * 1e-6)
        assert self.inter is not None and self.per_node
        nodes = math.ceil(n / self.per_node)
        hop = self.node_link.latency_us  # as the bandwidth through the NICs reads the node
        ring_lat = 2 * (nodes - 1) * self.inter.latency_us + 2 * (n - nodes) * hop
        tree_lat = 2 * (math.log2(nodes) * self.inter.latency_us + (self.per_node - 1) * hop)
        bandwidth = ring_factor(n) * size_bytes / (self._busbw_across() * 1e9)
        return share * (bandwidth + min(ring_lat, tree_lat) * 1e-6)

    def _busbw_across(self) -> float:
        """A ring through the NICs (:func:`ring_through_nics_gbs`), one NIC per device
        where ``nics_per_node`` is not given; the node's own link at its ``per_node``
        devices (``Link.busbw_at``), a node of one GPU's way to the NICs."""
        assert self.inter is not None and self.per_node
        nics = self.nics_per_node or self.per_node
        node_gbs = self.intra.busbw_at(self.per_node)
        if self.per_node == 1 and self.nic_path is not None:
            node_gbs = self.nic_path.busbw_gbs
        return ring_through_nics_gbs(node_gbs, nics, self.inter.busbw_gbs)

    def _nccl(self, size_bytes: float, n: int, op: str) -> cost.Choice | None:
        """NCCL's choice for one collective where NCCL's model costs the links it crosses
        (``Link.nccl_hardware``, of the link the node's devices run over): inside a node a
        link of a node's hardware; across nodes an NVLink or PCI node joined by a network."""
        node = self.node_link if self.spans_nodes(n) else self.intra.on(min(n, self.per_node or n))
        hardware, busbw_gbs, nodes = node.nccl_hardware, self.intra.busbw_at(n), 1
        costed = hardware not in (None, "net")
        if self.spans_nodes(n):
            assert self.inter is not None and self.per_node
            costed = hardware in ("nvlink", "pci") and self.inter.nccl_hardware == "net"
            busbw_gbs, nodes = self._busbw_across(), math.ceil(n / self.per_node)
        if not costed or hardware is None:
            return None
        return cost.collective(op, size_bytes, n, busbw_gbs, hardware, nodes)

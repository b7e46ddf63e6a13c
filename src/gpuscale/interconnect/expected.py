"""What a collectives sweep should reach: the bus bandwidth its verdict (``verdict``)
reads the peak against, and the words saying what that figure is.

A named preset (``gpuscale.hardware.links``), else the link of the ring NCCL builds through
the GPUs the sweep ran on (``Topology.ring_of``, by the rules of ``Topology.ring_link`` and
``Topology.expected_busbw_gbs``: the slowest pair's where every ring crosses it); none for
CPU processes (gloo over host memory, whatever was asked), nor for a network preset on one
node (no network was crossed). On one node torchrun's local rank k takes visible device k,
so n ranks run on the first n GPUs ``CUDA_VISIBLE_DEVICES`` names (the sweep header's
``visible_devices``), else GPUs 0..n-1 (:func:`sweep_gpus`): 2 ranks of a DGX-1 V100 on
GPUs 0-1 share one NVLink (20 GB/s), not the 8 GPUs' ring of 6 a GPU (120 GB/s).

Across nodes, a network preset is one NIC's figure (``ib-ndr400``: 48 GB/s), not the
sweep's: NCCL builds its rings through the NICs, so the sweep should reach what the advice
costs the network with (``network.ring_through_nics_gbs``), the smaller of the node's own
link and its NICs' sum. Devices per node: the header's ranks over its nodes; NICs per node
one per device unless given (the words say which); the node's own link the topology's, else
the usual link of the GPU the header names (``device_name``), else unknown: the NICs' sum
alone, said so. A mesh preset's figure (xGMI of 8 x MI300X) is its figure on the sweep's
devices per node, the links they use (``LinkPreset.busbw_at``), not the whole node's.
NCCL's maintainers measure the ring through the NICs: 192 GB/s across DGX A100 nodes of 8
HDR 200 Gb/s NICs (8 x 24; NVIDIA/nccl#812), 46-48 GB/s per NDR 400 Gb/s NIC
(NVIDIA/nccl-tests#290; 8 a node: 368-384, bounded by the H100 node's NVLink ring, 370.8).
One NIC's 48 GB/s on such nodes is 13% of it. A sweep across nodes judged against a GPU
link only is said to be judged against the node's own link, an upper bound.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from gpuscale.hardware.device_names import lookup
from gpuscale.hardware.links import PRESETS, LinkPreset, usual_preset
from gpuscale.interconnect.network import ring_through_nics_gbs
from gpuscale.interconnect.topology import Ring, Topology
from gpuscale.quantities import number
from gpuscale.tables.json_depth import JSON

# A sweep's header row as written (``gpuscale collectives``): backend, device, nodes, settings.
Header = Mapping[str, JSON]


def nodes_of(header: Header) -> int:
    """The nodes a sweep's header says it ran on (1 where unsaid)."""
    nodes = header.get("nodes")
    return nodes if isinstance(nodes, int) and nodes > 1 else 1


def per_node(ranks: int, nodes: int) -> int:
    """Devices per node of ``ranks`` ranks over ``nodes`` nodes (torchrun starts as many
    processes on each)."""
    return max(1, ranks // nodes)


def first_gpus(topology: Topology | None, ranks: int) -> tuple[int, ...]:
    """GPUs 0..ranks-1 of ``topology`` (every one where the ranks are as many or more; none
    without a topology): those ``ranks`` local ranks take where nothing says which GPUs were
    visible (torchrun's local rank k takes visible device k)."""
    count = len(topology.gpus) if topology is not None else 0
    return tuple(range(min(ranks, count)))


def sweep_gpus(header: Header, topology: Topology, ranks: int) -> tuple[int, ...]:
    """The indices of ``topology``'s GPUs a one-node sweep of ``ranks`` ranks ran on, in
    rank order: the first ``ranks`` names of ``CUDA_VISIBLE_DEVICES`` as the header
    recorded it (``visible_devices``; an index of the node's GPUs, or a UUID the topology
    knows), else GPUs 0..ranks-1 (a sweep that recorded none, or names this topology does
    not hold); every GPU where the ranks are as many or more, or fewer than two."""
    count = len(topology.gpus)
    if not 2 <= ranks < count:
        return tuple(range(count))
    first = first_gpus(topology, ranks)
    visible = header.get("visible_devices")
    if not isinstance(visible, str):
        return first
    uuids = {g.uuid: i for i, g in enumerate(topology.gpus) if g.uuid}
    names = [name.strip() for name in visible.split(",")][:ranks]
    gpus = tuple(int(x) if x.isdigit() else uuids.get(x, count) for x in names)
    if len(set(gpus)) < ranks or max(gpus) >= count:
        return first
    return gpus


def sweep_ring(
    header: Header,
    topology: Topology | None,
    preset: str | None,
    ranks: int,
    gpus: Sequence[int] | None = None,
) -> Ring | None:
    """The ring the expected figure is of: that through ``gpus`` (default
    :func:`sweep_gpus`) on one node judged against the topology; None where a preset, CPU
    processes or several nodes set it (the module's docstring) or there is no topology."""
    if topology is None or preset or header.get("device") == "cpu" or nodes_of(header) > 1:
        return None
    return topology.ring_of(sweep_gpus(header, topology, ranks) if gpus is None else gpus)


def expected_busbw(
    header: Header,
    topology: Topology | None,
    preset: str | None,
    ranks: int,
    nics_per_node: int | None,
    gpus: Sequence[int] | None = None,
) -> tuple[float | None, str]:
    """The bus bandwidth (GB/s) a sweep with ``header`` on ``ranks`` ranks should reach
    and the words saying what it is (the module's docstring); None where no figure is a
    test of it, the words then saying why. ``gpus``: the topology's GPUs the ranks ran on
    (one node; default :func:`sweep_gpus`)."""
    asked = ""  # what a figure asked for links, said where it is no test of this sweep
    if preset:
        asked = f"; {preset} is {PRESETS[preset].kind_words}, not judged against"
    elif topology is not None:
        asked = "; the saved topology's GPU links are not judged against"
    if header.get("device") == "cpu":  # a link's figure, even one asked for, is no test
        return None, f"CPU processes: no reference figure applies (gloo over host memory){asked}"
    nodes = nodes_of(header)
    if preset and PRESETS[preset].kind == "network":
        if nodes < 2:
            return None, f"one node: no network between nodes was crossed{asked}"
        return _through_nics(header, topology, PRESETS[preset], nodes, ranks, nics_per_node)
    expected: float | None
    if preset:
        p = PRESETS[preset]
        devices = per_node(ranks, nodes)
        expected, reference = p.busbw_at(devices), f"{p.name} ({p.description}){_mesh(p, devices)}"
    elif topology is not None and (ring := sweep_ring(header, topology, None, ranks, gpus)):
        if not ring.busbw_gbs:  # read, but no figure: the matrix's problems, else the GPU
            why = "; ".join(topology.problems) or "its NVLink generation is not known (--gpu)"
            return (
                None,
                f"the topology read gives the ring no bandwidth: {why}; pass --interconnect",
            )
        expected, reference = ring.busbw_gbs, ring_words(topology.within(ring.gpus), _SLOWEST)
        whole = (topology.preset(), topology.expected_busbw_gbs())
        if (ring.preset, ring.busbw_gbs) != whole:  # a few GPUs whose ring is not the node's
            node = "no figure" if whole[1] is None else f"{number(whole[1])} GB/s"
            reference = (
                f"GPUs {gpu_span(ring.gpus)}'s ring ({reference}), not the ring of the "
                f"node's {len(topology.gpus)} GPUs ({whole[0] or 'unknown link'}, {node})"
            )
    elif topology is not None and topology.expected_busbw_gbs():
        expected = topology.expected_busbw_gbs()
        reference = ring_words(topology, _SLOWEST)
    else:
        return None, "the link was not detected: pass --interconnect or --topo-file"
    if nodes > 1:  # the network between the nodes can only lower it
        reference += (
            f"; across {nodes} nodes the network was not given (a network preset: "
            "--interconnect ib-ndr400, say), so the node's own link only, an upper bound"
        )
    return expected, reference


_SLOWEST = "the slowest link between these GPUs"


def gpu_span(gpus: Sequence[int]) -> str:
    """GPUs by index as a person writes them: ``0-3`` for a run upwards, else ``3,1``."""
    if len(gpus) > 1 and list(gpus) == list(range(gpus[0], gpus[0] + len(gpus))):
        return f"{gpus[0]}-{gpus[-1]}"
    return ",".join(map(str, gpus))


def ring_words(topology: Topology, slowest: str) -> str:
    """The link a topology's all-reduce ring runs over, named: its preset, and ``slowest``
    where the slowest pair is that link, else the ring and the slowest pair it avoids
    (``Topology.ring_link``)."""
    ring = topology.ring_link()
    name = topology.preset() or ring or "this link"
    if ring == topology.slowest_link():
        return f"{name}, {slowest}"
    return (
        f"{name}, the link of the ring NCCL builds through these GPUs "
        f"(their slowest pair, {topology.slowest_link()}, is off the ring)"
    )


def _mesh(preset: LinkPreset, devices: int) -> str:
    """The words of a mesh's figure on ``devices`` GPUs of a node where it is not the
    preset's (``LinkPreset.busbw_at``: 2 of 8 MI300X use 1 of 7 links, 45.6 GB/s, not the
    8's 319); empty elsewhere."""
    links = preset.mesh_links
    if links is None or preset.busbw_at(devices) == preset.busbw_gbs:
        return ""
    used = min(devices - 1, links)
    return (
        f"; on {devices} GPUs of a node each uses {used} of its {links} mesh links: "
        f"{number(preset.busbw_at(devices))} GB/s"
    )


def _node_link(header: Header, topology: Topology | None, devices: int) -> tuple[float, str] | None:
    """The bus bandwidth of a node's own link on its ``devices`` and its words: the
    topology's ring link where it tells one, else the usual link of the GPU the sweep's
    header names (``device_name``, ``gpuscale.hardware.links.usual_preset``); None where
    neither does."""
    if topology is not None and (gbs := topology.expected_busbw_gbs()):
        return gbs, ring_words(topology, "the topology's slowest link")
    named = header.get("device_name")
    part = lookup(named) if isinstance(named, str) else None
    if part is None:
        return None
    preset = usual_preset(part)
    usual = PRESETS[preset]
    words = f"{preset}, the usual link of the {part.name}{_mesh(usual, devices)}"
    return usual.busbw_at(devices), words


def _through_nics(
    header: Header,
    topology: Topology | None,
    network: LinkPreset,
    nodes: int,
    ranks: int,
    nics_per_node: int | None,
) -> tuple[float, str]:
    """What a sweep across nodes should reach over the ``network`` preset: the advice's
    ring through the NICs (``network.ring_through_nics_gbs``), with the words saying what
    it assumed."""
    devices = per_node(ranks, nodes)
    nics = nics_per_node or devices
    node = _node_link(header, topology, devices)
    expected = ring_through_nics_gbs(node[0] if node else None, nics, network.busbw_gbs)
    nic_sum = f"{nics} x {number(network.busbw_gbs)} = {number(nics * network.busbw_gbs)} GB/s"
    assumed = "" if nics_per_node else " (one per device, assumed)"
    said = (
        f"{network.name} between {nodes} nodes of {devices} devices, {nics} "
        f"NIC{'s' if nics > 1 else ''} a node{assumed}: a ring through the NICs, "
    )
    if node is None:
        return expected, said + (
            f"the NICs' sum ({nic_sum}) alone: the node's own link is not known (no "
            "topology, and the sweep names no GPU of the catalogue)"
        )
    return expected, said + (
        f"the smaller of the node's own link ({node[1]}: {number(node[0])} GB/s) and the "
        f"NICs' sum ({nic_sum})"
    )

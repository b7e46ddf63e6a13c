"""The network an advice rests on (links inside and between nodes, measured curves),
the device count it allows, and a sentence on where each came from: the first
:class:`~gpuscale.advice.basis.Basis`, before the model's."""

from __future__ import annotations

from dataclasses import replace

from gpuscale.advice.basis import DEFAULT_LINK, Basis
from gpuscale.advice.collectives import MeasuredCurves, network_from_collectives
from gpuscale.advice.limits import topology_cap
from gpuscale.advice.network import Link, Network
from gpuscale.advice.request import DEFAULT_INTER_NODE, DEFAULT_LATENCY_US, AdviceRequest
from gpuscale.hardware.device_names import lookup
from gpuscale.hardware.links import PRESETS
from gpuscale.interconnect.topology import Topology
from gpuscale.quantities import counted, number


def given_link(request: AdviceRequest) -> Link | str | None:
    """The link the request gives: a custom one (``busbw_gbs``, ``latency_us``), else
    a preset's name, else None."""
    if request.busbw_gbs is not None:
        latency = DEFAULT_LATENCY_US if request.latency_us is None else request.latency_us
        return Link(busbw_gbs=request.busbw_gbs, latency_us=latency, name="custom")
    return request.interconnect


def choose_link(
    link: str | Link | None, topology: Topology | None, device_name: str | None = None
) -> tuple[Link, str]:
    """The intra-node link and a sentence saying where it came from: given, else the
    detected topology's slowest pair (its expected bus bandwidth), else the NVLink of the
    device named (read as its SXM board, as its peak is), else ``pcie-phb``."""
    if isinstance(link, Link):
        return link, f"Link: {link.name} as given ({number(link.busbw_gbs)} GB/s bus bandwidth)."
    if link is not None:
        chosen = Link.from_preset(link)
        return chosen, f"Link: preset {chosen.name} ({number(chosen.busbw_gbs)} GB/s) as given."
    preset = topology.preset() if topology is not None else None
    if topology is not None and preset is not None:
        chosen = Link.from_preset(preset)
        expected = topology.expected_busbw_gbs()
        if expected:
            chosen = replace(chosen, busbw_gbs=expected, name=f"{preset} (detected)")
        return chosen, (
            f"Link: {chosen.name}, the slowest GPU pair of the detected topology "
            f"({topology.slowest_link()}), expected {number(chosen.busbw_gbs)} GB/s."
        )
    board = _nvlink_board(device_name)
    if board is not None:  # the link of the board whose peak the advice checks against
        chosen = Link.from_preset(board)
        return chosen, (
            f"Link: no link given and none detected; assumed {board} "
            f"({number(chosen.busbw_gbs)} GB/s), the NVLink of {device_name} as an SXM "
            "board (the board whose peak the advice reads): give --interconnect pcie-phb "
            "for PCIe cards, or --interconnect or --collectives for another."
        )
    chosen = Link.from_preset(DEFAULT_LINK)
    return chosen, (
        f"Link: no link given and none detected; assumed {DEFAULT_LINK} "
        f"({number(chosen.busbw_gbs)} GB/s): give --interconnect or --collectives."
    )


def _nvlink_board(device_name: str | None) -> str | None:
    """The NVLink preset of a device the catalogue reads as a board on an NVLink baseboard
    (``H100``: the SXM5 part), None for PCIe and NVL cards (an NVLink bridge is no given)
    and devices without NVLink or unknown."""
    part = lookup(device_name)
    return part.nvlink if part is not None and part.board and part.nvlink in PRESETS else None


def network_basis(
    req: AdviceRequest, topology: Topology | None, curves: MeasuredCurves | None
) -> Basis:
    """The network (links inside and between nodes, measured curves) and the device
    count it allows, with a sentence on where each came from."""
    given = given_link(req)
    intra, link_note = choose_link(given, topology, req.device_name)
    nodes = req.nodes
    spill = ""
    if req.max_devices and req.max_devices > req.gpus_per_node * nodes:
        # more devices than the nodes hold: the rest are other nodes, never one node of 16
        # GPUs on NVLink (a user walk: --max-devices 16 modelled 16 GPUs inside one node)
        nodes = -(-req.max_devices // req.gpus_per_node)
        # past one node only whole nodes are searched (``AdviceInputs.device_counts``):
        # the most nodes a count searched spans (12 of 8 per node spanned none, said 2)
        whole = req.max_devices // req.gpus_per_node
        spans = (
            f"counts above {req.gpus_per_node} span up to {whole} whole nodes"
            if whole >= 2
            else f"no count above {req.gpus_per_node} is searched, as past one node only "
            f"whole nodes are (--max-devices {2 * req.gpus_per_node} searches two)"
        )
        spill = (
            f"Nodes: --max-devices {req.max_devices} is more than {counted(req.nodes, 'node')} of "
            f"{req.gpus_per_node} devices hold: {spans} (give --nodes and --gpus-per-node "
            "to say otherwise)."
        )
    network = Network(
        intra=intra,
        per_node=req.gpus_per_node if nodes > 1 else None,
        inter=Link.from_preset(req.inter_node or DEFAULT_INTER_NODE) if nodes > 1 else None,
        nics_per_node=req.nics_per_node,
    )
    sources = [link_note, *([spill] if spill else [])]
    max_devices, note = topology_cap(
        topology, nodes, req.max_devices or (req.gpus_per_node * nodes)
    )
    if note:
        sources.append(note)
    if curves is not None:
        network = network_from_collectives(curves, network)
        ranks = sorted({c.ranks for c in network.curves})
        sources[0] = (
            f"Link: the curves measured in {curves.source} on "
            f"{', '.join(map(str, ranks))} ranks; other counts from "
            f"{number(network.intra.busbw_gbs)} GB/s bus bandwidth, "
            f"{number(network.intra.latency_us)} us latency fitted to them (a latency plus "
            "bytes over a bandwidth: the bandwidth is the curves' limit at large messages, "
            "which the messages measured may not reach)."
        )  # a link given beside them is refused (``advice.conflicts``)
    # the link between nodes only where a count searched spans nodes (12 of 8 per node
    # searched none past one node, and named it)
    if any(network.spans_nodes(n) for n in network.counts_up_to(max_devices)):
        sources.append(
            f"Between nodes: {network.inter.name} x {req.nics_per_node or req.gpus_per_node} "
            "NICs per node, NCCL's ring over all ranks through the slowest level."
        )
    assumed = given is None and curves is None
    detected = topology.preset() if assumed and topology is not None else None
    return Basis(
        network=network,
        max_devices=max_devices,
        sources=tuple(sources),
        link_assumed=assumed and detected is None,
        # a topology read from --topo was asked for; one passed or detected here was not
        link_detected=detected if req.topo is None else None,
    )

"""The network an advice rests on (links inside and between nodes, measured curves), the
device count it allows, and a finding on where each came from: the first
:class:`~gpuscale.advice.calibration.Machine` and its
:class:`~gpuscale.advice.calibration.Said`, before the model (the bench host's, after it:
``bench_basis``).

The device is resolved here, beside the link that may imply it, into the record
``model.hardware`` reads (:func:`device_record`: named, recorded by a bench, or the link's);
each link's preset is looked up once (``hardware.links``) and the link built from it.
"""

from __future__ import annotations

from dataclasses import replace

from gpuscale.advice.calibration import Machine, Said
from gpuscale.advice.model.hardware import DeviceRecord
from gpuscale.advice.model.wording import phrase
from gpuscale.advice.request import AdviceRequest
from gpuscale.advice.request_fields import DEFAULT_INTER_NODE, DEFAULT_LATENCY_US
from gpuscale.advice.types import Finding, maybe
from gpuscale.advice.types import FindingKind as K
from gpuscale.hardware.device_names import UnknownDevice, resolve
from gpuscale.hardware.links import (
    GPU_FABRICS,
    LINK_DEVICE,
    board_link,
    get_preset,
    own_link,
    usual_preset,
)
from gpuscale.hardware.peaks import peak_of
from gpuscale.interconnect.measured import MeasuredCurves, network_from_collectives
from gpuscale.interconnect.network import Link, Network
from gpuscale.interconnect.topology import Topology

# The link assumed where none is given, detected or measured.
DEFAULT_LINK = "pcie-phb"
# What a measured link's name adds by whether its curves were measured under compute load
LOADED = {True: ", under compute load", False: ""}


def implied_device(link_name: str) -> str | None:
    """The device a link preset's name implies, whatever its case (``nvlink4``,
    ``NVLINK4``, ``nvlink4 (detected)`` -> H100 SXM), else None."""
    name = link_name.strip().lower()
    for prefix, device in LINK_DEVICE.items():
        if name.startswith(prefix):
            return device
    return None


def device_record(name: str | None, implied_by: str | None = None) -> DeviceRecord:
    """The record of the device ``name`` (as named, or recorded by a bench); with none
    named, of the device the link preset ``implied_by`` implies (:func:`implied_device`);
    an empty record where neither gives a device."""
    if not name and implied_by:
        name = implied_device(implied_by)
    if not name or not name.strip():
        return DeviceRecord(name)
    try:
        found = resolve(name)
    except UnknownDevice as unknown:
        return DeviceRecord(name, closest=tuple(unknown.closest))
    peak = peak_of(found.device)
    at = {p: peak.tflops(p) for p in ("bf16", "fp16", "fp32")} | {"tf32": peak.tflops("fp32", True)}
    return DeviceRecord(name, found.device, peak, found.assumed, peaks_tflops=tuple(at.items()))


def measured_network(curves: MeasuredCurves, base: Network) -> Network:
    """``base`` with a sweep's curves (``network_from_collectives``), the link read off them
    named as sentences read it: "... on the link measured in c.jsonl (2 ranks)"."""

    def name(ranks: int) -> str:
        loaded = LOADED[curves.under_load]
        return phrase("link_measured_in", source=curves.source, ranks=ranks, loaded=loaded)

    return network_from_collectives(curves, base, name)


def given_link(request: AdviceRequest) -> Link | str | None:
    """The link the request gives: a custom one (``busbw_gbs``, ``latency_us``), else
    a preset's name, else None."""
    if request.busbw_gbs is not None:
        latency = DEFAULT_LATENCY_US if request.latency_us is None else request.latency_us
        return Link(busbw_gbs=request.busbw_gbs, latency_us=latency, name="custom")
    return request.interconnect


def choose_link(
    link: str | Link | None,
    topology: Topology | None,
    device_name: str | None = None,
    measured: bool = False,
) -> tuple[Link, Finding, DeviceRecord]:
    """The intra-node link, the finding of where it came from, and the device's record
    (:func:`device_record`, resolved here once): the link given, else the detected topology's
    slowest pair (its expected bus bandwidth), else the fabric of the device named (read as
    its board, as its peak is: an H100's NVLink, an MI300X's Infinity Fabric), else
    ``pcie-phb``; the device named, else the one the preset given or detected implies (a
    custom link, or one ``measured`` by collectives, implies none). The preset's name
    first, then its numbers."""
    detected = maybe(Topology.preset, topology)
    preset = None if isinstance(link, Link) else link or detected
    device = device_record(device_name, None if measured else preset)
    if isinstance(link, Link):
        said = Finding.of(K.LINK_CUSTOM, name=link.name, busbw_gbs=link.busbw_gbs)
        return link, said, device
    board = device.board_link if preset is None else None
    # the preset looked up once, here (the request's name was checked when it was made)
    found = get_preset(preset or board or DEFAULT_LINK)
    chosen = Link(busbw_gbs=found.busbw_gbs, latency_us=found.hop_latency_us, name=found.name)
    if link is not None:
        said = Finding.of(K.LINK_PRESET, name=chosen.name, busbw_gbs=chosen.busbw_gbs)
        return chosen, said, device
    if topology is not None and detected is not None:
        expected = topology.expected_busbw_gbs()
        if expected:
            chosen = replace(chosen, busbw_gbs=expected, name=f"{detected} (detected)")
        pair = topology.slowest_link()
        said = Finding.of(K.LINK_DETECTED, name=chosen.name, pair=pair, busbw_gbs=chosen.busbw_gbs)
        return chosen, said, device
    if board is not None:  # the link of the board whose peak the advice checks against
        said = Finding.of(
            K.LINK_OF_BOARD, name=board, busbw_gbs=chosen.busbw_gbs, device=device_name
        )
        return chosen, said, device
    return chosen, Finding.of(K.LINK_DEFAULT, name=DEFAULT_LINK, busbw_gbs=chosen.busbw_gbs), device


def link_not_of_device(preset: str | None, device: DeviceRecord) -> Finding | None:
    """A finding where ``preset``, an NVLink or xGMI given, is not the link of the part named
    (an RTX 4090 has none, an MI300X has Infinity Fabric, an A40 a 2-GPU bridge): the
    predictions take it as given, the answer says so first; None otherwise."""
    part = device.part
    if part is None or not (preset or "").startswith(GPU_FABRICS) or preset == own_link(part):
        return None
    its = f"its GPU link: {part.gpu_link}" if part.gpu_link else "no NVLink"
    # a board whose fabric no preset models: no PCIe preset stands for it
    usual = None if part.board and part.gpu_link and not board_link(part) else usual_preset(part)
    return Finding.of(K.LINK_NOT_OF_DEVICE, given=preset, device=part.name, its=its, usual=usual)


def topology_cap(
    topology: Topology | None, nodes: int, max_devices: int
) -> tuple[int, Finding | None]:
    """The largest device count the topology allows on one node, and a finding when it
    caps ``max_devices`` (a one-GPU topology: nothing to compare)."""
    if topology is None or nodes > 1:
        return max_devices, None
    gpus = len(topology.gpus)
    if gpus <= 1:
        return 1, Finding.of(K.ONE_GPU)
    if max_devices > gpus:
        return gpus, Finding.of(K.TOPOLOGY_CAP, gpus=gpus, asked=max_devices)
    return max_devices, None


def machine_of(
    req: AdviceRequest, topology: Topology | None, curves: MeasuredCurves | None
) -> tuple[Machine, Said]:
    """The network (links inside and between nodes, measured curves), the device count it
    allows and the device, with a finding on where each came from."""
    given = given_link(req)
    nodes = req.nodes
    spill = None
    if req.max_devices and req.max_devices > req.gpus_per_node * nodes:
        # more devices than the nodes hold: the rest are other nodes, never one node of 16
        # GPUs on NVLink (--max-devices 16 with 8 per node is two nodes)
        nodes = -(-req.max_devices // req.gpus_per_node)
        # past one node only whole nodes are searched (``Machine.device_counts``):
        # the most nodes a count searched spans (12 of 8 per node spanned none, said 2)
        whole = req.max_devices // req.gpus_per_node
        spill = Finding.of(
            K.NODES_SPILL,
            asked=req.max_devices,
            nodes=req.nodes,
            per_node=req.gpus_per_node,
            two_nodes=2 * req.gpus_per_node,
            whole=whole,
            spans=whole >= 2,
        )
    max_devices, note = topology_cap(
        topology, nodes, req.max_devices or (req.gpus_per_node * nodes)
    )
    # the link, and the device (named, else the link's) resolved once beside it
    intra, link_note, device = choose_link(given, topology, req.device_name, curves is not None)
    inter = None
    if nodes > 1:  # the link between nodes, its preset looked up here as the link's was
        try:
            found = get_preset(req.inter_node or DEFAULT_INTER_NODE)
        except KeyError as exc:  # --inter-node names no preset: the known ones listed
            raise ValueError(exc.args[0]) from None
        inter = Link(busbw_gbs=found.busbw_gbs, latency_us=found.hop_latency_us, name=found.name)
    network = Network(
        intra=intra,
        per_node=req.gpus_per_node if nodes > 1 else None,
        inter=inter,
        nics_per_node=req.nics_per_node,
    )
    sources: list[str | Finding] = [link_note, *filter(None, [spill, note])]
    if curves is not None:
        network = measured_network(curves, network)
        ranks = sorted({c.ranks for c in network.curves})
        sources[0] = Finding.of(
            K.LINK_CURVES,
            sweep=curves.source,
            ranks=tuple(ranks),
            busbw_gbs=network.intra.busbw_gbs,
            latency_us=network.intra.latency_us,
        )  # a link given beside them is refused (``advice.conflicts``)
    # the link between nodes only where a count searched spans nodes (12 of 8 per node
    # searched none past one node, and named it)
    if any(network.spans_nodes(n) for n in network.counts_up_to(max_devices)):
        nics = req.nics_per_node or req.gpus_per_node
        sources.append(
            Finding.of(
                K.BETWEEN_NODES,
                name=network.inter.name,
                nics=nics,
                assumed=req.inter_node is None or req.nics_per_node is None,
            )
        )
    assumed = given is None and curves is None
    detected = topology.preset() if assumed and topology is not None else None
    machine = Machine(
        network=network,
        max_devices=max_devices,
        link_assumed=assumed and detected is None,
        # a topology read from --topo was asked for; one passed or detected here was not
        link_detected=detected if req.topo is None else None,
        device=device,
    )
    mismatch = link_not_of_device(given if isinstance(given, str) else None, device)
    return machine, Said(sources=tuple(sources), warnings=tuple(filter(None, [mismatch])))

"""The machine an advice predicts (:func:`machine_of`): the links inside and between nodes, the
measured curves and the device, each with where it came from, over the devices it may span
(:func:`span_of`: the nodes asked, capped by the topology's GPUs or the host's cores); the
request's own device and links (``AdviceRequest.hardware``), else the bench host's
(``calibration.BenchHost``: its link, the board it implies, its GPUs and cores), else a topology's
ring, each count of a node on the ring through its first GPUs (:func:`choose_link`)."""

from __future__ import annotations

import shlex
from dataclasses import asdict, dataclass, replace

from gpuscale.advice.calibrate.measured import measured_network, sweep_said
from gpuscale.advice.calibration import DEFAULT_LINK, BenchHost, Machine, Said
from gpuscale.advice.model.hardware import checked_device, read_on_link
from gpuscale.advice.model.network import count_class, fitted_class, fitted_spread, terms_class
from gpuscale.advice.model.priors import phrase
from gpuscale.advice.records import Assumption, Quantity
from gpuscale.advice.request import AdviceRequest
from gpuscale.advice.types import Finding, Measure, Source, TermId, maybe
from gpuscale.advice.types import FindingKind as K
from gpuscale.bench.cores import host_cores, usable_cores
from gpuscale.hardware import links
from gpuscale.interconnect.measured import MeasuredCurves
from gpuscale.interconnect.network import Link, Network, searched_counts
from gpuscale.interconnect.topology import Topology


@dataclass(frozen=True, slots=True)
class Span:
    """The devices an advice searches (:func:`span_of`): the nodes a count may span, the most
    devices, and the findings where something capped them (said before and after the link)."""

    nodes: int
    most: int
    before: tuple[Finding, ...] = ()
    after: tuple[Finding, ...] = ()
    per_node: int = 8  # devices per node: those asked, at most the topology's GPUs


def span_of(req: AdviceRequest, topology: Topology | None, host: BenchHost | None) -> Span:
    """Devices beyond the nodes asked spill onto more nodes, each of the topology's GPUs
    where fewer than asked per node; on one node, the topology's GPUs cap them; CPU (gloo)
    processes at the bench host's cores (else this machine's) // threads per process."""
    nodes, per_node = req.nodes, req.devices_per_node
    before: tuple[Finding, ...] = ()
    spills = bool(req.max_devices and req.max_devices > per_node * nodes)
    gpus = 0 if topology is None else len(topology.gpus)
    # a topology read is a node's: its GPUs (one too) past one node, and on one node of more
    # GPUs than asked without --max-devices, unless fewer are asked per node (``default``: the
    # 8 per node assumed where --gpus-per-node is not given; 8 typed is asked: its first 8)
    larger = nodes == 1 and gpus > per_node and not req.max_devices
    if gpus and gpus != per_node and (nodes > 1 or spills or larger):
        default = req.gpus_per_node is None
        found = {"gpus": gpus, "asked": per_node, "file": req.topo, "default": default}
        if gpus < per_node or default:
            per_node, kind = gpus, K.TOPOLOGY_PER_NODE
        else:  # fewer asked: the first GPUs of each node (their ring)
            kind = K.TOPOLOGY_SOME_PER_NODE
        before = (Finding.of(kind, **found),)
        # the nodes given hold fewer devices now: a --max-devices above them spills
        spills = bool(req.max_devices and req.max_devices > per_node * nodes)
    if spills and req.max_devices:  # the most nodes a count searched spans (12 of 8: none)
        nodes, whole = -(-req.max_devices // per_node), req.max_devices // per_node
        spill = {"asked": req.max_devices, "nodes": req.nodes, "per_node": per_node}
        spill |= {"two_nodes": 2 * per_node, "whole": whole, "spans": whole >= 2}
        before = (*before, Finding.of(K.NODES_SPILL, **spill))
    asked = req.max_devices or (per_node * nodes)
    most = asked
    if topology is not None and nodes == 1:
        gpus = len(topology.gpus)
        # ``default``: neither --max-devices nor --gpus-per-node asked
        default = req.max_devices is None and req.gpus_per_node is None
        if gpus <= 1:
            most, before = 1, (*before, Finding.of(K.ONE_GPU, asked=asked, default=default))
        elif asked > gpus:
            capped = Finding.of(K.TOPOLOGY_CAP, gpus=gpus, asked=asked, default=default)
            most, before = gpus, (*before, capped)
    after: tuple[Finding, ...] = ()
    if host is not None and host.kind == "cpu" and req.nodes == 1:
        cores, total = (host.cores, host.total) if host.cores else (usable_cores(), host_cores())
        processes = max(1, cores // (per_process := max(1, host.threads or 1)))
        found = dict(host=processes, cores=cores, threads=per_process, bench=host.cores is not None)
        found["of"] = total if total and total > cores else None  # the affinity allowed fewer
        if processes < most and req.max_devices is None:
            most, after = processes, (Finding.of(K.PROCESSES_CAP, **found),)
        elif processes < most:
            after = (Finding.of(K.PROCESSES_ABOVE, **found),)
    return Span(nodes, most, before, after, per_node)


# An assumed link's range: across CPU sockets (its slowest) to PCIe 4.0 P2P through a switch,
# a device named to the best link its catalogue row allows (``DeviceRecord.usual_link``: P2P
# at its PCIe generation, through host memory without P2P), or to the link assumed where it
# is faster; the advice is searched again at each end, and a count that changes is withheld.
# A board named (SXM, OAM) has none: it sits on its baseboard's fabric, which the catalogue
# models with one preset (``DeviceRecord.fabric``)
LINK_ENDS = (("low", "pcie-sys"), ("high", "pcie4-x16"))
FABRIC_HIGH = "nvlink5"  # the fastest preset: the top of a fabric's own (a TPU's ICI) range
# the device links as ends, by preset name (a named device's usual link, looked up)
DEVICE_LINKS = {n: Link.from_preset(n) for n, p in links.PRESETS.items() if p.kind == "gpu"}


@dataclass(frozen=True, slots=True)
class LinkChoice:
    """The intra-node link, where it came from (a finding, else an ``assumption``), and a
    warning where the link given is not the device's own."""

    link: Link
    said: Finding | None
    assumed: bool = False
    assumption: Assumption | None = None
    warning: Finding | None = None
    # an assumed link's range (``LINK_ENDS``): each end's link and its figure as said
    ends: tuple[tuple[str, Link, float], ...] = ()
    fabric: str | None = None  # the device's own fabric (ICI, RoCE) no preset models


def choose_link(
    req: AdviceRequest,
    topology: Topology | None,
    measured: bool,
    host: BenchHost | None,
    most: int = 1,
    per_node: int | None = None,
) -> LinkChoice:
    """The link given, else (none ``measured`` by collectives) the bench ``host``'s where
    this machine detected none or another, else the detected topology's ring link, else
    the NVLink of the device named (its SXM board), else ``pcie-phb``; a warning where an
    NVLink given is not the named part's (``model.hardware.not_own_link``). A link's
    findings say its bus bandwidth (``busbw_gbs``) and, on a fully connected mesh, its
    figure on each count a search up to ``most`` devices prices inside one node of
    ``per_node`` (``at``: ``LINK_AT``, ``Link.busbw_at``) and its links per device (``mesh``)."""
    hardware = req.hardware  # the device and links named, resolved with the request
    detected = maybe(Topology.preset, topology)
    seen = detected if req.topo is None else None  # --topo was asked for, not detected
    benched = None if measured or host is None else host.link
    if benched and detected is not None and (not seen or seen == benched.name):
        benched = None  # this machine's own link, detected, stands
    board = hardware.board if detected is None else None
    chosen = benched or maybe(Link.from_preset, detected) or board or Link.from_preset(DEFAULT_LINK)
    if hardware.link is not None:  # given: a custom link, else a preset (``not_own``: warned)
        chosen = hardware.link
    # its figures as a given, a bench host's or an assumed link's findings say them
    counts = tuple(c for c in searched_counts(most, per_node) if c <= (per_node or c))
    figures_at = chosen.figures_at(counts)  # a mesh's, on each count of a node
    at = tuple(Finding.of(K.LINK_AT, devices=c, busbw_gbs=gbs) for c, gbs in figures_at)
    figures = {"busbw_gbs": chosen.busbw_gbs, "mesh": chosen.mesh_links if at else None, "at": at}
    if hardware.link is not None:  # over the link of --topo's file (``over``), said so
        given = K.LINK_CUSTOM if req.busbw_gbs is not None else K.LINK_PRESET
        over = {"file": req.topo if detected else None, "over": detected}
        said = Finding.of(given, name=chosen.name, **figures, **over)
        return LinkChoice(chosen, said, warning=hardware.not_own)
    if host is not None and benched and host.gpus is not None and host.gpus >= 2:
        said = Finding.of(
            K.LINK_OF_BENCH_HOST,
            name=chosen.name,
            device=host.board,
            **figures,
            detected=seen,  # this machine's GPUs of another link
        )
        return LinkChoice(chosen, said)
    if topology is not None and detected is not None and not benched:
        # read from the file --topo names (None: detected on this machine, or given in Python)
        expected, read = topology.expected_busbw_gbs(), {"file": req.topo}

        def named(preset: str) -> str:  # the file as a shell takes it (a space quoted)
            file = shlex.quote(req.topo) if req.topo else None
            return phrase("link_read" if req.topo else "link_detected", preset=preset, file=file)

        if expected:
            chosen = replace(chosen, busbw_gbs=expected, name=named(detected))
        # n devices of the node run over the ring through its first n GPUs (torchrun's)
        rings = topology.first_rings()
        chosen = chosen.with_rings(rings, named)
        at = tuple(Finding.of(K.RING_AT, **asdict(r)) for r in rings if len(r.gpus) in counts)
        # every count's ring of one node, the whole node's too (``-f json``'s ``topology``)
        every = (topology.ring_of(range(n)) for n in counts if 1 < n <= len(topology.gpus))
        pair, ring = topology.slowest_link(), topology.ring_link()
        better = tuple(filter(None, (_better(topology, n) for n in counts)))
        found = {"name": chosen.name, "pair": pair, "ring": None if ring == pair else ring}
        found |= {"busbw_gbs": chosen.busbw_gbs, "at": at or None, "better": better or None}
        found["rings"] = tuple(Finding.of(K.RING_AT, **asdict(r)) for r in every)
        return LinkChoice(chosen, Finding.of(K.LINK_DETECTED, **found, **read))
    if measured:  # the collectives measured stand for it (``machine_of``)
        return LinkChoice(chosen, None)
    # an assumption, searched again at each of ``LINK_ENDS`` (widened to ``chosen`` where it
    # lies outside them; a tie keeps the preset): the bench host's (fewer than 2 GPUs
    # measured no link), else, none given, detected or measured, the NVLink (or xGMI) of the
    # board whose peak the advice checks against, else ``DEFAULT_LINK``
    (low_end, low), (high_end, high) = ((e, Link.from_preset(n)) for e, n in LINK_ENDS)
    if (usual := hardware.device.usual_link) is not None:  # its generation's, its P2P's
        high = DEVICE_LINKS[usual]
    fabric = None if board is not None or benched else hardware.device.own_fabric
    if fabric:  # its own fabric: up to the fastest preset (``FABRIC_HIGH``)
        high = Link.from_preset(FABRIC_HIGH)
    # a mesh below an end at its fewest devices (2) or above it at its most
    low = chosen if chosen.busbw_at(2) < low.busbw_gbs else low
    high = chosen if chosen.busbw_gbs > high.busbw_gbs else high
    # each figure at the most devices of a node searched (a mesh's there, ``busbw_over``)
    value_gbs, low_gbs, high_gbs = (link.busbw_over(counts) for link in (chosen, low, high))
    if host is not None and benched:
        generation = links.NVLINK.get(chosen.name)
        basis = Finding.of(
            K.NO_LINK_MEASURED,
            gpus=host.gpus,
            preset=chosen.name,
            device=host.device or None,
            links_per_gpu=getattr(generation, "links_per_gpu", None),
            architecture=getattr(generation, "architecture", None),
            board=host.board or None,
        )
        measure = Finding.of(K.MEASURE_LINK, detected=seen or None)
        assumed = detected is None
    else:  # a device of its own fabric: its range up to the fastest preset
        case = "board" if board is not None else ("fabric" if fabric else "default")
        of = {"device": req.device_name, **({"fabric": fabric} if fabric else {})}
        basis = Finding.of(K.LINK_ASSUMED, case=case, name=chosen.name, **of)
        measure = Finding.of(K.MEASURE_LINK_ASSUMED, case=case)
        assumed = True
    if assumed and host is not None and host.kind == "cpu":  # no GPU link: processes
        figures = {"busbw_gbs": chosen.busbw_gbs, "latency_us": chosen.latency_us}
        processes = Assumption(  # DEFAULT_LINK's figures, the only ones the steps price
            term=TermId.LINK,
            value=Finding.of(K.PROCESSES_LINK_VALUE, name=DEFAULT_LINK, **figures),
            quantity=Quantity(chosen.busbw_gbs, "GB/s bus bandwidth"),
            source=Source.ASSUMED,
            basis=Finding.of(K.LINK_OF_PROCESSES),
            measure=Measure(Finding.of(K.MEASURE_LINK_OF_PROCESSES)),
        )
        cpu = replace(chosen, name="CPU processes")
        return LinkChoice(cpu, None, assumed=True, assumption=processes)
    ends = ((low_end, low, low_gbs), (high_end, high, high_gbs))
    if board is not None and not benched and hardware.device.fabric == chosen.name:
        ends = ()  # a board named: its baseboard's fabric, no range
    # the ends searched again: the quantity's range, said with their presets
    gbs = (low_gbs, high_gbs) if ends else (None, None)
    presets = {"low_preset": low.name, "high_preset": high.name} if ends else {}
    assumption = Assumption(
        term=TermId.LINK,
        value=Finding.of(
            K.LINK_VALUE, preset=chosen.name, **figures, low=gbs[0], high=gbs[1], **presets
        ),
        quantity=Quantity(value_gbs, "GB/s bus bandwidth", *gbs, at=figures_at),
        source=Source.ASSUMED,
        basis=basis,
        measure=Measure(measure),
    )
    return LinkChoice(chosen, None, assumed, assumption, ends=ends, fabric=fabric)


def _better(topology: Topology, n: int) -> Finding | None:
    """The GPUs whose ring of ``n`` beats GPUs 0..n-1's (``Topology.best_ring``), the
    ``CUDA_VISIBLE_DEVICES`` that runs on them; said, not priced (torchrun's are the first)."""
    first, best = topology.ring_of(range(n)), topology.best_ring(n)
    if best.rank() <= first.rank():
        return None
    firsts = {"first_link": first.link, "first_gbs": first.busbw_gbs}
    firsts |= {"devices": n, "visible": ",".join(map(str, best.gpus))}
    return Finding.of(K.BETTER_GPUS, **asdict(best), **firsts)


def machine_of(
    req: AdviceRequest,
    topology: Topology | None,
    curves: MeasuredCurves | None,
    span: Span,
    host: BenchHost | None = None,
) -> tuple[Machine, Said, LinkChoice]:
    """The machine of ``req`` over the devices it may ``span`` (on the bench ``host``'s link
    and cores), whence each part, and the link chosen: the ends of an assumed link's range
    (``LINK_ENDS``; none where the link is not assumed), a device's own fabric."""
    nodes, max_devices = span.nodes, span.most
    per_node = span.per_node if nodes > 1 else None
    choice = choose_link(req, topology, curves is not None, host, max_devices, per_node)
    device, nic = req.hardware.device, req.hardware.nic_path
    gen = getattr(device.part, "pcie_gen", None)
    one_gpu = per_node == 1 and curves is None and not choice.fabric
    if one_gpu:  # no link inside a node carries a collective: the GPU's way to its NICs does
        given = None if choice.assumed else choice.link.name
        of = {"preset": nic[0], "source": nic[1], "given": given, "device": device.name}
        said = Finding.of(K.NIC_PATH, **of, gen=gen if nic[0] == f"pcie{gen}-x16" else None)
        choice = replace(choice, said=said, assumed=False, assumption=None, ends=())
    link_note = choice.said
    inter = req.hardware.inter_node if nodes > 1 else None
    network = Network(
        intra=choice.link,
        per_node=per_node,
        inter=inter,
        nics_per_node=req.nics_per_node,
        nodes_given=req.nodes > 1,
        nic_path=Link.from_preset(nic[0]) if one_gpu else None,
    )
    sweep_warnings: tuple[Finding | str, ...] = ()
    if curves is not None:  # a link given beside them is refused (``advice.request``)
        network = measured_network(curves, network)
        link_note, sweep_warnings = sweep_said(curves, network)
    sources: list[str | Finding] = [*filter(None, [link_note]), *span.before]
    assumed: list[Assumption] = list(filter(None, [choice.assumption]))
    # the link between nodes only where a count searched spans nodes
    if any(network.spans_nodes(n) for n in network.counts_up_to(max_devices)):
        nics = req.nics_per_node or span.per_node
        sources.append(
            Finding.of(
                K.BETWEEN_NODES,
                name=network.inter.name,
                nics=nics,
                assumed=req.inter_node is None or req.nics_per_node is None,
            )
        )
        if req.inter_node is None:
            assumed.append(_inter_node_assumed(network.inter))
    # the device named, else the one the topology's boards imply (``Topology.board_link``),
    # where no link is given or measured; and the one the memory check reads on the link chosen
    if not (req.hardware.link or curves is not None):
        device = read_on_link(device, maybe(Topology.board_link, topology))
    memory_device, assumed_device = checked_device(device, network.intra.name)
    counts = tuple(network.counts_up_to(max_devices))
    machine = Machine(
        network=network,
        max_devices=max_devices,
        link_assumed=choice.assumed,
        device=device,
        memory_device=memory_device,
        memory_device_assumed=assumed_device,
        one_device_class=terms_class(network, 1),
        count_classes=tuple((n, count_class(network, n)) for n in counts),
        network_class=fitted_class(network),
        spread=fitted_spread(network, counts),
    )
    warnings = (*filter(None, [choice.warning]), *sweep_warnings)
    said = Said(sources=(*sources, *span.after), assumptions=tuple(assumed), warnings=warnings)
    return machine, said, choice


def _inter_node_assumed(inter: Link) -> Assumption:
    """The link between nodes where none is named (``DEFAULT_INTER_NODE``)."""
    presets = tuple(name for name, p in links.PRESETS.items() if p.kind == "network")
    return Assumption(
        term=TermId.INTER_NODE,
        value=Finding.of(
            K.LINK_VALUE, preset=inter.name, busbw_gbs=inter.busbw_gbs, mesh=None, at=(), low=None
        ),
        quantity=Quantity(inter.busbw_gbs, "GB/s bus bandwidth"),
        source=Source.ASSUMED,
        basis=Finding.of(K.INTER_NODE_ASSUMED, name=inter.name),
        measure=Measure(Finding.of(K.MEASURE_INTER_NODE, presets=presets)),
    )

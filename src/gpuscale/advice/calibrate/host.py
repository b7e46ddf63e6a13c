"""The host a bench's runs recorded (:func:`host_of`): its link, the board that link implies,
its GPUs and cores, read from the bench table; the machine an advice predicts stands on it
where this machine detects no link or another (``link.machine_of``). The devices an advice
may span (:func:`span_of`): the nodes asked, capped by the topology's GPUs or the host's
cores."""

from __future__ import annotations

import os
from dataclasses import dataclass

import pandas as pd

from gpuscale.advice.calibration import Calibration
from gpuscale.advice.model.hardware import implied_device
from gpuscale.advice.request import AdviceRequest
from gpuscale.advice.types import Finding
from gpuscale.advice.types import FindingKind as K
from gpuscale.hardware import links
from gpuscale.interconnect.network import Link
from gpuscale.interconnect.topology import Topology


@dataclass(frozen=True, slots=True)
class BenchHost:
    """The host the runs calibrated on recorded (None: not recorded): its link (a preset,
    and the device it implies) stands where none is given, measured or detected here, or
    this machine detected another; its cores cap CPU processes."""

    link: Link | None
    board: str | None
    gpus: int | None
    cores: int | None
    kind: str | None
    threads: int | None
    device: str | None


def host_of(table: pd.DataFrame, cal: Calibration) -> BenchHost:
    """Of ``cal``'s configuration in ``table`` (every device count)."""
    rows = table[table["config_group"] == cal.bench.config_group]

    def most(column: str) -> int | None:
        values = pd.to_numeric(rows.get(column, pd.Series(dtype=float)), errors="coerce")
        return None if values.isna().all() else int(values.max())

    named = set(rows.get("host_link", pd.Series(dtype=object)).dropna().astype(str)) - {""}
    link = named.pop() if len(named) == 1 and next(iter(named)) in links.PRESETS else None
    gpus, cores = most("host_devices"), most("host_cpu_count")
    return BenchHost(
        None if link is None else Link.from_preset(link),
        None if link is None else implied_device(link),
        gpus,
        cores,
        cal.bench.device_kind,
        cal.bench.threads,
        cal.machine.device.name,
    )


@dataclass(frozen=True, slots=True)
class Span:
    """The devices an advice searches (:func:`span_of`): the nodes a count may span, the most
    devices, and the findings where something capped them (said before and after the link)."""

    nodes: int
    most: int
    before: tuple[Finding, ...] = ()
    after: tuple[Finding, ...] = ()


def span_of(req: AdviceRequest, topology: Topology | None, host: BenchHost | None) -> Span:
    """Devices beyond the nodes asked spill onto more nodes; on one node, the topology's
    GPUs cap them; CPU (gloo) processes at the bench host's cores (else this machine's) //
    threads per process."""
    nodes = req.nodes
    before: tuple[Finding, ...] = ()
    if req.max_devices and req.max_devices > req.gpus_per_node * nodes:
        # the most nodes a count searched spans (12 of 8 per node: none)
        nodes = -(-req.max_devices // req.gpus_per_node)
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
        before = (spill,)
    asked = req.max_devices or (req.gpus_per_node * nodes)
    most = asked
    if topology is not None and nodes == 1:
        gpus = len(topology.gpus)
        if gpus <= 1:
            most, before = 1, (*before, Finding.of(K.ONE_GPU))
        elif asked > gpus:
            most, before = gpus, (*before, Finding.of(K.TOPOLOGY_CAP, gpus=gpus, asked=asked))
    after: tuple[Finding, ...] = ()
    if host is not None and host.kind == "cpu" and req.nodes == 1:
        cores = host.cores if host.cores is not None else (os.cpu_count() or 1)
        per_process = max(1, host.threads or 1)
        processes = max(1, cores // per_process)
        found = dict(host=processes, cores=cores, threads=per_process, bench=host.cores is not None)
        if processes < most and req.max_devices is None:
            most, after = processes, (Finding.of(K.PROCESSES_CAP, **found),)
        elif processes < most:
            after = (Finding.of(K.PROCESSES_ABOVE, **found),)
    return Span(nodes, most, before, after)

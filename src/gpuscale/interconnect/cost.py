"""A collective as NCCL costs it (``data/nccl_tuning.json``: NCCL 2.20.3's
``src/graph/tuning.cc``): for each algorithm (ring, tree) and protocol (LL, LL128,
Simple) a latency and a bandwidth, and the pair of least time for the size, as NCCL's
tuner picks it::

    latency = baseLat[a][p] + steps x hwLat[hw][a][p]
    time    = latency + bytes x factor / (share[a][p] x busbw)

ring all-reduce: ``2(N-1)`` steps (those crossing nodes at the network's latency, the rest
at the node's, no less than NCCL's per-step network overhead), ``factor`` the ring's
``2(N-1)/N``; all-gather and reduce-scatter: ``N-1`` steps, half the factor; tree (all-reduce
only): ``2 ((N/nodes - 1) intra + log2(nodes) inter)``, ``factor`` 2 (its algorithm
bandwidth is half its bus bandwidth). LL128 only where the node's link is NVLink: a 25 MiB
bucket on 8 NVLink GPUs costs NCCL's 56 us of latency (Simple), not 2(N-1) x 10 us.

Which hardware NCCL's tables apply to is read off the link preset's name (``hardware_of``);
a custom or measured link has none and keeps its own alpha-beta model."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from functools import cache
from importlib import resources

from gpuscale.hardware.links import get_preset

TUNING_FILE = "nccl_tuning.json"
PROTOCOLS = ("LL", "LL128", "Simple")
# Bytes each collective moves per rank, as a share of the all-reduce's ``ring_factor``:
# all-gather and reduce-scatter move half of it, (n-1)/n
OP_SHARE = {"all_reduce": 1.0, "all_gather": 0.5, "reduce_scatter": 0.5}
# The tree's LL128 bandwidth share, by whether the ranks are on one node
LL128_TREE = {True: "LL128_one_node", False: "LL128_nodes"}


@dataclass(frozen=True, slots=True)
class Choice:
    """The algorithm and protocol NCCL's model takes for one collective, its time and
    the latency part of it (seconds)."""

    algorithm: str
    protocol: str
    time_s: float
    latency_s: float


def ring_factor(n: int) -> float:
    """nccl-tests' bus-bandwidth factor of all-reduce: ``2(n-1)/n``."""
    return 2 * max(n - 1, 0) / max(n, 1)  # 0 on one device


@cache
def tables() -> dict[str, object]:
    """``data/nccl_tuning.json``'s values (each entry's ``value``), read once."""
    text = (resources.files("gpuscale") / "data" / TUNING_FILE).read_text()
    data = json.loads(text)
    return {k: v["value"] for k, v in data.items() if isinstance(v, dict) and "value" in v}


def hardware_of(link_name: str) -> str | None:
    """NCCL's hardware class of a link preset's name (``nvlink4``, ``nvlink3 (detected)``):
    ``nvlink``, ``pci`` (NCCL's PCI latencies stand for any path inside a node that is not
    NVLink, through host memory too) or ``net``; None for a custom or measured link."""
    try:
        preset = get_preset(link_name.split(" ")[0])
    except KeyError:
        return None
    if preset.kind == "network":
        return "net"
    return "nvlink" if preset.name.startswith("nvlink") else "pci"


def _steps(op: str, ranks: int, nodes: int) -> tuple[int, int]:
    """(ring steps, of them crossing nodes) of ``op`` (NCCL's nsteps, nInterSteps)."""
    if op == "all_reduce":
        return 2 * (ranks - 1), (2 * nodes if nodes > 1 else 0)
    return ranks - 1, nodes - 1


def _tree_share(protocol: str, nodes: int) -> float:
    shares = tables()["bandwidth_share"]["tree"]  # type: ignore[index]
    if protocol == "LL128":
        return float(shares[LL128_TREE[nodes == 1]])
    return float(shares[protocol])


def choices(
    op: str, size_bytes: float, ranks: int, busbw_gbs: float, intra: str, nodes: int = 1
) -> list[Choice]:
    """Every (algorithm, protocol) NCCL's model allows for ``op`` of ``size_bytes`` on
    ``ranks`` ranks over ``nodes`` nodes, at ``busbw_gbs`` GB/s of bus bandwidth, the
    node's hardware ``intra`` (``nvlink`` or ``pci``)."""
    t = tables()
    base, hop = t["base_latency_us"], t["hop_latency_us"]
    overhead = t["net_overhead_us"]
    factor = ring_factor(ranks) * OP_SHARE[op]
    steps, inter_steps = _steps(op, ranks, nodes)
    found = []
    for protocol in PROTOCOLS:
        if protocol == "LL128" and intra != "nvlink":
            continue
        intra_us = hop[intra]["ring"][protocol]  # type: ignore[index]
        if nodes > 1:
            intra_us = max(intra_us, overhead[protocol])  # type: ignore[index]
        inter_us = hop["net"]["ring"][protocol]  # type: ignore[index]
        latency_us = base["ring"][protocol] + (steps - inter_steps) * intra_us  # type: ignore[index]
        latency_us += inter_steps * inter_us
        share = t["bandwidth_share"]["ring"][protocol]  # type: ignore[index]
        time_s = latency_us * 1e-6 + factor * size_bytes / (share * busbw_gbs * 1e9)
        found.append(Choice("ring", protocol, time_s, latency_us * 1e-6))
        if op != "all_reduce":
            continue
        per_node = ranks // nodes
        tree_us = base["tree"][protocol] + 2 * (  # type: ignore[index]
            (per_node - 1) * hop[intra]["tree"][protocol]  # type: ignore[index]
            + int(math.log2(nodes)) * hop["net"]["tree"][protocol]  # type: ignore[index]
        )
        tree_s = tree_us * 1e-6 + 2 * size_bytes / (_tree_share(protocol, nodes) * busbw_gbs * 1e9)
        found.append(Choice("tree", protocol, tree_s, tree_us * 1e-6))
    return found


def collective(
    op: str, size_bytes: float, ranks: int, busbw_gbs: float, intra: str, nodes: int = 1
) -> Choice:
    """The (algorithm, protocol) of least time for one collective (``choices``)."""
    if ranks < 2:
        raise ValueError(f"a collective needs 2+ ranks, not {ranks}")
    return min(choices(op, size_bytes, ranks, busbw_gbs, intra, nodes), key=lambda c: c.time_s)

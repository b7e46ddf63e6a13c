"""The network's part of a data-parallel step, looked up once per count (``collectives``):
the collectives a step issues, their time on a ``Network`` (``interconnect/network.py``) and
the terms fitted on published tables' development rows (``data/step_terms.json``, by
``benchmarks/fit_step_terms.py``):

* ``nccl_latency``: preset links costed as NCCL's tuner costs them (``interconnect/cost.py``),
  not ``2(N-1)`` hop latencies;
* ``contention_share`` (kappa): ``kappa x hidden`` added for the communication backward
  hides (NCCL's kernels take SMs and memory bandwidth), at the default overlap;
* ``rank_spread`` (sigma): the wait for the slowest of N ranks, ``sigma x E[max of N
  standard normals] x compute``, where nothing on the host measured the step's spread.

kappa and sigma: one value per link class (``CLASSES``) and software stack (``STACKS``:
``legacy``, pre-Volta devices under TensorFlow 1.x; ``modern``); the advice takes
``DEFAULT_STACK``'s (the device catalogue has no device before Volta)."""

from __future__ import annotations

import math
import statistics
from collections.abc import Hashable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from functools import cache
from typing import NamedTuple

import numpy as np

from gpuscale.advice.model.priors import DEFAULT_BUCKET_MB, assumed_overlap, phrase, read_data
from gpuscale.hardware.links import PRESETS
from gpuscale.interconnect.network import Network

MIB = 2**20
FIRST_BUCKET_BYTES = 1 * MIB
SHARDED = ("fsdp", "zero2", "hybrid")
CLASSES = ("nvlink", "pcie_p2p", "pcie_no_p2p", "multinode")
STACKS = ("legacy", "modern")
DEFAULT_STACK = "modern"
NO_P2P = ("pcie-phb", "pcie-sys")  # PCIe presets through host memory

PerClass = tuple[tuple[str, float], ...]  # (link class, value) for every class


def _classes(term: float | PerClass) -> dict[str, float]:
    return dict(term) if isinstance(term, tuple) else dict.fromkeys(CLASSES, term)


@dataclass(frozen=True, slots=True)
class StepTerms:
    """The fitted terms: each one value, or ``(class, value)`` for each of ``CLASSES``."""

    nccl_latency: bool = False
    contention_share: float | PerClass = 0.0  # in [0, 1]
    rank_spread: float | PerClass = 0.0  # in [0, 1)

    def __post_init__(self) -> None:
        for name, term in (
            ("contention share", self.contention_share),
            ("rank spread", self.rank_spread),
        ):
            per_class = _classes(term)
            if set(per_class) != set(CLASSES):
                raise ValueError(f"{name}: link classes are {CLASSES}, not {sorted(per_class)}")
            for cls, value in per_class.items():
                if not (0 <= value < 1 or (name == "contention share" and value == 1)):
                    raise ValueError(f"{name} not in [0, 1]: {value} ({cls})")

    def contention(self, link: str | None) -> float:
        return _of(self.contention_share, link)

    def spread(self, link: str | None) -> float:
        return _of(self.rank_spread, link)


def _of(term: float | PerClass, link: str | None) -> float:
    """A term on ``link`` class; for no class (a custom or measured link, which no published
    row judged), the classes' median: the term kept, at no class's extreme."""
    per_class = _classes(term)
    if link is not None:
        return per_class[link]
    return float(statistics.median(per_class.values()))


_TERMS = read_data("step_terms.json")["terms"]
FITTED_BY_STACK = {
    stack: StepTerms(
        bool(_TERMS["nccl_latency"]["value"]),
        *(
            tuple((cls, float(_TERMS[name]["value"][stack][cls])) for cls in CLASSES)
            for name in ("contention_share", "rank_spread")
        ),
    )
    for stack in STACKS
}
FITTED = FITTED_BY_STACK[DEFAULT_STACK]
_current = [FITTED]


def of_stack(stack: str) -> StepTerms:
    if stack not in FITTED_BY_STACK:
        raise ValueError(f"stack {stack!r} is none of {STACKS}")
    return FITTED_BY_STACK[stack]


def current() -> StepTerms:
    """``FITTED``, or the terms ``using`` set (a fit's and held-out variants)."""
    return _current[-1]


@contextmanager
def using(terms: StepTerms) -> Iterator[StepTerms]:
    _current.append(terms)
    try:
        yield terms
    finally:
        _current.pop()


@cache
def expected_max_normal(n: int) -> float:
    """E[max of ``n`` standard normal draws] (0.564 for two, 1.424 for eight), by
    quadrature of ``x d/dx Phi(x)^n``."""
    if n < 2:
        return 0.0
    x = np.linspace(-10.0, 10.0, 8001)
    cdf = np.array([0.5 * (1 + math.erf(v / math.sqrt(2))) for v in x])
    pdf = np.exp(-(x**2) / 2) / math.sqrt(2 * math.pi)
    density = n * pdf * cdf ** (n - 1)
    return float(np.sum(x * density) * (x[1] - x[0]))


def link_class(link_name: str, nodes: bool) -> str | None:
    """The published tables' link class (``benchmarks/published/README.md``) of a preset
    (``LinkPreset.assumed_class`` where it names one), ``multinode`` across ``nodes``; None
    for a custom or measured link."""
    if nodes:
        return "multinode"
    preset = link_name.split(" ")[0].lower()
    if preset.startswith("nvlink"):
        return "nvlink"
    if preset in PRESETS and PRESETS[preset].assumed_class is not None:
        return PRESETS[preset].assumed_class
    if preset in NO_P2P:
        return "pcie_no_p2p"
    return "pcie_p2p" if preset.startswith("pcie") else None


def count_class(network: Network, n: int) -> str | None:
    """The class of the link ``n`` devices run over (``Link.on``: a node's few devices may
    run over another ring than all of them), ``multinode`` where they span nodes."""
    return link_class(network.intra.on(n).name, network.spans_nodes(n))


def count_overlap(network: Network, n: int) -> float:
    """The overlap assumed for ``n`` devices (``priors.assumed_overlap`` of their class);
    across nodes at most the in-node leg's: the count runs both legs, and backward hides
    no more of the communication than its slower-to-hide leg lets it (a node of PCIe
    without P2P stages every chunk through host memory, whatever joins the nodes; a node of
    one GPU: its way to the NICs, ``Network.node_link``)."""
    overlap = assumed_overlap(count_class(network, n))
    if network.spans_nodes(n) and network.per_node:
        in_node = link_class(network.node_link.name, False)
        overlap = min(overlap, assumed_overlap(in_node))
    return overlap


def fitted_class(network: Network) -> str | None:
    nodes = network.inter is not None and network.per_node is not None
    return link_class(network.intra.name, nodes)


def terms_class(network: Network, n: int) -> str | None:
    """The class whose fitted terms price ``n`` devices: on nodes given (``--nodes``), the
    network's (the fitted multi-node tables' counts took multinode's, their one-node base
    too); else the count's own, so that no count moves with how far the search goes."""
    return fitted_class(network) if network.nodes_given else count_class(network, n)


def fitted_spread(network: Network, counts: tuple[int, ...] = (1,)) -> tuple[float, bool]:
    """The least fitted spread (sigma) of ``counts``' term classes on ``network``
    (``terms_class``) and whether the stacks' spreads differ there."""
    links = {terms_class(network, n) for n in counts}
    stacks = {tuple(terms.spread(link) for link in links) for terms in FITTED_BY_STACK.values()}
    return min(current().spread(link) for link in links), len(stacks) > 1


def bucket_plan(grad_bytes: float, bucket_mb: float = DEFAULT_BUCKET_MB) -> list[tuple[float, int]]:
    """DDP's buckets as (bytes, how many) in all-reduce order: a first bucket of 1 MiB
    (``torch.distributed._DEFAULT_FIRST_BUCKET_BYTES``), then ``bucket_mb`` MiB ones
    (``DistributedDataParallel(bucket_cap_mb=25)`` by default), the last holding the rest."""
    if grad_bytes <= 0:
        return []
    if bucket_mb <= 0:
        raise ValueError(phrase("bucket_positive", bucket_mb=bucket_mb))
    first = min(float(FIRST_BUCKET_BYTES), grad_bytes)
    rest = grad_bytes - first
    cap = bucket_mb * MIB
    full = int(rest // cap)
    tail = rest - full * cap
    return [
        (size, count) for size, count in [(first, 1), (cap, full), (tail, 1)] if count and size > 0
    ]


def issued(
    grad_bytes: float, n: int, bucket_mb: float, strategy: str, units: int = 1, group: int = 0
) -> list[tuple[str, int, float, int]]:
    """(op, ranks, bytes, how many) of each collective a step on ``n`` devices issues, in
    order (the last after backward ends): DDP's buckets; FSDP's two all-gathers and
    reduce-scatter; ZeRO-2's reduce-scatter and all-gather (DDP's volume: Rajbhandari et al.
    2020, 7.2.1); hybrid sharding as FSDP's within a node and an all-reduce of the node's
    shard over all ``n``. A sharded strategy issues them per unit it wraps (``units``)."""
    if strategy in SHARDED and units > 1:
        whole = issued(grad_bytes / units, n, bucket_mb, strategy, group=group)
        return [(op, ranks, size, count * units) for op, ranks, size, count in whole]
    if strategy == "fsdp":
        return [("all_gather", n, grad_bytes, 2), ("reduce_scatter", n, grad_bytes, 1)]
    if strategy == "zero2":
        return [("reduce_scatter", n, grad_bytes, 1), ("all_gather", n, grad_bytes, 1)]
    if strategy == "hybrid":
        group = group or n
        within = [("all_gather", group, grad_bytes, 2), ("reduce_scatter", group, grad_bytes, 1)]
        across = [("all_reduce", n, grad_bytes * (1.0 / group), 1)] if n > group else []
        return [c for c in [*within, *across] if c[1] > 1]
    if strategy != "ddp":
        raise ValueError(phrase("strategy_unknown", strategy=strategy))
    return [("all_reduce", n, size, count) for size, count in bucket_plan(grad_bytes, bucket_mb)]


class Collectives(NamedTuple):
    """The network's part of a step on ``n`` devices: its collectives, those no compute can
    hide (``unhidden_s``), their latency part (s), kappa,
    ``sigma E[max of n]`` (ms of wait per ms of compute), its class, the overlap assumed
    (``count_overlap``)."""

    comm_s: float
    unhidden_s: float
    latency_s: float
    contention_share: float
    straggler_share: float
    link: str | None
    overlap: float


def collectives(
    network: Network,
    grad_bytes: float,
    n: int,
    *,
    bucket_mb: float,
    strategy: str,
    units: int = 1,
    group: int = 0,
) -> Collectives:
    """Each collective at its own size and ranks (``Network.cost_s``); ``group``: the devices
    hybrid sharding shards over (0: all)."""
    fitted = terms_class(network, n)
    terms = current()
    straggler = terms.spread(fitted) * expected_max_normal(n)  # 0 at N = 1
    parts = [
        terms.contention(fitted),
        straggler,
        count_class(network, n),
        count_overlap(network, n),
    ]
    if n < 2:
        return Collectives(0.0, 0.0, 0.0, *parts)
    plan = issued(grad_bytes, n, bucket_mb, strategy, units, group)
    costs = [
        network.cost_s(size, ranks, op, nccl=terms.nccl_latency) for op, ranks, size, _ in plan
    ]
    counts = [count for *_, count in plan]
    comm_s = sum(time_s * count for (time_s, _), count in zip(costs, counts, strict=True))
    latency_s = sum(count * part for (_, part), count in zip(costs, counts, strict=True))
    # none hidden: what is issued after backward ends, the last unit's last collective (under
    # hybrid sharding across nodes its reduce-scatter within the node, then its shard's
    # all-reduce), and the first unit's forward all-gather, before any compute. One unit
    # (the whole model, FSDP's root, kept gathered from forward to backward): the gather
    # and the reduce-scatter are the whole exposed part of what it issues
    after = 2 if strategy == "hybrid" and plan[-1][0] == "all_reduce" else 1
    unhidden_s = sum(time_s for time_s, _ in costs[-after:])
    if plan[0][0] == "all_gather":
        unhidden_s += costs[0][0]
    return Collectives(comm_s, unhidden_s, latency_s, *parts)


@dataclass(frozen=True, slots=True)
class MeasuredComm:
    """The communication N > 1 bench runs measured, one run an entry: (gradient bytes per
    step, devices, DDP bucket MiB, FSDP's or DDP's, comm ms) in ``runs``, its row of the bench
    table in ``rows``; ``levels``: the positions of the runs of the configuration, of the
    family and of the model's own, the most specific last."""

    runs: tuple[tuple[float, int, float, bool, float], ...] = ()
    rows: tuple[Hashable, ...] = ()
    levels: tuple[tuple[int, ...], ...] = ()


def comm_scale(
    network: Network, measured: MeasuredComm
) -> tuple[float | None, tuple[Hashable, ...]]:
    """The scale of ``network``'s communication the runs measured (``Network.scaled``): the
    median of measured over predicted comm (``collectives``, each size, count, bucket and
    strategy once) at the most specific of ``measured.levels`` that has one, and the rows it
    was read from; None where no run measured it."""
    predicted: dict[tuple[float, int, float, bool], float] = {}
    ratios: list[float] = []
    for grad_bytes, n, bucket_mb, fsdp, comm_ms in measured.runs:
        key = (grad_bytes, n, bucket_mb, fsdp)
        if key not in predicted:
            strategy = "fsdp" if fsdp else "ddp"
            found = collectives(network, grad_bytes, n, bucket_mb=bucket_mb, strategy=strategy)
            predicted[key] = found.comm_s
        comm_s = predicted[key]
        ratios.append(comm_ms / (comm_s * 1e3) if comm_s > 0 and comm_ms > 0 else math.nan)
    scale, read = None, ()
    for level in measured.levels:
        at = [i for i in level if not math.isnan(ratios[i])]
        median = float(np.median([ratios[i] for i in at])) if at else 0.0
        if median:
            scale, read = median, tuple(measured.rows[i] for i in at)
    return scale, read

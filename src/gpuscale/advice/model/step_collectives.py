"""The collectives a data-parallel step issues, and their time on a ``Network``: DDP's
gradient buckets (the first of 1 MiB, ``torch.distributed._DEFAULT_FIRST_BUCKET_BYTES``,
then ``bucket_mb`` MiB), FSDP's two all-gathers and reduce-scatter, ZeRO-2's and hybrid
sharding's approximations (``issued``); one latency per collective. A sharded strategy
issues its collectives per unit FSDP wraps (``units``: a transformer's layers, each
all-gathered before its forward and its backward and its gradients reduce-scattered after
it), each of the unit's share of the bytes: the same volume in ``units`` times the
collectives, each paying its own latency (``units`` 1: the whole model at once, where no
layer count is known)."""

from __future__ import annotations

from gpuscale.advice.model import step_terms
from gpuscale.advice.model.wording import phrase
from gpuscale.interconnect.network import Network

MIB = 2**20
FIRST_BUCKET_BYTES = 1 * MIB  # torch.distributed._DEFAULT_FIRST_BUCKET_BYTES
DEFAULT_BUCKET_MB = 25.0  # DistributedDataParallel(bucket_cap_mb=25): MiB


def bucket_plan(grad_bytes: float, bucket_mb: float = DEFAULT_BUCKET_MB) -> list[tuple[float, int]]:
    """DDP's buckets as (size in bytes, how many) in the order they are all-reduced: a
    first bucket of 1 MiB, then ``bucket_mb`` MiB buckets, the last holding the rest."""
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


# The strategies whose collectives ``issued`` approximates from the ones the model knows
# (DDP's all-reduce, FSDP's all-gathers and reduce-scatter).
SHARDED = ("zero2", "hybrid")


def group_of(network: Network, n: int) -> int:
    """The devices hybrid sharding shards over at ``n``: one node's, or all where the
    network is one node."""
    return min(n, network.per_node or n)


def issued(
    network: Network, grad_bytes: float, n: int, bucket_mb: float, strategy: str, units: int = 1
) -> list[tuple[str, int, float, int]]:
    """(op, ranks, bytes, how many) of each collective a step on ``n`` devices issues, the
    one left after the backward last: DDP's buckets (``bucket_plan``); FSDP's two
    all-gathers and reduce-scatter; ZeRO-2 (FSDP ``SHARD_GRAD_OP``) as a reduce-scatter of
    the gradients and an all-gather of the updated weights, DDP's all-reduce volume in two
    collectives (Rajbhandari et al. 2020, section 7.2.1: the same volume as DDP's); hybrid
    sharding as FSDP's within a node, then an all-reduce of the node's shard over every
    device (the replicas' all-reduce across nodes, charged as one over the ``n`` ranks).
    ZeRO-2's and hybrid's are approximations, said where the strategy is advised. A sharded
    strategy's are per unit of ``units``, each of ``grad_bytes / units``."""
    if strategy in ("fsdp", *SHARDED) and units > 1:
        whole = issued(network, grad_bytes / units, n, bucket_mb, strategy)
        return [(op, ranks, size, count * units) for op, ranks, size, count in whole]
    if strategy == "fsdp":
        return [("all_gather", n, grad_bytes, 2), ("reduce_scatter", n, grad_bytes, 1)]
    if strategy == "zero2":
        return [("reduce_scatter", n, grad_bytes, 1), ("all_gather", n, grad_bytes, 1)]
    if strategy == "hybrid":
        group = group_of(network, n)
        within = [("all_gather", group, grad_bytes, 2), ("reduce_scatter", group, grad_bytes, 1)]
        across = [("all_reduce", n, grad_bytes * (1.0 / group), 1)] if n > group else []
        return [c for c in [*within, *across] if c[1] > 1]
    if strategy != "ddp":
        raise ValueError(phrase("strategy_unknown", strategy=strategy))
    return [("all_reduce", n, size, count) for size, count in bucket_plan(grad_bytes, bucket_mb)]


def collectives_s(
    network: Network,
    grad_bytes: float,
    n: int,
    *,
    bucket_mb: float,
    strategy: str,
    units: int = 1,
) -> tuple[float, float, float]:
    """(collectives per step, the last one, their latency part) in seconds: what a step
    on ``n`` devices communicates (``issued``), each collective at its own size and ranks
    (``Network.cost_s``), so one latency per collective (for tf-30m at N = 8 under FSDP,
    three collectives, not DDP's seven buckets' 0.98 ms of latency)."""
    if n < 2:
        return 0.0, 0.0, 0.0
    plan = issued(network, grad_bytes, n, bucket_mb, strategy, units)
    nccl = step_terms.current().nccl_latency  # preset links costed as NCCL's tuner costs them
    costs = [network.cost_s(size, ranks, op, nccl=nccl) for op, ranks, size, _ in plan]
    counts = [count for *_, count in plan]
    comm_s = sum(time_s * count for (time_s, _), count in zip(costs, counts, strict=True))
    latency_s = sum(count * part for (_, part), count in zip(costs, counts, strict=True))
    return comm_s, costs[-1][0], latency_s


def comm_times_s(
    network: Network, grad_bytes: float, n: int, *, bucket_mb: float, strategy: str
) -> tuple[float, float]:
    """(collectives per step, the last one) in seconds (``collectives_s``)."""
    comm_s, last_s, _ = collectives_s(
        network, grad_bytes, n, bucket_mb=bucket_mb, strategy=strategy
    )
    return comm_s, last_s

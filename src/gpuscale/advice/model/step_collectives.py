"""The collectives a data-parallel step issues, and their time on a ``Network``: DDP's
gradient buckets (the first of 1 MiB, ``torch.distributed._DEFAULT_FIRST_BUCKET_BYTES``,
then ``bucket_mb`` MiB), FSDP's two all-gathers and reduce-scatter, ZeRO-2's and hybrid
sharding's approximations (``sharded_collectives``); one latency per collective. A
sharded strategy issues its collectives per unit FSDP wraps (``units``: a transformer's
layers, each all-gathered before its forward and its backward and its gradients
reduce-scattered after it), each of the unit's share of the bytes: the same volume in
``units`` times the collectives, each paying its own latency (``units`` 1: the whole
model at once, where no layer count is known)."""

from __future__ import annotations

from gpuscale.advice.model.network import DEFAULT_BUCKET_MB, FIRST_BUCKET_BYTES, MIB, Network
from gpuscale.advice.model.wording import phrase


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


# The strategies whose collectives ``sharded_collectives`` approximates from the ones
# the model knows (DDP's all-reduce, FSDP's all-gathers and reduce-scatter).
SHARDED = ("zero2", "hybrid")


def group_of(network: Network, n: int) -> int:
    """The devices hybrid sharding shards over at ``n``: one node's, or all where the
    network is one node."""
    return min(n, network.per_node or n)


def sharded_collectives(network: Network, n: int, strategy: str) -> list[tuple[str, int, float]]:
    """(op, ranks, share of the gradient bytes) of each collective a step of ``zero2``
    or ``hybrid`` issues, the one left after the backward last. Approximations, said
    where the strategy is advised: ZeRO-2 (FSDP ``SHARD_GRAD_OP``) as a reduce-scatter of
    the gradients and an all-gather of the updated weights, DDP's all-reduce volume in
    two collectives (Rajbhandari et al. 2020, section 7.2.1: the same volume as
    DDP's); hybrid sharding as FSDP's two all-gathers and reduce-scatter within a node,
    then an all-reduce of the node's shard over every device (the replicas' all-reduce
    across nodes, charged as one over the ``n`` ranks)."""
    if strategy == "zero2":
        return [("reduce_scatter", n, 1.0), ("all_gather", n, 1.0)]
    group = group_of(network, n)
    within = [
        ("all_gather", group, 1.0),
        ("all_gather", group, 1.0),
        ("reduce_scatter", group, 1.0),
    ]
    across = [("all_reduce", n, 1.0 / group)] if n > group else []
    return [c for c in [*within, *across] if c[1] > 1]


def latency_s(
    network: Network, grad_bytes: float, n: int, *, bucket_mb: float, strategy: str, units: int = 1
) -> float:
    """The latency part of ``comm_times_s`` (seconds): one latency per collective of the
    step, each at its own size (``Network.latency_part_s``: the latency of the protocol
    NCCL's model takes at that size, else a collective of one byte): DDP's buckets, or FSDP's two
    all-gathers and its reduce-scatter (three collectives, not DDP's buckets: for tf-30m
    at N = 8, DDP's seven buckets would be 0.98 ms of latency)."""
    if n < 2 or grad_bytes <= 0:
        return 0.0
    part = network.latency_part_s
    unit = grad_bytes / units  # each unit's collectives carry its share
    if strategy == "fsdp":
        return units * (2 * part(unit, n, "all_gather") + part(unit, n, "reduce_scatter"))
    if strategy in SHARDED:
        return units * sum(
            part(unit * share, k, op) for op, k, share in sharded_collectives(network, n, strategy)
        )
    return sum(count * part(size, n) for size, count in bucket_plan(grad_bytes, bucket_mb))


def comm_times_s(
    network: Network, grad_bytes: float, n: int, *, bucket_mb: float, strategy: str, units: int = 1
) -> tuple[float, float]:
    """(collectives per step, the last one) in seconds for DDP or FSDP: a sharded
    strategy's per unit of ``units``, the last unit's last collective the last one."""
    if n < 2:
        return 0.0, 0.0
    unit = grad_bytes / units
    if strategy == "fsdp":
        gather = network.time_s(unit, n, "all_gather")
        scatter = network.time_s(unit, n, "reduce_scatter")
        return units * (2 * gather + scatter), scatter
    if strategy in SHARDED:
        parts = sharded_collectives(network, n, strategy)
        times = [network.time_s(unit * share, k, op) for op, k, share in parts]
        return units * sum(times), times[-1]
    if strategy != "ddp":
        raise ValueError(phrase("strategy_unknown", strategy=strategy))
    times = [(network.time_s(size, n), count) for size, count in bucket_plan(grad_bytes, bucket_mb)]
    return sum(t * count for t, count in times), times[-1][0]


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
    on ``n`` devices communicates (``comm_times_s``, ``latency_s``), once per count; a
    sharded strategy's per unit of ``units`` (DDP's buckets do not depend on them)."""
    comm_s, last_s = comm_times_s(
        network, grad_bytes, n, bucket_mb=bucket_mb, strategy=strategy, units=units
    )
    latency = latency_s(network, grad_bytes, n, bucket_mb=bucket_mb, strategy=strategy, units=units)
    return comm_s, last_s, latency

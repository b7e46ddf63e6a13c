"""An alpha-beta model of one data-parallel (DDP) training step on N devices.

Sources: the ring all-reduce cost and the bus-bandwidth convention of nccl-tests
(``busbw = algbw * 2(n-1)/n``, so ``t = size * 2(n-1)/n / busbw``); Thakur, Rabenseifner
and Gropp, "Optimization of collective communication operations in MPICH" (2005) for the
ring and tree latency terms; PyTorch DDP (Li et al., VLDB 2020) for bucketed all-reduce
overlapped with backward.

With gradient bytes ``G``, bus bandwidth ``B`` (bytes/s), per-step latency ``a`` and
``k = ceil(G / bucket)`` buckets:

* ring:  ``t_ar = 2(N-1)/N * G / B + k * 2(N-1) * a``
* tree:  ``t_ar = 2(N-1)/N * G / B + k * 2 log2(N) * a`` (``auto`` takes the smaller)
* two levels (``nodes`` x ``per_node``): reduce-scatter inside the node, all-reduce of
  ``G / per_node`` between nodes, all-gather inside the node:
  ``t_ar = 2(g-1)/g * G / B_intra + 2(M-1)/M * (G/g) / B_inter + latencies``
* overlap: backward hides up to ``overlap * t_ar`` of it, never more than the backward
  time and never the last bucket: ``exposed = t_ar - min(overlap * (t_ar - t_last),
  t_backward)``
* stragglers: a synchronous step waits for the slowest of N devices, so with per-step
  compute times ``x`` measured at N = 1 it costs ``E[max of N draws of x] - E[x]`` more
  (Chen et al., "Revisiting distributed synchronous SGD", 2016); from the sorted m
  samples, ``E[max] = sum_i x_(i) ((i/m)^N - ((i-1)/m)^N)``.
* step: ``t_step(N) = t_forward + t_backward + t_optimizer + t_ddp + straggler(N) +
  exposed(N)``, where ``t_ddp`` is DDP's own per-step cost measured at N = 1
  (synchronised minus no-sync step: copying gradients into buckets and back), paid
  whatever N. Forward and backward per
  device are fixed (weak scaling) or divided by N (strong scaling, fixed global batch);
  the optimizer and ``t_ddp`` work per parameter, so they never shrink with N.
"""

from __future__ import annotations

import math
from dataclasses import dataclass


@dataclass(frozen=True, kw_only=True, slots=True)
class Link:
    """A link level: bus bandwidth (GB/s, nccl-tests convention) and latency (us)."""

    busbw_gbs: float
    latency_us: float
    name: str = "custom"

    def __post_init__(self) -> None:
        if not self.busbw_gbs > 0:
            raise ValueError(f"bus bandwidth must be positive, got {self.busbw_gbs} GB/s")
        if self.latency_us < 0:
            raise ValueError(f"latency must be >= 0, got {self.latency_us} us")


@dataclass(frozen=True, kw_only=True, slots=True)
class Compute:
    """Per-device compute of one step at the calibration batch (milliseconds)."""

    forward_ms: float
    backward_ms: float
    optimizer_ms: float
    batch: int
    ddp_overhead_ms: float = 0.0  # DDP bucket copies at N = 1 (see the module docstring)
    step_samples_ms: tuple[float, ...] = ()  # per-step compute times at N = 1 (jitter)

    def __post_init__(self) -> None:
        times = (self.forward_ms, self.backward_ms, self.optimizer_ms, self.ddp_overhead_ms)
        if min(times) < 0 or self.batch < 1:
            raise ValueError("compute times must be >= 0 and the batch >= 1")

    @property
    def total_ms(self) -> float:
        return self.forward_ms + self.backward_ms + self.optimizer_ms + self.ddp_overhead_ms

    def straggler_ms(self, n: int) -> float:
        """Expected wait for the slowest of ``n`` devices: E[max of n draws] - mean."""
        if n < 2 or len(self.step_samples_ms) < 2:
            return 0.0
        x = sorted(self.step_samples_ms)
        m = len(x)
        expected_max = sum(v * (((i + 1) / m) ** n - (i / m) ** n) for i, v in enumerate(x))
        return max(0.0, expected_max - sum(x) / m)

    def scaled(self, ratio: float) -> Compute:
        """The same step for a model ``ratio`` times larger (every term grows with it)."""
        return Compute(
            forward_ms=self.forward_ms * ratio,
            backward_ms=self.backward_ms * ratio,
            optimizer_ms=self.optimizer_ms * ratio,
            ddp_overhead_ms=self.ddp_overhead_ms * ratio,
            step_samples_ms=tuple(v * ratio for v in self.step_samples_ms),
            batch=self.batch,
        )


@dataclass(frozen=True, slots=True)
class CommTerms:
    """The all-reduce time split into its bandwidth and latency terms (seconds)."""

    bandwidth_s: float
    latency_s: float
    last_bucket_s: float

    @property
    def total_s(self) -> float:
        return self.bandwidth_s + self.latency_s


def _ring_factor(n: int) -> float:
    return 2 * (n - 1) / n if n > 1 else 0.0


def allreduce_terms(
    grad_bytes: float,
    n: int,
    link: Link,
    *,
    bucket_bytes: float = 25e6,
    algorithm: str = "ring",
    inter: Link | None = None,
    per_node: int | None = None,
) -> CommTerms:
    """All-reduce time of ``grad_bytes`` over ``n`` devices (see the module docstring)."""
    if grad_bytes < 0:
        raise ValueError("gradient bytes must be >= 0")
    if n < 1:
        raise ValueError("device count must be >= 1")
    if n == 1 or grad_bytes == 0:
        return CommTerms(0.0, 0.0, 0.0)
    buckets = max(1, math.ceil(grad_bytes / bucket_bytes))
    if inter is not None and per_node and n > per_node:
        if n % per_node:
            raise ValueError(f"{n} devices is not a whole number of {per_node}-device nodes")
        nodes = n // per_node
        bw = _ring_factor(per_node) * grad_bytes / (link.busbw_gbs * 1e9) + _ring_factor(nodes) * (
            grad_bytes / per_node
        ) / (inter.busbw_gbs * 1e9)
        lat = (
            buckets
            * (2 * (per_node - 1) * link.latency_us + 2 * (nodes - 1) * inter.latency_us)
            * 1e-6
        )
    else:
        bw = _ring_factor(n) * grad_bytes / (link.busbw_gbs * 1e9)
        steps = {"ring": 2 * (n - 1), "tree": 2 * math.log2(n)}
        if algorithm == "auto":
            per_bucket = min(steps.values())
        elif algorithm in steps:
            per_bucket = steps[algorithm]
        else:
            raise ValueError(f"algorithm is ring, tree or auto, not {algorithm!r}")
        lat = buckets * per_bucket * link.latency_us * 1e-6
    return CommTerms(bandwidth_s=bw, latency_s=lat, last_bucket_s=(bw + lat) / buckets)


def exposed_comm_s(terms: CommTerms, backward_s: float, overlap: float) -> float:
    """The all-reduce time backward does not hide (seconds)."""
    if not 0 <= overlap <= 1:
        raise ValueError(f"overlap must be in [0, 1], got {overlap}")
    hideable = overlap * (terms.total_s - terms.last_bucket_s)
    return terms.total_s - min(hideable, backward_s)


@dataclass(frozen=True, slots=True)
class StepPrediction:
    """One predicted step on ``n`` devices (seconds), with its parts."""

    n: int
    compute_s: float
    straggler_s: float
    bandwidth_s: float
    latency_s: float
    exposed_s: float
    step_s: float
    samples_per_s: float


def predict_step(
    compute: Compute,
    grad_bytes: float,
    n: int,
    link: Link,
    *,
    overlap: float = 0.5,
    bucket_bytes: float = 25e6,
    algorithm: str = "ring",
    strong: bool = False,
    inter: Link | None = None,
    per_node: int | None = None,
) -> StepPrediction:
    """Predicted step time and throughput on ``n`` devices.

    Weak scaling keeps ``compute.batch`` per device; ``strong`` splits it over ``n``
    (forward and backward divided by n; optimizer, DDP overhead and all-reduce unchanged).
    """
    scale = 1.0 / n if strong else 1.0
    per_sample_ms = (compute.forward_ms + compute.backward_ms) * scale
    compute_s = (per_sample_ms + compute.optimizer_ms + compute.ddp_overhead_ms) / 1e3
    # jitter shrinks with the work per device when the batch is split
    share = compute_s * 1e3 / compute.total_ms if compute.total_ms > 0 else 1.0
    straggler_s = compute.straggler_ms(n) / 1e3 * share
    backward_s = compute.backward_ms * scale / 1e3
    terms = allreduce_terms(
        grad_bytes,
        n,
        link,
        bucket_bytes=bucket_bytes,
        algorithm=algorithm,
        inter=inter,
        per_node=per_node,
    )
    exposed = exposed_comm_s(terms, backward_s, overlap)
    step = compute_s + straggler_s + exposed
    samples = compute.batch * (1 if strong else n)
    return StepPrediction(
        n=n,
        compute_s=compute_s,
        straggler_s=straggler_s,
        bandwidth_s=terms.bandwidth_s,
        latency_s=terms.latency_s,
        exposed_s=exposed,
        step_s=step,
        samples_per_s=samples / step,
    )

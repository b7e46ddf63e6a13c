"""One data-parallel training step on N devices: compute from FLOPs, communication from a
measured curve (an alpha-beta link only without one), overlap and DDP's own cost each
counted once.

Compute (one device, per-device batch ``b``, accumulation ``k``, ``P`` parameters, ``F``
forward + backward FLOPs per sample, achieved rate ``R``)::

    t_compute = k max(t_floor, t_fixed + b F / R) + t_opt P   (at a measured b: measured)

(``t_opt``: optimizer, per parameter; ``t_floor``: ``advice/step_shape.py``).

Communication: DDP all-reduces gradients in buckets, the first of 1 MiB
(``torch.distributed._DEFAULT_FIRST_BUCKET_BYTES``), the others ``bucket_mb`` MiB; each
bucket costs the measured all-reduce time at its size and device count (log-log
interpolation of a ``gpuscale collectives`` sweep) or, without a sweep, the ring model of
nccl-tests' convention ``t = 2(N-1)/N s / busbw + 2(N-1) alpha``. FSDP (full shard)
all-gathers parameters twice (forward, backward) and reduce-scatters gradients:
``2 t_ag(G) + t_rs(G)``. Across nodes NCCL builds its rings through the NICs, so the
bottleneck bus bandwidth is ``min(intra busbw, NICs per node x NIC busbw)`` (NCCL's ring
over all N ranks, one bandwidth term, not the two levels added), with latency the
smaller of the ring's and the tree's (``2 (log2 nodes alpha_inter + (g-1) alpha_intra)``):
NCCL picks the tree for small messages across nodes. A measured multi-node sweep replaces
the model for its own device count (and its bus bandwidth for other counts).

Step on N > 1 devices::

    t_step = t_compute + t_ddp + t_wait(N) + t_exposed
    t_exposed = t_ar - min(omega t_ar, t_backward of the last micro-step)

``t_ddp`` is DDP's own per-step work (bucket copies), measured at N = 1 as the
synchronised minus no-sync step, per parameter; ``omega`` the share of the all-reduce that
backward hid, measured by ``gpuscale bench`` (``1 - exposed / comm``); without a
measurement the default also never hides the last bucket (it is ready only when backward
ends). ``t_wait(N)`` is the expected wait for the slowest of N devices,
``E[max of N draws] - mean`` of the per-step compute times measured at N = 1 (Chen et al.,
"Revisiting distributed synchronous SGD", 2016), or, where the bench ran N devices, the
measured growth of the no-sync step over N = 1 (waiting and contention for shared
cores). On one device there is no DDP: ``t_step = t_compute``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from gpuscale.hardware.links import get_preset

MIB = 2**20
FIRST_BUCKET_BYTES = 1 * MIB  # torch.distributed._DEFAULT_FIRST_BUCKET_BYTES
DEFAULT_BUCKET_MB = 25.0  # DistributedDataParallel(bucket_cap_mb=25): MiB
DEFAULT_OVERLAP = 0.5  # an accelerator's share of communication hidden, when unmeasured


def ring_factor(n: int) -> float:
    """nccl-tests' bus-bandwidth factor of all-reduce: ``2(n-1)/n``."""
    return 2 * (n - 1) / n if n > 1 else 0.0


# Bytes each collective moves per rank, as a multiple of its size, over the all-reduce's.
_OP_SHARE = {"all_reduce": 1.0, "all_gather": 0.5, "reduce_scatter": 0.5}


@dataclass(frozen=True, kw_only=True, slots=True)
class Link:
    """A link: bus bandwidth (GB/s, nccl-tests' convention) and per-step latency (us)."""

    busbw_gbs: float
    latency_us: float
    name: str = "custom"

    def __post_init__(self) -> None:
        if not (self.busbw_gbs > 0 and math.isfinite(self.busbw_gbs)):
            raise ValueError(f"bus bandwidth must be positive, got {self.busbw_gbs} GB/s")
        if not (self.latency_us >= 0 and math.isfinite(self.latency_us)):
            raise ValueError(f"latency must be >= 0, got {self.latency_us} us")

    @classmethod
    def from_preset(cls, name: str) -> Link:
        """A preset of ``gpuscale.hardware.links`` (``ValueError`` lists them)."""
        try:
            preset = get_preset(name)
        except KeyError as exc:
            raise ValueError(exc.args[0]) from None
        return cls(busbw_gbs=preset.busbw_gbs, latency_us=preset.latency_us, name=preset.name)

    def time_s(self, size_bytes: float, n: int, op: str = "all_reduce") -> float:
        """Ring time of one collective of ``size_bytes`` on ``n`` ranks."""
        if n < 2 or size_bytes <= 0:
            return 0.0
        share = _OP_SHARE[op]
        return share * (
            ring_factor(n) * size_bytes / (self.busbw_gbs * 1e9)
            + 2 * (n - 1) * self.latency_us * 1e-6
        )


@dataclass(frozen=True, slots=True)
class CommCurve:
    """A measured collective: time (s) at each size (bytes) on ``ranks`` ranks."""

    op: str
    ranks: int
    sizes: tuple[float, ...]
    times_s: tuple[float, ...]

    def time_s(self, size_bytes: float) -> float:
        """Log-log interpolation inside the sweep; below it the smallest size's time,
        above it the largest's plus the rest at the largest size's bandwidth."""
        if size_bytes <= 0:
            return 0.0
        sizes, times = np.asarray(self.sizes), np.asarray(self.times_s)
        if size_bytes <= sizes[0]:
            return float(times[0])
        if size_bytes >= sizes[-1]:
            return float(times[-1] * size_bytes / sizes[-1])
        return float(np.exp(np.interp(np.log(size_bytes), np.log(sizes), np.log(times))))

    def busbw_gbs(self, size_bytes: float) -> float:
        """The bus bandwidth the curve reaches at a size (nccl-tests' convention)."""
        share = _OP_SHARE[self.op]
        return share * ring_factor(self.ranks) * size_bytes / self.time_s(size_bytes) / 1e9


@dataclass(frozen=True, kw_only=True, slots=True)
class Network:
    """Where gradients travel: the link inside a node, optionally nodes of ``per_node``
    devices joined by ``nics_per_node`` NICs of the ``inter`` link, and measured curves
    (which win where they exist). ``comm_scale`` multiplies every time: the measured
    communication inside DDP over the curve's (contention with compute), 1 when unknown."""

    intra: Link
    per_node: int | None = None
    inter: Link | None = None
    nics_per_node: int | None = None
    curves: tuple[CommCurve, ...] = ()
    comm_scale: float = 1.0

    def __post_init__(self) -> None:
        if not (self.comm_scale > 0 and math.isfinite(self.comm_scale)):
            raise ValueError(f"communication scale must be positive, got {self.comm_scale}")
        if self.per_node is not None and self.per_node < 1:
            raise ValueError("devices per node must be >= 1")

    @property
    def name(self) -> str:
        if self.inter is None or not self.per_node:
            return self.intra.name
        return f"{self.intra.name} x {self.per_node}, {self.inter.name} between nodes"

    def spans_nodes(self, n: int) -> bool:
        return bool(self.inter is not None and self.per_node and n > self.per_node)

    def _curve(self, op: str, n: int) -> tuple[CommCurve, bool] | None:
        """The curve measured at ``n`` ranks (exact), else the nearest one on the same
        side of the node boundary (converted by ring factors)."""
        same = [
            c
            for c in self.curves
            if c.op == op and self.spans_nodes(c.ranks) == self.spans_nodes(n)
        ]
        if not same:
            return None
        best = min(same, key=lambda c: (abs(math.log(c.ranks / n)), -c.ranks))
        return best, best.ranks == n

    def time_s(self, size_bytes: float, n: int, op: str = "all_reduce") -> float:
        """One collective of ``size_bytes`` on ``n`` devices (seconds)."""
        if n < 2 or size_bytes <= 0:
            return 0.0
        found = self._curve(op, n)
        if found is not None:
            curve, exact = found
            t = curve.time_s(size_bytes)
            if not exact:
                t *= ring_factor(n) / ring_factor(curve.ranks)
            return t * self.comm_scale
        if not self.spans_nodes(n):
            return self.intra.time_s(size_bytes, n, op) * self.comm_scale
        assert self.inter is not None and self.per_node
        nodes = math.ceil(n / self.per_node)
        nics = self.nics_per_node or self.per_node
        busbw = min(self.intra.busbw_gbs, nics * self.inter.busbw_gbs)
        ring_lat = 2 * (nodes - 1) * self.inter.latency_us + 2 * (n - nodes) * self.intra.latency_us
        tree_lat = 2 * (
            math.log2(nodes) * self.inter.latency_us + (self.per_node - 1) * self.intra.latency_us
        )
        bandwidth = ring_factor(n) * size_bytes / (busbw * 1e9)
        t = _OP_SHARE[op] * (bandwidth + min(ring_lat, tree_lat) * 1e-6)
        return t * self.comm_scale


def bucket_plan(grad_bytes: float, bucket_mb: float = DEFAULT_BUCKET_MB) -> list[tuple[float, int]]:
    """DDP's buckets as (size in bytes, how many) in the order they are all-reduced: a
    first bucket of 1 MiB, then ``bucket_mb`` MiB buckets, the last holding the rest."""
    if grad_bytes <= 0:
        return []
    if bucket_mb <= 0:
        raise ValueError(f"bucket size must be positive, got {bucket_mb} MiB")
    first = min(float(FIRST_BUCKET_BYTES), grad_bytes)
    rest = grad_bytes - first
    cap = bucket_mb * MIB
    full = int(rest // cap)
    tail = rest - full * cap
    plan = [(first, 1)] + ([(cap, full)] if full else []) + ([(tail, 1)] if tail > 0 else [])
    return plan


def ddp_buckets(grad_bytes: float, bucket_mb: float = DEFAULT_BUCKET_MB) -> list[float]:
    """Every bucket's size (bytes), in all-reduce order (see ``bucket_plan``)."""
    return [size for size, count in bucket_plan(grad_bytes, bucket_mb) for _ in range(count)]


@dataclass(frozen=True, kw_only=True, slots=True)
class ModelSpec:
    """What the step model needs of a model: parameters, forward + backward FLOPs per
    sample (``6 P`` for a dense network when unmeasured: 2 forward, 4 backward), and
    bytes per gradient element."""

    params: float
    flops_per_sample: float | None = None
    grad_bytes_per_param: float = 4.0

    def __post_init__(self) -> None:
        if not (self.params > 0 and math.isfinite(self.params)):
            raise ValueError(f"parameters must be positive, got {self.params}")
        if self.flops_per_sample is not None and not self.flops_per_sample > 0:
            raise ValueError(f"FLOPs per sample must be positive, got {self.flops_per_sample}")
        if self.grad_bytes_per_param not in (1, 2, 4, 8):
            raise ValueError("bytes per gradient element must be 1, 2, 4 or 8")

    @property
    def flops(self) -> float:
        return self.flops_per_sample if self.flops_per_sample is not None else 6.0 * self.params

    @property
    def grad_bytes(self) -> float:
        return self.params * self.grad_bytes_per_param

    def resized(self, params: float) -> ModelSpec:
        """The same family at another size: FLOPs per sample per parameter kept."""
        return ModelSpec(
            params=params,
            flops_per_sample=self.flops / self.params * params,
            grad_bytes_per_param=self.grad_bytes_per_param,
        )


@dataclass(frozen=True, kw_only=True, slots=True)
class Compute:
    """One device's step: ``k micro(b) + opt_ms_per_mparam P / 1e6``, plus DDP's own
    ``ddp_ms_per_mparam`` on N > 1 (see the module docstring)."""

    tflops: float  # achieved R on the per-sample work, TFLOP/s
    fixed_ms: float = 0.0
    floor_ms: float = 0.0  # launch-bound floor of the micro-step (0: a line in the batch)
    measured_ms: tuple[tuple[float, float], ...] = ()  # (batch, forward + backward ms)
    opt_ms_per_mparam: float = 0.0
    ddp_ms_per_mparam: float = 0.0
    backward_share: float = 2 / 3  # of the per-sample work: backward is ~2x forward
    jitter_ms: tuple[float, ...] = field(default=())  # N = 1 step times less their mean
    jitter_ref_ms: float = 0.0  # the compute time those steps took on average
    # (N, no-sync step at N / at 1) measured: waiting and contention together
    slowdown: tuple[tuple[int, float], ...] = ()

    def __post_init__(self) -> None:
        if not (self.tflops > 0 and math.isfinite(self.tflops)):
            raise ValueError(f"achieved rate must be positive, got {self.tflops} TFLOP/s")
        if min(self.fixed_ms, self.floor_ms, self.opt_ms_per_mparam, self.ddp_ms_per_mparam) < 0:
            raise ValueError("compute times must be >= 0")
        if not 0 <= self.backward_share <= 1:
            raise ValueError("the backward share must be in [0, 1]")

    def sample_work_ms(self, model: ModelSpec, batch: float) -> float:
        return batch * model.flops / (self.tflops * 1e12) * 1e3

    def micro_ms(self, model: ModelSpec, batch: float) -> float:
        """One micro-step's forward + backward at per-device ``batch``: as measured at a
        batch the bench timed, else ``max(floor, fixed + per-sample work)``
        (``advice/step_shape.py``): the one place the step meets the batch."""
        measured = [ms for b, ms in self.measured_ms if abs(b - batch) < 1e-9]
        if measured:
            return measured[0]
        return max(self.floor_ms, self.fixed_ms + self.sample_work_ms(model, batch))

    def is_measured(self, batch: float) -> bool:  # the micro-step at ``batch``
        return any(abs(b - batch) < 1e-9 for b, _ in self.measured_ms)

    def compute_ms(self, model: ModelSpec, batch: float, accum: int = 1) -> float:
        return accum * self.micro_ms(model, batch) + self.opt_ms_per_mparam * model.params / 1e6

    def wait_ms(self, n: int, compute_ms: float) -> float:
        """Expected wait for the slowest of ``n`` devices: measured where the bench ran
        ``n`` devices (the no-sync step's growth over N = 1, which also holds contention
        for shared cores or memory), else E[max of n] - mean of the N = 1 step times;
        scaled to this step's compute."""
        if n < 2:
            return 0.0
        measured = dict(self.slowdown).get(n)
        if measured is not None:
            return max(0.0, measured - 1) * compute_ms
        if len(self.jitter_ms) < 2:
            return 0.0
        x = np.sort(np.asarray(self.jitter_ms, float))
        m = len(x)
        i = np.arange(1, m + 1)
        expected_max = float(np.sum(x * ((i / m) ** n - ((i - 1) / m) ** n)))
        scale = compute_ms / self.jitter_ref_ms if self.jitter_ref_ms > 0 else 1.0
        return max(0.0, expected_max - float(x.mean())) * scale


@dataclass(frozen=True, slots=True)
class Step:
    """One predicted optimizer step on ``n`` devices (milliseconds), with its parts."""

    n: int
    batch_per_device: float
    accum: int
    compute_ms: float
    ddp_ms: float
    wait_ms: float
    comm_ms: float  # collectives in flight
    last_bucket_ms: float
    exposed_ms: float  # what backward did not hide
    step_ms: float

    @property
    def global_batch(self) -> float:
        return self.n * self.batch_per_device * self.accum

    @property
    def samples_per_s(self) -> float:
        return self.global_batch / self.step_ms * 1e3


def comm_times_s(
    network: Network, grad_bytes: float, n: int, *, bucket_mb: float, strategy: str
) -> tuple[float, float]:
    """(collectives per step, the last one) in seconds for DDP or FSDP."""
    if n < 2:
        return 0.0, 0.0
    if strategy == "fsdp":
        gather = network.time_s(grad_bytes, n, "all_gather")
        scatter = network.time_s(grad_bytes, n, "reduce_scatter")
        return 2 * gather + scatter, scatter
    if strategy != "ddp":
        raise ValueError(f"strategy is ddp or fsdp, not {strategy!r}")
    times = [(network.time_s(size, n), count) for size, count in bucket_plan(grad_bytes, bucket_mb)]
    return sum(t * count for t, count in times), times[-1][0]


def predict_step(
    model: ModelSpec,
    compute: Compute,
    network: Network,
    n: int,
    *,
    batch: float,
    accum: int = 1,
    overlap: float | None = None,
    bucket_mb: float = DEFAULT_BUCKET_MB,
    strategy: str = "ddp",
) -> Step:
    """The predicted step of ``model`` on ``n`` devices, ``batch`` samples per device per
    micro-step and ``accum`` micro-steps per optimizer step. ``overlap`` is the measured
    share of communication hidden; None uses ``DEFAULT_OVERLAP`` capped at all but the
    last bucket."""
    if n < 1 or not batch > 0 or accum < 1:
        raise ValueError("device count and accumulation must be >= 1, the batch positive")
    compute_ms = compute.compute_ms(model, batch, accum)
    if n == 1:
        return Step(1, batch, accum, compute_ms, 0.0, 0.0, 0.0, 0.0, 0.0, compute_ms)
    comm_s, last_s = comm_times_s(
        network, model.grad_bytes, n, bucket_mb=bucket_mb, strategy=strategy
    )
    backward_ms = compute.backward_share * compute.micro_ms(model, batch)
    # contention measured at n stretches backward too: it hides the communication longer
    backward_ms *= max(1.0, dict(compute.slowdown).get(n, 1.0))
    if overlap is None:
        hidden_ms = min(DEFAULT_OVERLAP * comm_s, comm_s - last_s) * 1e3
    elif 0 <= overlap <= 1:
        hidden_ms = overlap * comm_s * 1e3
    else:
        raise ValueError(f"overlap must be in [0, 1], got {overlap}")
    exposed_ms = comm_s * 1e3 - min(hidden_ms, backward_ms)
    ddp_ms = compute.ddp_ms_per_mparam * model.params / 1e6 if strategy == "ddp" else 0.0
    wait_ms = compute.wait_ms(n, compute_ms)
    step_ms = compute_ms + ddp_ms + wait_ms + exposed_ms
    return Step(
        n,
        batch,
        accum,
        compute_ms,
        ddp_ms,
        wait_ms,
        comm_s * 1e3,
        last_s * 1e3,
        exposed_ms,
        step_ms,
    )

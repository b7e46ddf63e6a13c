"""One device's compute (``Compute`` of a ``ModelSpec``) and one data-parallel step on N
devices (``step_table``, ``step_at``), with ``t_ar``, kappa and sigma from ``network.py``.
Per-device batch ``b``, accumulation ``k``, ``P`` parameters, ``F`` forward + backward FLOPs
per sample, achieved rate ``R``, the optimizer's ``t_opt`` per parameter (split over the
devices that shard it), FSDP's own work on one rank ``t_own``::

    t_compute = k max(t_floor, t_fixed + b F / R) + t_opt P   (at a measured b: measured)
    t_step = t_compute + t_ddp + t_wait(N) + t_exposed        (N = 1: t_compute - k t_own)
    t_exposed = t_ar - omega t_ar                  (omega measured or given)
    t_exposed = t_ar - t_hidden + kappa t_hidden   (omega_0 assumed)
    t_hidden = min(omega_0 t_ar, t_ar - t_unhidden, t_backward (1 + t_wait / t_compute))

``t_ddp``: DDP's own work (bucket copies), the synchronised minus no-sync step at N = 1, per
parameter. ``t_wait(N)``: ``E[max of N draws] - mean`` of the N = 1 step times (Chen et al.,
"Revisiting distributed synchronous SGD", 2016), within the measured growth of the no-sync
step over N = 1; where nothing measured the ranks' spread, at least ``sigma E[max of N
standard normals] t_compute``. ``omega``: ``1 - exposed / comm`` of the bench's runs;
``omega_0``: by link class (``network.count_overlap``)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Protocol

import numpy as np

from gpuscale.advice.model.network import Collectives, collectives
from gpuscale.advice.model.priors import (
    DDP_COPIES,
    DEFAULT_BUCKET_MB,
    NORMAL_20,
    REFERENCE_MEMORY_GBS,
    STEP_SPREAD,
    phrase,
)
from gpuscale.interconnect.network import Network


def work_ms(samples: float, flops_per_sample: float, tflops: float) -> float:
    """``b F / (R 1e12) 1e3``: ms."""
    return samples * flops_per_sample / (tflops * 1e12) * 1e3


def per_step_ms(ms_per_mparam: float, params: float) -> float:
    """``t P / 1e6``: ms of a time per million parameters."""
    return ms_per_mparam * params / 1e6


def rate_tflops(samples: float, flops_per_sample: float, ms: float) -> float:
    """``b F / (t / 1e3) / 1e12``: TFLOP/s."""
    return samples * flops_per_sample / (ms / 1e3) / 1e12


@dataclass(frozen=True, kw_only=True, slots=True)
class ModelSpec:
    """A model as the step sees it: parameters, forward + backward FLOPs per sample (None:
    ``6 P``), bytes per gradient element, and the units FSDP wraps (a transformer's layers)."""

    params: float
    flops_per_sample: float | None = None
    grad_bytes_per_param: float = 4.0
    units: int = 1

    def __post_init__(self) -> None:
        if not (self.params > 0 and math.isfinite(self.params)):
            raise ValueError(f"parameters must be positive, got {self.params}")
        if self.flops_per_sample is not None and not self.flops_per_sample > 0:
            raise ValueError(phrase("flops_positive", flops=self.flops_per_sample))
        if self.grad_bytes_per_param not in (1, 2, 4, 8):
            raise ValueError(phrase("grad_bytes"))
        if self.units < 1:
            raise ValueError(f"FSDP units must be at least 1, got {self.units}")

    @property
    def flops(self) -> float:
        return self.flops_per_sample or 6.0 * self.params

    @property
    def grad_bytes(self) -> float:
        return self.params * self.grad_bytes_per_param

    def copies_ms(self, memory_gbs: float | None) -> float:
        """DDP's bucket copies, ms: ``DDP_COPIES`` bytes per gradient byte at ``memory_gbs``
        GB/s (None: ``REFERENCE_MEMORY_GBS``)."""
        return DDP_COPIES * self.grad_bytes / (memory_gbs or REFERENCE_MEMORY_GBS) / 1e6

    def ddp_ms_per_mparam(self, rest_ms: float, memory_gbs: float | None) -> float:
        """DDP's own work per million parameters: ``rest_ms`` (hooks) plus the copies."""
        return (rest_ms + self.copies_ms(memory_gbs)) / (self.params / 1e6)

    def resized(self, params: float, flops_per_param: float | None = None) -> ModelSpec:
        """The family at ``params``: this model's FLOPs per parameter (or ``flops_per_param``)."""
        per_param = self.flops / self.params if flops_per_param is None else flops_per_param
        return ModelSpec(
            params=params,
            flops_per_sample=per_param * params,
            grad_bytes_per_param=self.grad_bytes_per_param,
        )


@dataclass(frozen=True, kw_only=True, slots=True)
class Compute:
    """One device's ``t_compute`` (DDP's own per parameter and the wait: on N > 1)."""

    tflops: float  # achieved R on the per-sample work, TFLOP/s
    fixed_ms: float = 0.0
    floor_ms: float = 0.0  # launch-bound floor of the micro-step (0: a line in the batch)
    measured_ms: tuple[tuple[float, float], ...] = ()  # (batch, forward + backward ms)
    opt_ms_per_mparam: float = 0.0
    ddp_ms_per_mparam: float = 0.0
    backward_share: float = 2 / 3  # of the per-sample work: backward is ~2x forward
    jitter_ms: tuple[float, ...] = ()  # N = 1 step times less their mean
    jitter_ref_ms: float = 0.0  # the compute time those steps took on average
    # a prior's spread (``with_priors``): it scales with ``fixed_ms`` over this; None: measured
    jitter_fixed_ref_ms: float | None = None
    # (N, no-sync step at N / at 1) measured: waiting and contention together
    slowdown: tuple[tuple[int, float], ...] = ()
    # of each micro-step, FSDP's one-rank step less the bare module's: left out at N = 1
    one_rank_own_ms: float = 0.0

    def __post_init__(self) -> None:
        if not (self.tflops > 0 and math.isfinite(self.tflops)):
            raise ValueError(phrase("rate_positive", tflops=self.tflops))
        times = (self.fixed_ms, self.floor_ms, self.opt_ms_per_mparam, self.ddp_ms_per_mparam)
        if min(*times, self.one_rank_own_ms) < 0:
            raise ValueError("compute times must be >= 0")
        if not 0 <= self.backward_share <= 1:
            raise ValueError("the backward share must be in [0, 1]")

    def measured_at(self, batch: float) -> float | None:
        return next((ms for b, ms in self.measured_ms if abs(b - batch) < 1e-9), None)

    def micro_ms(self, model: ModelSpec, batch: float) -> float:
        """One micro-step: as measured, else ``max(floor, fixed + per-sample work)``."""
        measured = self.measured_at(batch)
        if measured is not None:
            return measured
        return max(self.floor_ms, self.fixed_ms + work_ms(batch, model.flops, self.tflops))

    def resplit(self, model: ModelSpec, batch: float, fixed_ms: float) -> Compute:
        """``fixed_ms`` as the fixed cost, the micro-step at ``batch`` (not a floor) kept."""
        micro = self.micro_ms(model, batch)
        fixed = min(max(fixed_ms, 0.0), micro * (1 - 1e-6))
        tflops = rate_tflops(batch, model.flops, micro - fixed)
        return replace(self, fixed_ms=fixed, floor_ms=0.0, tflops=tflops)

    def compute_ms(self, model: ModelSpec, batch: float, accum: int = 1, shards: int = 1) -> float:
        """``accum`` micro-steps and the optimizer step over ``shards`` devices."""
        opt_ms = per_step_ms(self.opt_ms_per_mparam, model.params)
        return accum * self.micro_ms(model, batch) + opt_ms / shards

    def held_slowdown(self) -> tuple[tuple[int, float], ...]:
        """The measured slowdowns from N = 1 up, each at least those below it (a lower figure
        at more devices is one run's noise)."""
        held, most = [], 1.0
        for n, s in sorted(self.slowdown):
            most = max(most, s)
            held.append((n, most))
        return tuple(held)

    def slowdown_bounds(self, n: int) -> tuple[float, float]:
        """(low, high) slowdown at ``n``: the measured one, else interpolated in log N between
        the nearest counts measured below (N = 1: x1) and above (high: the one above)."""
        held = ((1, 1.0), *((k, s) for k, s in self.held_slowdown() if k > 1))
        below = max((k, s) for k, s in held if k <= n)
        above = [(k, s) for k, s in held if k > n]
        if below[0] == n:
            return below[1], below[1]
        if not above:
            return below[1], math.inf
        (k0, s0), (k1, s1) = below, min(above)
        share = math.log(n / k0) / math.log(k1 / k0)
        return s0 + share * (s1 - s0), s1

    def wait_ms(self, n: int, compute_ms: float) -> float:
        """The wait for the slowest of ``n``: ``E[max of n] - mean`` of the N = 1 step times
        (their order statistics) scaled to ``compute_ms`` (a host's spread: to the fixed
        cost), within ``slowdown_bounds``."""
        if n < 2:
            return 0.0
        low, high = self.slowdown_bounds(n)
        at_most = (high - 1) * compute_ms if math.isfinite(high) else math.inf
        expected_ms = 0.0
        if len(self.jitter_ms) >= 2:
            x = np.sort(np.asarray(self.jitter_ms, float))
            m = len(x)
            i = np.arange(1, m + 1)
            expected_max = float(np.sum(x * ((i / m) ** n - ((i - 1) / m) ** n)))
            scale = compute_ms / self.jitter_ref_ms if self.jitter_ref_ms > 0 else 1.0
            if self.jitter_fixed_ref_ms:
                scale = self.fixed_ms / self.jitter_fixed_ref_ms
            expected_ms = max(0.0, expected_max - float(x.mean())) * scale
        return max((low - 1) * compute_ms, min(at_most, expected_ms))


def with_priors(compute: Compute, step: float, which: str) -> Compute:
    """``compute`` (``step`` ms) with the step's spread of its prior at ``which`` end."""
    sd_ms = STEP_SPREAD.at(which) * compute.fixed_ms
    return replace(
        compute,
        jitter_ms=tuple(step + sd_ms * q for q in NORMAL_20),
        jitter_fixed_ref_ms=compute.fixed_ms,  # the host's: it scales with the fixed cost
    )


@dataclass(frozen=True, slots=True)
class Step:
    """One predicted optimizer step on ``n`` devices (milliseconds), with its parts."""

    n: int
    batch_per_device: float
    accum: int
    compute_ms: float
    step_ms: float
    ddp_ms: float = 0.0
    wait_ms: float = 0.0
    comm_ms: float = 0.0  # collectives in flight
    exposed_ms: float = 0.0  # what backward did not hide
    latency_ms: float = 0.0  # of ``comm_ms``: one latency per collective
    measured: bool = False  # one device's forward + backward at this batch was measured
    link: str | None = None  # the count's link class (``network.Collectives.link``)

    @property
    def global_batch(self) -> float:
        return self.n * self.batch_per_device * self.accum

    @property
    def samples_per_s(self) -> float:
        return self.global_batch / self.step_ms * 1e3


class StepSettings(Protocol):
    """A step's settings beside the model, compute, network and counts (``calibration.Run``)."""

    overlap: float | None
    bucket_mb: float
    strategy: str


@dataclass(frozen=True, slots=True)
class Settings:
    overlap: float | None = None
    bucket_mb: float = DEFAULT_BUCKET_MB
    strategy: str = "ddp"


# A candidate of the search: (devices, per-device batch, accumulation)
Candidate = tuple[int, float, int]


def _step(
    model: ModelSpec,
    compute: Compute,
    settings: StepSettings,
    shards: int,
    net: Collectives,
    candidate: Candidate,
) -> Step:
    n, batch, accum = candidate
    micro_ms = compute.micro_ms(model, batch)
    compute_ms = compute.compute_ms(model, batch, accum, shards)
    said = {"measured": compute.measured_at(batch) is not None, "link": net.link}
    if n == 1:
        compute_ms -= accum * min(compute.one_rank_own_ms, micro_ms)
        return Step(1, batch, accum, compute_ms, compute_ms, **said)
    wait_ms = compute.wait_ms(n, compute_ms)
    backward_ms = compute.backward_share * micro_ms
    if compute_ms > 0:
        backward_ms *= 1 + wait_ms / compute_ms
    ddp_ms = 0.0
    if settings.strategy == "ddp":
        ddp_ms = per_step_ms(compute.ddp_ms_per_mparam, model.params)
    comm_ms = net.comm_s * 1e3
    if settings.overlap is None:
        hideable_ms = (net.comm_s - net.unhidden_s) * 1e3
        hidden_ms = min(net.overlap * net.comm_s * 1e3, hideable_ms, backward_ms)
        contention_ms = net.contention_share * max(hidden_ms, 0.0)
    else:  # measured or given: as it is, its contention in it
        hidden_ms, contention_ms = settings.overlap * net.comm_s * 1e3, 0.0
    # the fitted straggler term where nothing measured the wait (no slowdown, no steps timed)
    if not compute.slowdown and (not compute.jitter_ms or compute.jitter_fixed_ref_ms is not None):
        wait_ms = max(wait_ms, net.straggler_share * compute_ms)
    exposed_ms = comm_ms - hidden_ms + contention_ms
    step_ms = compute_ms + ddp_ms + wait_ms + exposed_ms
    parts_ms = (ddp_ms, wait_ms, comm_ms, exposed_ms, net.latency_s * 1e3)
    return Step(n, batch, accum, compute_ms, step_ms, *parts_ms, **said)


def optimizer_shards(network: Network, n: int, strategy: str) -> int:
    """The devices the optimizer step is split over on ``n``: 1 under DDP, ``n`` under FSDP
    and ZeRO-2 (each rank steps its shard: Zhao et al., "PyTorch FSDP", VLDB 2023), one
    node's under hybrid sharding (its group, which it also gathers and scatters over)."""
    group = min(n, network.per_node or n)
    return {"fsdp": n, "zero2": n, "hybrid": group}.get(strategy, 1)


def step_table(
    network: Network,
    settings: StepSettings,
    model: ModelSpec,
    computes: Sequence[Compute],
    candidates: Sequence[Candidate],
    resplit: Sequence[tuple[float, float]] = (),
) -> tuple[tuple[Step, ...], ...]:
    """Each candidate's step at each of ``computes`` (the point, then its ranges' ends) and at
    the first ``resplit`` at each (batch, fixed ms) (the fixed cost's range), a row each;
    the network's part of each count looked up once."""
    if any(n < 1 or not batch > 0 or accum < 1 for n, batch, accum in candidates):
        raise ValueError(phrase("step_counts"))
    if settings.overlap is not None and not 0 <= settings.overlap <= 1:
        raise ValueError(f"overlap must be in [0, 1], got {settings.overlap}")
    every = [*computes, *(computes[0].resplit(model, batch, ms) for batch, ms in resplit)]
    shards = {n: optimizer_shards(network, n, settings.strategy) for n, _, _ in candidates}
    nets = {
        n: collectives(
            network,
            model.grad_bytes,
            n,
            bucket_mb=settings.bucket_mb,
            strategy=settings.strategy,
            units=model.units,
            group=group,
        )
        for n, group in shards.items()
    }
    return tuple(
        tuple(_step(model, c, settings, shards[n], nets[n], (n, b, k)) for c in every)
        for n, b, k in candidates
    )


def step_at(
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
    settings = Settings(overlap, bucket_mb, strategy)
    ((step,),) = step_table(network, settings, model, (compute,), ((n, batch, accum),))
    return step

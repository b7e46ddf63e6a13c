"""One data-parallel step on N devices (``step_table``; one step: ``step_at``), from one
device's compute (``compute.py``) and the communication ``t_ar``, kappa and sigma
(``network.py``)::

    t_step = t_compute + t_ddp + t_wait(N) + t_exposed
    t_exposed = t_ar - omega t_ar                  (omega measured or given)
    t_exposed = t_ar - t_hidden + kappa t_hidden   (omega_0 assumed)
    t_hidden = min(omega_0 t_ar, t_ar - t_last, t_backward (1 + t_wait / t_compute))

``t_ddp``: DDP's own work (bucket copies), the synchronised minus no-sync step at N = 1,
per parameter. ``t_wait(N)``: ``E[max of N draws] - mean`` of the N = 1 step times (Chen et
al., "Revisiting distributed synchronous SGD", 2016), within the measured growth of the
no-sync step over N = 1; where nothing measured the ranks' spread, at least
``sigma E[max of N standard normals] t_compute``. ``omega``: ``1 - exposed / comm`` of the
bench's runs; ``omega_0``: by link class (``priors.assumed_overlap``)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from gpuscale.advice.model.compute import Compute, ModelSpec, per_step_ms
from gpuscale.advice.model.network import Collectives, collectives
from gpuscale.advice.model.priors import (
    DEFAULT_BUCKET_MB,
    assumed_overlap,
    phrase,
)
from gpuscale.interconnect.network import Network


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
        not_last_ms = (net.comm_s - net.last_s) * 1e3
        hidden_ms = min(assumed_overlap(net.link) * net.comm_s * 1e3, not_last_ms, backward_ms)
        contention_ms = net.contention_share * max(hidden_ms, 0.0)
    else:  # measured or given: as it is, its contention in it
        hidden_ms, contention_ms = settings.overlap * net.comm_s * 1e3, 0.0
    # the fitted straggler term where nothing measured the wait (no slowdown, no steps timed)
    if not compute.slowdown and (not compute.jitter_ms or compute.jitter_fixed_ref_ms > 0):
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

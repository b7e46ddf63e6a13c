"""A bench record's measured fields from every rank's raw measurements: the step of the
slowest rank (a synchronised step waits for it), the phases, throughput, memory, power,
the gradient norms for the noise scale, and of ``--repeat`` runs the median one. Pure
Python over what the ranks gathered; no torch, so it is tested without a process group.
"""

from __future__ import annotations

import math
import statistics

from gpuscale.bench.config import BenchConfig
from gpuscale.bench.record import conv_share
from gpuscale.bench.results import StepStats
from gpuscale.bench.telemetry import host_busy, mean_of, run_queue
from gpuscale.hardware.peaks import mfu, peak_for
from gpuscale.plausibility import UNMEASURED_HOST, measured_host, same_samples

# how a run's peak memory was read: torch's allocator on a GPU, else the rank's RSS
_PEAK_MEMORY_KIND = {"cuda": "cuda_max_allocated"}


def measured_fields(
    cfg: BenchConfig,
    device_type: str,
    world: int,
    micro: int,
    flops: float | None,
    grad_bytes: int,
    bucket_bytes: list[int] | None,
    gathered: list[dict[str, object]],
    global_sq: list[float],
    small_batch: int | None = None,
) -> dict[str, object]:
    """The record's measured fields (``gathered``: one dict per rank with its step times
    by kind, communication times, peak memory, meter summary, host samples and local
    gradient norms; ``bucket_bytes`` None without a communication meter).
    ``samples_per_s = micro x accum x N / step``; achieved TFLOP/s per device
    ``= FLOPs per sample x samples_per_s / N``. At N = 1 with ``small_batch`` the bare
    module was also timed at that batch: the fixed per-step cost (``fixed_cost``)."""
    timing = _timing(gathered, micro * cfg.accum * world, bucket_bytes is not None)
    timing.update(fixed_cost(gathered, small_batch, micro))
    duplicated = world > 1 and same_samples([g["local_sq"] for g in gathered], global_sq)
    samples_per_s = timing["samples_per_s"]
    achieved = flops * samples_per_s / world / 1e12 if flops else None
    meters = [g["meter"] for g in gathered if g["meter"]]
    starts, ends, hosts = (list(x) for x in zip(*(g["host"] for g in gathered), strict=True))
    # shares read over a phase too short for the clock ticks are not measured (None; under
    # one tick there is none at all); the run queue's waits, read to the nanosecond, are
    host, _ = measured_host(host_busy(starts, ends, hosts), timing, cfg.steps)
    if queue := run_queue(starts, ends):
        host = {**(host or UNMEASURED_HOST), **queue}
    local_sq = [sum(g["local_sq"][i] for g in gathered) / world for i in range(len(global_sq))]
    if duplicated or not all(math.isfinite(x) for x in (*local_sq, *global_sq)):
        # the same samples measure no noise; a NaN loss's norms are none (and NaN is no
        # JSON number: a row holding one would be skipped by its own reader)
        local_sq, global_sq = [], []
    return {
        "timing": timing,
        "comm": {"bucket_bytes": bucket_bytes or []},
        "flops": {"per_sample": flops, "achieved_tflops_per_device": achieved},
        "noise": {
            "batch_small": micro * cfg.accum,
            "batch_big": micro * cfg.accum * world,
            "local_sq": local_sq,
            "global_sq": global_sq,
            "duplicated": duplicated,
        },
        "per_rank": {
            "step_ms": [g["kinds"]["synced"]["step"] for g in gathered],
            "nosync_step_ms": [g["kinds"]["nosync"]["step"] for g in gathered],
        },
        "grad_bytes_per_step": grad_bytes,
        "allreduce_bytes_per_step": grad_bytes if world > 1 else 0,
        "memory": {
            "peak_bytes": max(g["peak"] for g in gathered),
            "kind": _PEAK_MEMORY_KIND.get(device_type, "max_rss"),
        },
        # synced and no-sync steps ran in the metered phase
        "nvml": _power(meters, world, steps_timed=2 * cfg.steps),
        "host": host,
        "data": _distinct(gathered),
    }


def _distinct(gathered: list[dict[str, object]]) -> dict[str, int] | None:
    """The samples of one step's global batch, each rank's micro-batch once (``drawn``:
    per-device batch x N; the micro-batches of ``--accum`` are one batch again), and how
    many of them are distinct (``model_base.sample_digests``); None where a rank's batch
    gives no digests."""
    digests = [g.get("digests") for g in gathered]
    if not all(digests):
        return None
    drawn = [d for rank in digests for d in rank]
    return {"samples_drawn": len(drawn), "samples_distinct": len(set(drawn))}


def _timing(gathered: list[dict[str, object]], samples: int, metered: bool) -> dict[str, object]:
    """Step times (mean, p50, p95) synchronised and without sync, the phases, the
    communication inside the step, and at N = 1 the bare module's step; ``samples`` per
    step over all ranks."""
    synced = [g["kinds"]["synced"] for g in gathered]
    nosync = [g["kinds"]["nosync"] for g in gathered]
    step = StepStats.from_values(_slowest([k["step"] for k in synced]))
    plain = StepStats.from_values(_slowest([k["step"] for k in nosync]))
    bare = [g["kinds"]["plain"]["step"] for g in gathered if g["kinds"].get("plain")]
    bare_step = StepStats.from_values(_slowest(bare)) if bare and bare[0] else None
    comm_steps = [g["comm_ms"] for g in gathered if g["comm_ms"]]
    comm_ms = StepStats.from_values(_slowest(comm_steps)).mean if comm_steps and metered else None
    return {
        "step_ms_mean": step.mean,
        "step_ms_p50": step.p50,
        "step_ms_p95": step.p95,
        "nosync_step_ms_mean": plain.mean,
        "nosync_step_ms_p50": plain.p50,
        "nosync_step_ms_p95": plain.p95,
        "samples_per_s": samples / (step.mean / 1e3),
        "forward_ms": _phase(nosync, "forward"),
        "backward_ms": _phase(nosync, "backward"),
        "optimizer_ms": _phase(nosync, "optimizer"),
        "sync_overhead_ms": step.mean - plain.mean,
        "comm_ms": comm_ms,
        # N = 1 only: the bare module's step, no DDP wrapper (what one device costs)
        "plain_step_ms_mean": getattr(bare_step, "mean", None),
        "plain_step_ms_p50": getattr(bare_step, "p50", None),
    }


def fixed_cost(
    gathered: list[dict[str, object]], small_batch: int | None, batch: int
) -> dict[str, float | None]:
    """The fixed per-step cost of the bare module at N = 1, from its plain steps at
    ``small_batch`` (b1) and ``batch`` (b2), timed interleaved: the intercept
    ``(b2 t1 - b1 t2) / (b2 - b1)`` of the line through them, and its 80% range from the
    steps' standard errors (``z_0.9 sqrt((b2 e1)^2 + (b1 e2)^2) / (b2 - b1)``), clipped to
    [0, the faster of the two steps]: each step holds the fixed cost, so it exceeds
    neither (noise that times the small batch slower than the large one puts the line's
    intercept above both). None where only one batch was timed."""
    none = dict.fromkeys(
        (
            "small_batch_per_device",
            "small_batch_step_ms_mean",
            "fixed_ms",
            "fixed_ms_low",
            "fixed_ms_high",
        )
    )
    kinds = [g["kinds"] for g in gathered if g["kinds"].get("plain_small")]
    if not small_batch or len(kinds) != 1 or len(kinds[0]["plain_small"]["step"]) < 2:
        return none
    small, large = kinds[0]["plain_small"]["step"], kinds[0]["plain"]["step"]
    (t1, e1), (t2, e2) = (_mean_error(small), _mean_error(large))
    b1, b2 = float(small_batch), float(batch)
    fixed = (b2 * t1 - b1 * t2) / (b2 - b1)
    error = math.sqrt((b2 * e1) ** 2 + (b1 * e2) ** 2) / (b2 - b1)

    def clip(value: float) -> float:
        return min(max(value, 0.0), t1, t2)

    return {
        "small_batch_per_device": b1,
        "small_batch_step_ms_mean": t1,
        "fixed_ms": clip(fixed),
        "fixed_ms_low": clip(fixed - Z80 * error),
        "fixed_ms_high": clip(fixed + Z80 * error),
    }


Z80 = 1.2816  # two-sided 80%: the 90th percentile of a normal


def _mean_error(values: list[float]) -> tuple[float, float]:
    """(mean, standard error of the mean)."""
    return statistics.fmean(values), statistics.stdev(values) / math.sqrt(len(values))


def _power(
    meters: list[dict[str, object]], world: int, steps_timed: int
) -> dict[str, object] | None:
    """Measured at this N: every device's power (GPU), every host's package power once
    (CPU: its first rank's meter); per device: the total / N. The meters' dropouts
    (``telemetry.sampled_power``) summed, and the seconds uncovered of the meter that
    covered least (each meter spans the whole phase). None without a meter."""
    if not meters:
        return None
    return {
        "gpu_util_pct_mean": mean_of([m["gpu_util_pct_mean"] for m in meters]),
        "power_w_mean": power_total(meters) / world,
        "power_w_total": power_total(meters),
        "energy_j_per_step": sum(m["energy_j"] or 0.0 for m in meters) / steps_timed,
        "power_source": meters[0].get("power_source"),
        "power_dropouts": sum(int(m.get("power_dropouts") or 0) for m in meters),
        "power_uncovered_s": max(float(m.get("power_uncovered_s") or 0.0) for m in meters),
    }


def _slowest(per_rank: list[list[float]]) -> list[float]:
    """Each step's time on its slowest rank."""
    return [max(step) for step in zip(*per_rank, strict=True)]


def _phase(kinds: list[dict[str, list[float]]], name: str) -> float:
    return StepStats.from_values(_slowest([k[name] for k in kinds])).mean


def power_total(meters: list[dict[str, object]]) -> float:
    """Watts of the whole job: each meter's mean power (a CPU meter's share) times the
    ranks it stands for."""
    return sum((m["power_w_mean"] or 0.0) * m.get("ranks_on_host", 1) for m in meters)


def median_run(runs: list[dict[str, object]]) -> dict[str, object]:
    """Of ``--repeat`` runs of one configuration, the run of median throughput, a run
    measured and not a mean of runs: for an even count the slower of the two middle runs
    (conservative: a median between them was never measured); with every run's throughput
    and the spread ``(max - min) / median`` (the median of the rates, ``statistics.median``)
    in its timing."""
    rates = [r["timing"]["samples_per_s"] for r in runs]
    order = sorted(range(len(runs)), key=lambda i: rates[i])
    chosen = runs[order[(len(runs) - 1) // 2]]  # even count: the lower rate of the middle two
    if len(runs) > 1:
        chosen["timing"]["repeat_samples_per_s"] = rates
        chosen["timing"]["repeat_spread"] = (max(rates) - min(rates)) / statistics.median(rates)
    return chosen


def mfu_fields(record: dict[str, object], device_name: str | None) -> dict[str, object]:
    """Peak TFLOP/s and MFU of a record on ``device_name`` (None off GPUs or unknown)."""
    cfg = record["config"]
    if cfg["device"] != "cuda" or (peak := peak_for(device_name)) is None:
        return {"peak_tflops": None, "mfu": None}
    achieved = record["flops"]["achieved_tflops_per_device"]
    share = conv_share(record["flops"])
    return {
        "peak_tflops": peak.tflops(cfg["precision"], cfg["tf32"], share),
        "mfu": None
        if achieved is None
        else mfu(achieved, device_name, cfg["precision"], cfg["tf32"], share),
    }

"""From the step model to a recommendation: how many devices, break-even size, cost, energy.

``advise(AdviceInputs(...))`` predicts N = 1..max_devices (powers of two and the maximum),
recommends the fastest N, the largest N keeping efficiency >= the target, and the
equilibrium (the same criteria as ``gpuscale analyze``), finds the break-even model size
on the interconnect, and explains which term decides and what would change it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import pandas as pd

from gpuscale.advise.model import Compute, Link, predict_step

# Board power (W) assumed when no NVML measurement exists (vendor TDPs).
TDP_W = {
    "H200": 700.0,
    "H100": 700.0,
    "B200": 1000.0,
    "A100": 400.0,
    "L40S": 350.0,
    "RTX 4090": 450.0,
    "RTX A5000": 230.0,
    "MI300X": 750.0,
    "cpu": 150.0,
}
DEFAULT_OVERLAP = 0.5  # share of the all-reduce backward can hide when not measured


def default_overlap(device: str | None) -> float:
    """The share of the all-reduce backward hides when the bench did not measure it.

    On an accelerator DDP all-reduces each bucket on a communication stream while backward
    computes the next (Li et al., VLDB 2020): ``DEFAULT_OVERLAP``. On a CPU (gloo) the
    copies and reductions run on the very cores backward is using, so nothing is hidden: 0.
    """
    return 0.0 if device == "cpu" else DEFAULT_OVERLAP


@dataclass(frozen=True, kw_only=True, slots=True)
class AdviceInputs:
    """What the advice needs. ``compute`` is per device at N = 1; ``params`` the model's
    parameters (gradient bytes = params x ``bytes_per_grad``)."""

    params: float
    compute: Compute
    link: Link
    max_devices: int = 8
    per_node: int | None = None  # devices per node; with ``inter`` a two-level network
    inter: Link | None = None
    bytes_per_grad: int = 4
    overlap: float = DEFAULT_OVERLAP
    bucket_mb: float = 25.0
    algorithm: str = "ring"
    strong: bool = False
    target_efficiency: float = 0.7
    price_per_device_hour: float | None = None  # None: no cost column values (not 0)
    power_w: float = TDP_W["H100"]
    samples: float = 1e7  # samples to train, for time, cost and energy
    threshold: float = 0.8  # equilibrium: E' >= threshold x best

    def __post_init__(self) -> None:
        if self.params <= 0:
            raise ValueError(f"parameters must be positive, got {self.params}")
        if self.max_devices < 1:
            raise ValueError("max devices must be >= 1")
        if not 0 < self.target_efficiency <= 1:
            raise ValueError("target efficiency must be in (0, 1]")
        price = self.price_per_device_hour
        if (price is not None and price < 0) or self.power_w < 0 or self.samples <= 0:
            raise ValueError("price and power must be >= 0 and samples > 0")

    @property
    def grad_bytes(self) -> float:
        return self.params * self.bytes_per_grad

    def device_counts(self) -> list[int]:
        counts, n = [], 1
        while n < self.max_devices:
            counts.append(n)
            n *= 2
        counts.append(self.max_devices)
        if self.per_node and self.inter:
            counts = [c for c in counts if c <= self.per_node or c % self.per_node == 0]
        return counts


@dataclass(frozen=True, slots=True)
class Advice:
    """The recommendation, the predictions behind it, and the explanation."""

    predictions: pd.DataFrame
    fastest: int
    efficient: int | None
    equilibrium: dict[str, int | None]
    break_even_params: float | None
    target_params: float | None
    dominant_term: str
    explanation: list[str] = field(default_factory=list)


def _step(inputs: AdviceInputs, n: int, params: float | None = None):
    """Predicted step at ``n`` devices (for another model size: compute scaled with it)."""
    compute = inputs.compute
    grad_bytes = inputs.grad_bytes
    if params is not None:
        ratio = params / inputs.params  # compute per sample grows with the parameters
        compute = compute.scaled(ratio)
        grad_bytes = params * inputs.bytes_per_grad
    return predict_step(
        compute,
        grad_bytes,
        n,
        inputs.link,
        overlap=inputs.overlap,
        bucket_bytes=inputs.bucket_mb * 1e6,
        algorithm=inputs.algorithm,
        strong=inputs.strong,
        inter=inputs.inter,
        per_node=inputs.per_node,
    )


def predictions(inputs: AdviceInputs) -> pd.DataFrame:
    """One row per device count: step time and its parts, throughput, speedup, efficiency,
    time to train ``samples``, device-hours, cost and energy."""
    rows = []
    for n in inputs.device_counts():
        p = _step(inputs, n)
        rows.append(
            {
                "devices": n,
                "step_ms": p.step_s * 1e3,
                "compute_ms": p.compute_s * 1e3,
                "straggler_ms": p.straggler_s * 1e3,
                "bandwidth_ms": p.bandwidth_s * 1e3,
                "latency_ms": p.latency_s * 1e3,
                "exposed_comm_ms": p.exposed_s * 1e3,
                "samples_per_s": p.samples_per_s,
            }
        )
    frame = pd.DataFrame(rows)
    frame["speedup"] = frame["samples_per_s"] / frame["samples_per_s"].iloc[0]
    frame["efficiency"] = frame["speedup"] / frame["devices"]
    frame["time_to_train_h"] = inputs.samples / frame["samples_per_s"] / 3600
    frame["device_hours"] = frame["devices"] * frame["time_to_train_h"]
    price = inputs.price_per_device_hour
    frame["cost"] = frame["device_hours"] * (float("nan") if price is None else price)
    frame["energy_kwh"] = frame["device_hours"] * inputs.power_w / 1000
    return frame


def _solve_params(inputs: AdviceInputs, n: int, target_speedup: float) -> float | None:
    """Smallest model size (parameters) whose predicted speedup on ``n`` devices reaches
    ``target_speedup`` (bisection in log space; speedup grows with model size)."""

    def speedup(params: float) -> float:
        return _step(inputs, n, params).samples_per_s / _step(inputs, 1, params).samples_per_s

    low, high = 1e3, 1e13
    if speedup(high) < target_speedup:
        return None
    if speedup(low) >= target_speedup:
        return 0.0  # already reached below the smallest size searched
    for _ in range(80):
        mid = math.sqrt(low * high)
        low, high = (mid, high) if speedup(mid) < target_speedup else (low, mid)
    return high


def _equilibrium(frame: pd.DataFrame, threshold: float) -> dict[str, int | None]:
    from gpuscale.analysis.equilibrium import knee_pick

    table = pd.DataFrame(
        {
            "accelerators": frame["devices"],
            "time_to_train_min": frame["time_to_train_h"] * 60,
            "system_id": frame["devices"].astype(str),
        }
    )
    knee = knee_pick(table)
    score = frame["speedup"] * frame["efficiency"]
    good = frame[frame["efficiency"] >= threshold * frame["efficiency"].max()]
    return {
        "knee": int(knee["accelerators"]) if knee is not None else None,
        "max_speed_x_efficiency": int(frame.loc[score.idxmax(), "devices"]),
        "efficiency_threshold": int(good["devices"].max()) if len(good) else None,
    }


def _dominant(row: pd.Series, target_efficiency: float) -> str:
    """What decides the step: ``compute`` when the efficiency reaches the target (the
    overheads are small), else the largest overhead: straggler wait, bandwidth or
    latency (all-reduce terms counted at what backward does not hide)."""
    if row["devices"] < 2 or row["efficiency"] >= target_efficiency:
        return "compute"
    total = row["bandwidth_ms"] + row["latency_ms"]
    exposed_share = row["exposed_comm_ms"] / total if total > 0 else 0.0
    overheads = {
        "straggler": row["straggler_ms"],
        "bandwidth": row["bandwidth_ms"] * exposed_share,
        "latency": row["latency_ms"] * exposed_share,
    }
    return max(overheads, key=overheads.get)


def advise(inputs: AdviceInputs) -> Advice:
    """Predictions, recommendation and explanation for one model on one interconnect."""
    frame = predictions(inputs)
    fastest = int(frame.loc[frame["samples_per_s"].idxmax(), "devices"])
    ok = frame[frame["efficiency"] >= inputs.target_efficiency]
    efficient = int(ok["devices"].max()) if len(ok) else None
    multi = inputs.max_devices >= 2
    break_even = _solve_params(inputs, 2, 1.0) if multi else None
    target = _solve_params(inputs, 2, 2 * inputs.target_efficiency) if multi else None
    focus = frame[frame["devices"] == (2 if multi else 1)].iloc[0]
    dominant = _dominant(focus, inputs.target_efficiency)
    explanation = explain(
        inputs,
        focus,
        fastest=fastest,
        efficient=efficient,
        break_even=break_even,
        target=target,
        dominant=dominant,
    )
    return Advice(
        predictions=frame,
        fastest=fastest,
        efficient=efficient,
        equilibrium=_equilibrium(frame, inputs.threshold),
        break_even_params=break_even,
        target_params=target,
        dominant_term=dominant,
        explanation=explanation,
    )


def _fmt_params(p: float | None) -> str:
    if p is None:
        return "none within 1e13 parameters"
    if p == 0.0:
        return "under 1k"
    return f"{p / 1e9:.3g}B" if p >= 1e9 else f"{p / 1e6:.3g}M" if p >= 1e6 else f"{p / 1e3:.3g}k"


def explain(
    inputs: AdviceInputs,
    focus: pd.Series,
    *,
    fastest: int,
    efficient: int | None,
    break_even: float | None,
    target: float | None,
    dominant: str,
) -> list[str]:
    """Sentences: what to do, which term decides and what would change it."""
    n = int(focus["devices"])
    lines = [
        f"Fastest: {fastest} device(s); largest with efficiency >= "
        f"{inputs.target_efficiency:.0%}: "
        + (f"{efficient}." if efficient else "none (even 2 devices fall below)."),
        f"Break-even model size on {inputs.link.name}: {_fmt_params(break_even)}"
        " parameters (below it 2 devices train slower than 1); 2-device efficiency reaches "
        f"{inputs.target_efficiency:.0%} from {_fmt_params(target)}.",
    ]
    if target is None and inputs.max_devices >= 2:
        huge = 1e13
        ceiling = _step(inputs, 2, huge).samples_per_s / _step(inputs, 1, huge).samples_per_s / 2
        lines.append(
            "No model size gets there: compute and gradient bytes both grow with the "
            f"parameters, so 2-device efficiency levels off at {ceiling:.0%} on this link."
        )
    if n > 1:
        compute, bw, lat = focus["compute_ms"], focus["bandwidth_ms"], focus["latency_ms"]
        lines.append(
            f"On {n} devices a step is {focus['step_ms']:.3g} ms: compute "
            f"{compute:.3g} ms, waiting for the slowest device "
            f"{focus['straggler_ms']:.3g} ms, all-reduce {bw + lat:.3g} ms (bandwidth {bw:.3g}, "
            f"latency {lat:.3g}) of which {focus['exposed_comm_ms']:.3g} ms is not "
            f"hidden by backward. The {dominant} term dominates."
        )
        remedies = {
            "compute": "more devices pay off: communication and waiting are small against compute",
            "straggler": "steadier step times (equal work per device, pinned processes, no "
            "other jobs on the devices) would help most",
            "bandwidth": "a faster link, gradient compression (bf16 gradients halve the bytes) "
            "or gradient accumulation (one all-reduce per k steps) would help most",
            "latency": "larger DDP buckets (fewer messages), a larger batch or gradient "
            "accumulation would help most; a faster link would barely matter",
        }
        lines.append(f"What would change it: {remedies[dominant]}.")
    return lines

"""One advice request: what the user asked, written once.

The CLI's ``advise`` options are generated from the fields of :class:`AdviceRequest`
(their defaults and ``HELP``), ``gpuscale.advise`` takes one (or the same keywords), and
the report reads it back. Sizes (``params``, ``flops_per_sample``, ``noise_scale``,
``samples``) are numbers here; the CLI parses ``7M``-style text into them.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any, ClassVar

from gpuscale.tables.requests import JsonRequest

STRATEGIES = ("ddp", "fsdp")
SCALINGS = ("auto", "strong", "weak")

# Per-field documentation: the CLI's help text.
HELP: dict[str, str] = {
    "bench": "Calibrate from `gpuscale bench` results (JSONL).",
    "model": "Model of --bench to advise on (default: the largest with N = 1).",
    "params": "Parameters, e.g. 7M (with --bench: a model it did not measure, advised from its "
    "family's calibration).",
    "family": "Family of a --params model with --bench (e.g. cnn, mlp, transformer): whose "
    "measured rate it takes (default: inferred from --flops-per-sample).",
    "step_ms": "Measured single-device step time, ms (without --bench); give it again with "
    "another --batch to measure the fixed per-step cost (the first pair is the one advised on).",
    "batch": "Per-device batch of --step-ms, one per --step-ms (default: measured, else 32).",
    "fixed_ms": "Fixed per-step cost, ms: the part of a one-device step that does not shrink "
    "with the batch (default: from two --step-ms, else measured, else a device prior).",
    "scaling": "auto (the global batch kept, unless a convergence model prices larger ones: "
    "then batch and accumulation are searched), strong (the global batch kept: --global-batch "
    "or the batch) or weak (the per-device batch kept).",
    "flops_per_sample": "Forward + backward FLOPs per sample (default 6 x params), e.g. 4G.",
    "device_name": "Device, e.g. 'H100 SXM' (power table, peak FLOP/s check; without --bench).",
    "interconnect": "Link preset, e.g. pcie-phb, nvlink4 (default: detected topology).",
    "topo": "Saved `nvidia-smi topo -m` to choose the link and cap the device count.",
    "busbw_gbs": "Custom link: bus bandwidth, GB/s.",
    "latency_us": "Custom link: per-step latency, us.",
    "collectives": "Measured curves from `gpuscale collectives`.",
    "nodes": "Nodes (NICs between them when > 1).",
    "gpus_per_node": "Devices per node.",
    "inter_node": "NIC preset between nodes.",
    "nics_per_node": "NICs per node (default: one per device).",
    "max_devices": "Largest device count (default: nodes x gpus-per-node, capped by the topology).",
    "overlap": "Share of communication hidden, 0-1 (default: measured).",
    "grad_bytes": "Bytes per gradient element (4 fp32, 2 bf16).",
    "bucket_mb": "DDP bucket_cap_mb (MiB).",
    "strategy": "ddp or fsdp.",
    "noise_scale": "Critical batch B_noise, samples (default: measured).",
    "workload": "Convergence of an MLPerf workload (its RCPs), e.g. bert; also checks the "
    "predicted time against MLPerf's fastest systems.",
    "ruleset": "MLPerf ruleset of --workload's RCPs.",
    "samples": "Samples to train at the measured batch, e.g. 10M.",
    "global_batch": "Keep this global batch at every N (strong scaling).",
    "target_efficiency": "Efficiency to keep (0-1].",
    "price": "Price per device-hour (without it, no cost).",
    "power_w": "Device power, W (default: measured, else the board table).",
    "allow_flagged": "Use --bench runs flagged as untrustworthy (busy host, noisy steps), "
    "with a warning.",
}

# Fields the CLI reads as sizes (``7M``, ``4G``).
SIZES = frozenset({"params", "flops_per_sample", "noise_scale", "samples"})
# Fields the CLI reads as paths.
PATHS = frozenset({"bench", "topo", "collectives"})
# CLI spellings that differ from the field name.
OPTION_NAMES = {"grad_bytes": "--grad-bytes", "allow_flagged": "--allow-flagged"}


@dataclass(frozen=True, kw_only=True, slots=True)
class AdviceRequest(JsonRequest):
    """What to advise on and under which assumptions; see ``HELP`` for each field."""

    json_name: ClassVar[str] = "advice request"
    bench: str | None = None
    model: str | None = None
    params: float | None = None
    family: str | None = None
    step_ms: float | tuple[float, ...] | None = None
    batch: int | tuple[int, ...] | None = None
    fixed_ms: float | None = None
    scaling: str = "auto"
    flops_per_sample: float | None = None
    device_name: str | None = None
    interconnect: str | None = None
    topo: str | None = None
    busbw_gbs: float | None = None
    latency_us: float = 10.0
    collectives: str | None = None
    nodes: int = 1
    gpus_per_node: int = 8
    inter_node: str = "ib-ndr400"
    nics_per_node: int | None = None
    max_devices: int | None = None
    overlap: float | None = None
    grad_bytes: int = 4
    bucket_mb: float = 25.0
    strategy: str = "ddp"
    noise_scale: float | None = None
    workload: str | None = None
    ruleset: str = "5.0.0"
    samples: float = 1e7
    global_batch: int | None = None
    target_efficiency: float = 0.7
    price: float | None = None
    power_w: float | None = None
    allow_flagged: bool = False

    def __post_init__(self) -> None:
        for name in ("step_ms", "batch"):  # given several times: a tuple; once: the value
            value = getattr(self, name)
            if isinstance(value, list | tuple):
                object.__setattr__(self, name, tuple(value) if len(value) > 1 else value[0])
        self._check_values()
        self._check_pairs()

    def _check_values(self) -> None:
        def positive(value: float | None) -> bool:
            return value is None or (value > 0 and math.isfinite(value))

        def each(value: Any, ok: Any) -> bool:
            return all(ok(v) for v in value) if isinstance(value, tuple) else ok(value)

        pos, whole = "must be a positive number", "must be a positive whole number"
        at_least_0 = "must be 0 or more"
        checks = {
            "params": (positive(self.params), pos),
            "step_ms": (each(self.step_ms, positive), pos),
            "batch": (each(self.batch, lambda b: b is None or b >= 1), whole),
            "fixed_ms": (
                self.fixed_ms is None or (self.fixed_ms >= 0 and math.isfinite(self.fixed_ms)),
                at_least_0,
            ),
            "scaling": (self.scaling in SCALINGS, f"must be one of {', '.join(SCALINGS)}"),
            "flops_per_sample": (positive(self.flops_per_sample), pos),
            "busbw_gbs": (positive(self.busbw_gbs), pos),
            "latency_us": (self.latency_us >= 0, at_least_0),
            "nodes": (self.nodes >= 1, whole),
            "gpus_per_node": (self.gpus_per_node >= 1, whole),
            "nics_per_node": (self.nics_per_node is None or self.nics_per_node >= 1, whole),
            "max_devices": (self.max_devices is None or self.max_devices >= 1, whole),
            "overlap": (self.overlap is None or 0 <= self.overlap <= 1, "must be in [0, 1]"),
            "grad_bytes": (self.grad_bytes in (1, 2, 4, 8), "must be 1, 2, 4 or 8"),
            "bucket_mb": (positive(self.bucket_mb), pos),
            "strategy": (self.strategy in STRATEGIES, f"must be one of {', '.join(STRATEGIES)}"),
            "noise_scale": (positive(self.noise_scale), pos),
            "samples": (positive(self.samples), pos),
            "global_batch": (self.global_batch is None or self.global_batch >= 1, whole),
            "target_efficiency": (0 < self.target_efficiency <= 1, "must be in (0, 1]"),
            "price": (
                self.price is None or (self.price >= 0 and math.isfinite(self.price)),
                at_least_0,
            ),
            "power_w": (
                self.power_w is None or (self.power_w >= 0 and math.isfinite(self.power_w)),
                at_least_0,
            ),
        }
        bad = [name for name, (ok, _) in checks.items() if not ok]
        if bad:
            value = getattr(self, bad[0])
            option = OPTION_NAMES.get(bad[0], "--" + bad[0].replace("_", "-"))
            raise ValueError(
                f"invalid {bad[0]} ({option} {value!r}): {bad[0]} {checks[bad[0]][1]}; "
                f"{HELP[bad[0]]}"
            )
        if self.bench is None and (self.params is None or self.step_ms is None):
            raise ValueError("give bench results, or params and step_ms (and batch)")

    def _check_pairs(self) -> None:
        """Step times at several batches come in (step, batch) pairs of distinct batches;
        a fixed cost is part of the one step time given, so below it."""
        steps, batches = self.step_ms, self.batch
        if isinstance(batches, tuple) and self.bench is not None:
            raise ValueError("--batch is given once with --bench (the per-device batch to use)")
        if isinstance(steps, tuple) or isinstance(batches, tuple):
            count = len(steps) if isinstance(steps, tuple) else 1
            if not isinstance(batches, tuple) or len(batches) != count:
                raise ValueError(
                    f"{count} --step-ms value(s) need as many --batch values, one per step "
                    f"time (got --batch {batches!r})"
                )
            if len(set(batches)) != len(batches):
                raise ValueError(f"the --batch values of the step times must differ: {batches}")
            if self.fixed_ms is not None:
                raise ValueError("give --fixed-ms or step times at two batches, not both")
        elif self.fixed_ms is not None and steps is not None and self.fixed_ms >= steps:
            raise ValueError(
                f"--fixed-ms {self.fixed_ms:g} is not below --step-ms {steps:g}: the fixed "
                "per-step cost is the part of that step that does not shrink with the batch"
            )

    @property
    def step_points(self) -> tuple[tuple[int, float], ...]:
        """(per-device batch, step ms) of every step time given; the first is the
        configuration advised on (batch 32 when none was given)."""
        if self.step_ms is None:
            return ()
        if isinstance(self.step_ms, tuple):
            return tuple(zip(self.batch, self.step_ms, strict=True))  # type: ignore[arg-type]
        return ((self.batch or 32, self.step_ms),)  # type: ignore[list-item]

    @classmethod
    def of(cls, request: AdviceRequest | None = None, **keywords: Any) -> AdviceRequest:
        """``request`` with ``keywords`` replaced, or a request of the keywords."""
        if request is None:
            return cls(**keywords)
        return cls(**(asdict(request) | keywords))

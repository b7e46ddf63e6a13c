"""An advice request's fields: defaults, help, each number's range, and what they give
together (the shape, the parameters, the step points)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

from gpuscale.advice.model.priors import DEFAULT_BUCKET_MB, OVERLAP_BY_CLASS, PRIORS
from gpuscale.hardware import transformer
from gpuscale.hardware.memory import state_bytes
from gpuscale.hardware.transformer import ShapeNumbers, TransformerShape, presets
from gpuscale.quantities import read_size
from gpuscale.tables.refusals import Range
from gpuscale.tables.requests import (
    POWER_RANGE,
    PRICE_RANGE,
    JsonRequest,
    flag,
    option,
    power_option,
    price_option,
    repeatable_option,
    single_option,
    text_option,
)

SCALINGS = ("auto", "strong", "weak")
DEFAULT_SAMPLES = 1e7  # samples to train when none are given (said in the advice)
DEFAULT_BATCH = 32  # the per-device batch of a step time given without one (said)
# a custom link's latency per ring hop when only its bandwidth is given
DEFAULT_LATENCY_US = PRIORS["custom_link_latency_us"].point
DEFAULT_INTER_NODE = "ib-ndr400"  # the NICs between nodes when none are named
DEFAULT_GPUS_PER_NODE = 8  # devices per node, the most searched on one when none are asked
DEFAULT_RULESET = "5.0.0"  # the MLPerf ruleset of a workload's RCPs when none is named
MAX_DEVICES = 1_000_000
GRAD_BYTES = (1, 2, 4, 8)  # the bytes per gradient element a request may give
SHAPE_NUMBERS = ("layers", "hidden", "heads", "seq_len")  # a shape given by its numbers
# the optimizers a request names: all but a frozen model's and TorchRec's fused embedding update
OPTIMIZERS = tuple(
    dict.fromkeys(o for o, _ in state_bytes() if o not in ("frozen", "adagrad_fused"))
)
# Each number's range: (lowest, highest, lowest excluded?), whole where the field is an int;
# past it a typo or a unit mistake (a batch of 10^23, a bucket of 10^-310 MiB), refused.
RANGES: dict[str, Range] = {
    "params": (1, 1e14, False),  # a model has at least one parameter
    "step_ms": (1e-3, 1e8, False),  # 1 us .. 28 h per step
    "fixed_ms": (0, 1e8, False),
    "batch": (1, 2**24, False),
    "flops_per_sample": (1, 1e20, False),  # a sample costs at least one FLOP
    "busbw_gbs": (1e-3, 1e5, False),  # 1 MB/s .. 100 TB/s
    "latency_us": (0, 1e7, False),
    "nodes": (1, 100_000, False),
    "gpus_per_node": (1, 4096, False),
    "nics_per_node": (1, 4096, False),
    "max_devices": (1, MAX_DEVICES, False),
    "overlap": (0, 1, False),
    "grad_bytes": (min(GRAD_BYTES), max(GRAD_BYTES), False),
    "bucket_mb": (1 / 1024, 2**20, False),  # 1 KiB .. 1 TiB
    "noise_scale": (1, 1e15, False),  # a batch in samples: below one means nothing
    "samples": (1, 1e16, False),  # at least one sample is trained on
    "global_batch": (1, 2**31 - 1, False),
    "target_efficiency": (0, 1, True),
    "price_per_device_hour": PRICE_RANGE,  # as plan's
    "power_w": POWER_RANGE,  # as plan's
    # a transformer's shape: past these a typo (the largest published: 126 layers, hidden
    # 53,248, 1M-token contexts)
    "layers": (1, 100_000, False),
    "hidden": (1, 10_000_000, False),
    "heads": (1, 1_000_000, False),
    "seq_len": (1, 2**30, False),
    "vocab": (1, 100_000_000, False),
}
RULES = {  # a rule said otherwise than its range (grad_bytes as settle_choice says it)
    "grad_bytes": f"must be one of {', '.join(map(str, GRAD_BYTES))}",
    "bucket_mb": "must be a number of MiB from 1/1024 (1 KiB) to 1,048,576 (1 TiB)",
}


def _file_read(help: str, names: tuple[str, ...] = ()) -> str | None:  # a path, as text
    return option(None, names=names, parse=str, cli=Path | None, help=help)


@dataclass(frozen=True, kw_only=True, slots=True)
class RequestFields(JsonRequest):
    """What to advise on and under which assumptions (sizes: numbers, ``7M`` on the CLI)."""

    json_name: ClassVar[str] = "advice request"
    field_ranges: ClassVar[Mapping[str, Range]] = RANGES
    bench: str | None = _file_read("Calibrate from `gpuscale bench` results (JSONL).")
    model: str | None = option(
        None, help="Model of --bench to advise on (default: the largest with N = 1)."
    )
    params: float | None = text_option(
        None,
        read_size,
        help="Parameters, e.g. 7M (with --bench: a model it did not measure, advised from its "
        "family's calibration).",
    )
    family: str | None = option(
        None,
        help="Family of a --params model with --bench (e.g. cnn, mlp, transformer): whose "
        "measured rate it takes (default: inferred from --flops-per-sample).",
    )
    step_ms: float | tuple[float, ...] | None = repeatable_option(
        float,
        help="Measured single-device step time, ms (without --bench); two, each with its --batch, "
        "measure the fixed per-step cost (the first pair is the one advised on).",
    )
    batch: int | tuple[int, ...] | None = repeatable_option(
        int,
        help="Per-device batch of --step-ms, one per --step-ms (default: measured, else 32, said).",
    )
    fixed_ms: float | None = option(
        None,
        help="Fixed per-step cost, ms: the part of a one-device step that does not shrink with "
        "the batch (default: from two --step-ms, else measured, else a device prior).",
    )
    scaling: str = option(
        "auto",
        help="auto (the global batch kept, unless a convergence model prices larger ones: then "
        "batch and accumulation are searched), strong (the global batch kept: --global-"
        "batch or the batch) or weak (the per-device batch kept).",
    )
    flops_per_sample: float | None = text_option(
        None,
        read_size,
        help="Forward + backward FLOPs per sample (default: the shape's, else 6 x params), e.g. "
        "4G.",
    )
    preset: str | None = option(
        None,
        help=f"A published transformer's shape (without --bench): {', '.join(presets())}; "
        "gives the parameters, FLOPs, FSDP units and activations (docs/memory.md).",
    )
    layers: int | None = option(
        None, help="Transformer layers (with --hidden, --heads, --seq-len; without --bench)."
    )
    hidden: int | None = option(None, help="Transformer hidden size (with --layers).")
    heads: int | None = option(None, help="Attention heads (with --layers; divides --hidden).")
    seq_len: int | None = option(
        None,
        help="Tokens per sample, a sequence (with --layers; with --preset: default its context).",
    )
    vocab: int | None = option(
        None, help="Vocabulary (with --layers; default: no embedding or output layer counted)."
    )
    checkpointing: str | None = option(
        None,
        help="Activation recomputation of a transformer shape: none (the attention scores "
        "stored), selective (default: the scores not stored, as FlashAttention runs) or full "
        "(each layer's input kept).",
    )
    device_name: str | None = option(
        None, help="Device, e.g. 'H100 SXM' (power, peak FLOP/s, memory; without --bench)."
    )
    interconnect: str | None = option(
        None,
        help="Link preset, e.g. pcie-phb, nvlink4, xgmi-mi300x (default: detected or the "
        "bench host's, else the named device's own, else pcie-phb).",
    )
    topo: str | None = _file_read(
        "Saved `nvidia-smi topo -m` to choose the link and cap the device count.",
        names=("--topo", "--topo-file"),  # --topo-file as collectives and topo spell it
    )
    busbw_gbs: float | None = option(None, help="Custom link: bus bandwidth, GB/s.")
    latency_us: float | None = option(
        None,
        help="Custom link (with --busbw-gbs): latency per ring hop, us "
        f"(default {DEFAULT_LATENCY_US:g}).",
    )
    collectives: str | None = _file_read("Measured curves from `gpuscale collectives`.")
    nodes: int = option(1, help="Nodes (NICs between them when > 1).")
    gpus_per_node: int | None = option(
        None, help=f"Devices per node (default {DEFAULT_GPUS_PER_NODE}, or all a --topo's GPUs)."
    )
    inter_node: str | None = option(
        None, help=f"NIC preset between nodes (default {DEFAULT_INTER_NODE}; with --nodes > 1)."
    )
    nics_per_node: int | None = option(None, help="NICs per node (default: one per device).")
    max_devices: int | None = option(
        None, help="Largest device count (default: nodes x gpus-per-node, capped by the topology)."
    )
    overlap: float | None = option(
        None,
        help="Share of communication hidden, 0-1, never the last bucket (default: measured by "
        f"--bench; else {OVERLAP_BY_CLASS['nvlink']:g} device to device: NVLink, PCIe P2P, between "
        f"nodes; {OVERLAP_BY_CLASS['pcie_no_p2p']:g} through host memory: PCIe without P2P, "
        "and across nodes of it).",
    )
    grad_bytes: int = option(4, help="Bytes per gradient element (4 fp32, 2 bf16).")
    bucket_mb: float | None = option(
        None,
        help=f"DDP bucket_cap_mb (MiB); default: the one --bench measured the model with, else "
        f"{DEFAULT_BUCKET_MB:g}.",
    )
    strategy: str | None = option(
        None,
        help="ddp, zero2 (FSDP SHARD_GRAD_OP), fsdp (full shard) or hybrid (full shard within a "
        "node, replicas across nodes); default: the strategy --bench measured the model with, "
        "else ddp.",
    )
    optimizer: str | None = option(
        None,
        help=f"Optimizer, for the memory each device holds: {', '.join(OPTIMIZERS)} (default "
        "adam).",
    )
    precision: str | None = option(
        None,
        help="Precision of the weights and gradients, for the memory each device holds: mixed "
        "(bf16/fp16, fp32 master copy) or fp32 (default: mixed; with --bench, the bench's "
        "fp32 master weights).",
    )
    noise_scale: float | None = text_option(
        None, read_size, help="Critical batch B_noise, samples (default: measured)."
    )
    workload: str | None = single_option(
        what="workload",
        # -w and -b, --benchmark, as plan and the MLPerf commands spell them
        names=("--workload", "-w", "--benchmark", "-b"),
        help="Convergence of an MLPerf workload (its RCPs), e.g. bert; also checks the predicted"
        " time against MLPerf's fastest systems.",
    )
    ruleset: str | None = option(
        None,
        help=f"MLPerf ruleset of --workload's RCPs (default {DEFAULT_RULESET}, or the newest "
        "that has them).",
    )
    samples: float | None = text_option(
        None,
        read_size,
        help="Samples to train at the measured batch, e.g. 10M (default: 10M, and the advice "
        "says its times rest on it).",
    )
    global_batch: int | None = option(
        None, help="Keep this global batch at every N (strong scaling)."
    )
    target_efficiency: float = option(0.7, help="Efficiency to keep (0-1].")
    price_per_device_hour: float | None = price_option()
    power_w: float | None = power_option("default: measured, else the board table")
    allow_flagged: bool = flag(
        "--allow-flagged",
        help="Use --bench runs flagged as untrustworthy (busy host, noisy steps), with a warning; "
        "never those of a broken model (a loss not finite): it is refused, fix it first.",
    )
    explain: bool = flag(  # a view: the default says the answer, its term, what changes it
        "--explain", help="Say all the advice rests on: each assumption, its source, ..."
    )

    @property
    def shape(self) -> TransformerShape | None:
        """The preset's shape (at ``seq_len`` where given), else the numbers' (``--layers``)."""
        if self.preset is not None:
            found = presets()[self.preset]
            return found.at(int(self.seq_len)) if self.seq_len is not None else found
        if self.layers is None:
            return None
        numbers = {n: int(getattr(self, n) or 0) for n in (*SHAPE_NUMBERS, "vocab")}
        return transformer.of_numbers(**numbers)

    @property
    def shape_numbers(self) -> ShapeNumbers | None:
        """The shape's numbers with its activations at every micro-batch a step may run (a
        kept global batch splits into none larger than the batch advised on)."""
        shape, points = self.shape, self.step_points
        if shape is None or not points:
            return None
        how = self.checkpointing or transformer.DEFAULT_CHECKPOINTING
        return transformer.numbers_of(shape, range(1, points[0][0] + 1), how)

    @property
    def model_params(self) -> float | None:  # --params, else the shape's
        if self.params is not None:
            return float(self.params)
        shape = self.shape
        return None if shape is None else float(transformer.params(shape))

    @property
    def gradient_precision(self) -> str:  # the device peak's the rate is checked against
        return "bf16" if self.grad_bytes == 2 else "fp32"

    @property
    def step_points(self) -> tuple[tuple[int, float], ...]:  # (batch, ms), the first advised on
        if self.step_ms is None:
            return ()
        if isinstance(self.step_ms, tuple):
            return tuple(zip(self.batch, self.step_ms, strict=True))  # type: ignore[arg-type]
        return ((self.batch or DEFAULT_BATCH, self.step_ms),)  # type: ignore[list-item]

    @property
    def devices_per_node(self) -> int:  # --gpus-per-node, else the default (None: not typed)
        return DEFAULT_GPUS_PER_NODE if self.gpus_per_node is None else self.gpus_per_node

    @property
    def samples_to_train(self) -> float:
        return DEFAULT_SAMPLES if self.samples is None else float(self.samples)

"""One advice request: what the user asked, written once. The CLI's ``advise`` options are
generated from the fields of :class:`AdviceRequest`, ``gpuscale.advise`` takes one, and the
report reads it back."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import ClassVar

from gpuscale.advice.conflicts import check_pairs
from gpuscale.advice.memory import OPTIMIZERS, OTHER_NAMES, PRECISIONS, STRATEGIES
from gpuscale.advice.model.parameters import PRIORS
from gpuscale.advice.request_numbers import MAX_DEVICES, check_numbers, check_step_pairs
from gpuscale.advice.request_shape import check_shape, shape_of
from gpuscale.hardware.links import check_preset
from gpuscale.hardware.memory import state_bytes
from gpuscale.hardware.transformer import TransformerShape, presets
from gpuscale.hardware.transformer import params as shape_params
from gpuscale.names import UnknownNameError, resolve_device, resolve_ruleset, resolve_workloads
from gpuscale.quantities import joined, parse_size
from gpuscale.tables.requests import (
    FieldError,
    JsonRequest,
    NamedError,
    flag,
    option,
    power_option,
    price_option,
    ref,
    repeatable_option,
    settle_choice,
    single_option,
    text_option,
)

SCALINGS = ("auto", "strong", "weak")
DEFAULT_SAMPLES = 1e7  # samples to train when none are given (said in the advice)
DEFAULT_BATCH = 32  # the per-device batch of a step time given without one (said)
# a custom link's latency per ring hop when only its bandwidth is given
DEFAULT_LATENCY_US = PRIORS["custom_link_latency_us"].point
DEFAULT_INTER_NODE = "ib-ndr400"  # the NICs between nodes when none are named
DEFAULT_RULESET = "5.0.0"  # the MLPerf ruleset of a workload's RCPs when none is named
GRADIENT_PRECISION = {2: "bf16"}  # by bytes per gradient element; fp32 otherwise
# The names other tools give a choice of --optimizer or --precision that holds the same
# bytes per parameter as one of ours (``data/state_bytes.csv``): refused naming ours, so
# that what the memory check assumes is the name the user gives. (name, why the same)
SAME_STATE: dict[str, dict[str, tuple[str, str]]] = {
    "optimizer": {
        "adamw": ("adam", "AdamW keeps Adam's two moments (its decay is in the update)"),
    },
    "precision": {
        "bf16": ("mixed", "bf16 weights and gradients with an fp32 master copy"),
        "fp16": ("mixed", "fp16 weights and gradients with an fp32 master copy"),
        "amp": ("mixed", "autocast: half-precision compute with an fp32 master copy"),
    },
}


def _file_read(help: str, names: tuple[str, ...] = ()) -> str | None:
    """A file the advice reads: a path on the command line, its name as text here."""
    return option(None, names=names, parse=str, cli=Path | None, help=help)


@dataclass(frozen=True, kw_only=True, slots=True)
class AdviceRequest(JsonRequest):
    """What to advise on and under which assumptions; sizes are numbers here, parsed from
    ``7M``-style text on the command line."""

    json_name: ClassVar[str] = "advice request"
    bench: str | None = _file_read("Calibrate from `gpuscale bench` results (JSONL).")
    model: str | None = option(
        None,
        help="Model of --bench to advise on (default: the largest with N = 1).",
    )
    params: float | None = text_option(
        None,
        parse_size,
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
        help="Measured single-device step time, ms (without --bench); give it again with another"
        " --batch to measure the fixed per-step cost (the first pair is the one advised "
        "on).",
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
        parse_size,
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
        None,
        help="Device, e.g. 'H100 SXM' (power table, peak FLOP/s check; without --bench).",
    )
    interconnect: str | None = option(
        None,
        help="Link preset, e.g. pcie-phb, nvlink4 (default: detected topology).",
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
    gpus_per_node: int = option(8, help="Devices per node.")
    inter_node: str | None = option(
        None, help=f"NIC preset between nodes (default {DEFAULT_INTER_NODE}; with --nodes > 1)."
    )
    nics_per_node: int | None = option(None, help="NICs per node (default: one per device).")
    max_devices: int | None = option(
        None,
        help="Largest device count (default: nodes x gpus-per-node, capped by the topology).",
    )
    overlap: float | None = option(
        None,
        help="Share of communication hidden, 0-1 (default: measured by --bench; else 0.5, all "
        "but the last bucket).",
    )
    grad_bytes: int = option(
        4,
        names=("--grad-bytes",),
        help="Bytes per gradient element (4 fp32, 2 bf16).",
    )
    bucket_mb: float = option(25.0, help="DDP bucket_cap_mb (MiB).")
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
        None,
        parse_size,
        help="Critical batch B_noise, samples (default: measured).",
    )
    workload: str | None = single_option(
        what="workload",
        names=("--workload", "--benchmark"),  # --benchmark as the MLPerf commands spell it
        help="Convergence of an MLPerf workload (its RCPs), e.g. bert; also checks the predicted"
        " time against MLPerf's fastest systems.",
    )
    ruleset: str | None = option(
        None, help=f"MLPerf ruleset of --workload's RCPs (default {DEFAULT_RULESET})."
    )
    # None: DEFAULT_SAMPLES, said as the default
    samples: float | None = text_option(
        None,
        parse_size,
        help="Samples to train at the measured batch, e.g. 10M (default: 10M, and the advice "
        "says its times rest on it).",
    )
    global_batch: int | None = option(
        None,
        help="Keep this global batch at every N (strong scaling).",
    )
    target_efficiency: float = option(0.7, help="Efficiency to keep (0-1].")
    price: float | None = price_option()
    power_w: float | None = power_option("default: measured, else the board table")
    allow_flagged: bool = flag(
        "--allow-flagged",
        help="Use --bench runs flagged as untrustworthy (busy host, noisy steps), with a warning; "
        "never those of a broken model (a loss not finite): it is refused, fix it first.",
    )
    explain: bool = flag(  # a view: the default says the answer, its term, what changes it
        "--explain", help="Say all the advice rests on: each assumption, its source, ..."
    )

    def __post_init__(self) -> None:
        for name in ("step_ms", "batch"):  # given several times: a tuple; once: the value
            value = getattr(self, name)
            if isinstance(value, list | tuple):
                object.__setattr__(self, name, tuple(value) if len(value) > 1 else value[0])
        check_numbers(self)
        if self.nodes * self.gpus_per_node > MAX_DEVICES:
            raise NamedError(
                f"{ref('nodes', self.nodes)} x {ref('gpus_per_node', self.gpus_per_node)} is "
                f"{self.nodes * self.gpus_per_node:,} devices: at most {MAX_DEVICES:,} are "
                "advised on"
            )
        if self.strategy is not None:  # None: as benched (--bench), else ddp
            settle_choice(self, "strategy", STRATEGIES, OTHER_NAMES)
        self._check_state()
        check_shape(self)
        settle_choice(self, "grad_bytes", (1, 2, 4, 8))
        text_fields = ("bench", "model", "device_name", "interconnect", "inter_node", "topo")
        for name in (*text_fields, "collectives"):
            value = getattr(self, name)
            if value is not None and not isinstance(value, str):
                raise TypeError(f"{name} must be text (a name or a path), not {value!r}")
        settle_choice(self, "scaling", SCALINGS)
        check_preset(self)  # before any file is read (`--bench` missing said after it)
        check_preset(self, "inter_node")
        self._resolve_names()
        check_step_pairs(self.step_ms, self.batch, self.fixed_ms, self.bench)
        check_pairs(self)  # options that contradict each other (``advice.conflicts``)

    def _check_state(self) -> None:
        """The optimizer and precision named, and a pair ``data/state_bytes.csv`` knows."""
        for name, allowed in (("optimizer", OPTIMIZERS), ("precision", PRECISIONS)):
            value = getattr(self, name)
            if value is None:
                continue
            same = SAME_STATE[name].get(str(value).lower())
            if same is not None:  # another tool's name for one of ours: ours named
                rule = f"must be one of {', '.join(allowed)}: {same[1]}: give {same[0]}"
                raise FieldError(name, value, rule)
            settle_choice(self, name, allowed)
        pair = (self.optimizer, self.precision)
        if None not in pair and pair not in state_bytes():
            known = [p for o, p in state_bytes() if o == self.optimizer and p in PRECISIONS]
            raise NamedError(
                f"{ref('optimizer', self.optimizer)} with {ref('precision', self.precision)}: "
                f"its bytes per parameter are known in {joined(known)} only"
            )

    @property
    def shape(self) -> TransformerShape | None:
        """The transformer's shape given (``--preset`` or ``--layers`` ...), else None."""
        return shape_of(self)

    @property
    def model_params(self) -> float | None:
        """The parameters advised on: ``--params``, else the shape's (None: neither)."""
        if self.params is not None:
            return float(self.params)
        shape = self.shape
        return None if shape is None else float(shape_params(shape))

    def _resolve_names(self) -> None:
        """The workload, ruleset and device as every command resolves them (``5.0``:
        ``5.0.0``; ``bret``: "did you mean 'bert'?")."""
        self._resolve("ruleset", resolve_ruleset, "e.g. 5.0.0")  # None: DEFAULT_RULESET
        resolve_device(self.device_name)  # "RTX A1000" is no A100: refused, with the closest
        self._resolve("workload", lambda name: resolve_workloads([name])[0], "a name")

    def _resolve(self, name: str, resolve: Callable[[str], str], example: str) -> None:
        """Field ``name`` replaced by ``resolve``'s name for it, an unknown one refused."""
        value = getattr(self, name)
        if value is None:
            return
        if not isinstance(value, str):
            raise TypeError(f"{name} must be text ({example}), not {value!r}")
        try:
            object.__setattr__(self, name, resolve(value))
        except UnknownNameError as exc:
            raise exc.as_field(name) from None

    @property
    def gradient_precision(self) -> str:
        """The precision the rate is checked against the device's peak at."""
        return GRADIENT_PRECISION.get(self.grad_bytes, "fp32")

    @property
    def step_points(self) -> tuple[tuple[int, float], ...]:
        """(per-device batch, step ms) of every step time given, the first advised on."""
        if self.step_ms is None:
            return ()
        if isinstance(self.step_ms, tuple):
            return tuple(zip(self.batch, self.step_ms, strict=True))  # type: ignore[arg-type]
        return ((self.batch or DEFAULT_BATCH, self.step_ms),)  # type: ignore[list-item]

    @property
    def samples_to_train(self) -> float:
        return DEFAULT_SAMPLES if self.samples is None else float(self.samples)

    @classmethod
    def of(cls, request: AdviceRequest | None = None, **keywords: object) -> AdviceRequest:
        if request is None:
            return cls(**keywords)
        return cls(**(asdict(request) | keywords))

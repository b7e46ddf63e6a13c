"""One advice request: what the user asked, written once.

The CLI's ``advise`` options are generated from the fields of :class:`AdviceRequest`
(their defaults, and the help in each field's metadata), ``gpuscale.advise`` takes one
(or the same keywords), and the report reads it back. Sizes (``params``,
``flops_per_sample``, ``noise_scale``, ``samples``) are numbers here; the CLI parses
``7M``-style text into them (each field's ``parse``).
"""

from __future__ import annotations

import itertools
import math
import numbers
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import ClassVar

from gpuscale.advice.conflicts import check_pairs
from gpuscale.advice.memory import OPTIMIZERS, OTHER_NAMES, PRECISIONS, STRATEGIES
from gpuscale.advice.model.parameters import PRIORS
from gpuscale.hardware.links import check_preset
from gpuscale.hardware.memory import state_bytes
from gpuscale.names import UnknownNameError, resolve_device, resolve_ruleset, resolve_workloads
from gpuscale.quantities import agreeing, counted, joined, number, parse_size
from gpuscale.tables.requests import (
    FieldError,
    JsonRequest,
    NamedError,
    flag,
    help_of,
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

# Fields read as sizes: a size as text is for the command line (its message says so).
_SIZES = frozenset({"params", "flops_per_sample", "noise_scale", "samples"})
MAX_DEVICES = 1_000_000
DEFAULT_SAMPLES = 1e7  # samples to train when none are given (said in the advice)
DEFAULT_BATCH = 32  # the per-device batch of a step time given without one (said)
# a custom link's latency per ring hop when only its bandwidth is given
DEFAULT_LATENCY_US = PRIORS["custom_link_latency_us"].point
DEFAULT_INTER_NODE = "ib-ndr400"  # the NICs between nodes when none are named
DEFAULT_RULESET = "5.0.0"  # the MLPerf ruleset of a workload's RCPs when none is named
ONE_BATCH_WITH_BENCH = (
    f"{ref('batch')} is given once with {ref('bench')} (the per-device batch to use)"
)
# Each number's range: (lowest, highest, whole?, lowest excluded?). Past these a value
# is a typo or a unit mistake (a batch of 10^23, a bucket of 10^-310 MiB), never a
# request to carry into the model: refused where it is given.
_RANGES: dict[str, tuple[float, float, bool, bool]] = {
    "params": (1, 1e14, False, False),  # a model has at least one parameter
    "step_ms": (1e-3, 1e8, False, False),  # 1 us .. 28 h per step
    "fixed_ms": (0, 1e8, False, False),
    "batch": (1, 2**24, True, False),
    "flops_per_sample": (1, 1e20, False, False),  # a sample costs at least one FLOP
    "busbw_gbs": (1e-3, 1e5, False, False),  # 1 MB/s .. 100 TB/s
    "latency_us": (0, 1e7, False, False),
    "nodes": (1, 100_000, True, False),
    "gpus_per_node": (1, 4096, True, False),
    "nics_per_node": (1, 4096, True, False),
    "max_devices": (1, MAX_DEVICES, True, False),
    "overlap": (0, 1, False, False),
    "grad_bytes": (1, 8, True, False),
    "bucket_mb": (1 / 1024, 2**20, False, False),  # 1 KiB .. 1 TiB
    # a batch size in samples: below one it means nothing, and 2e-311 overflowed the samples
    # to train until every prediction was refused (found by tests/bench/test_row_fuzz.py)
    "noise_scale": (1, 1e15, False, False),
    "samples": (1, 1e16, False, False),  # at least one sample is trained on
    "global_batch": (1, 2**31 - 1, True, False),
    "target_efficiency": (0, 1, False, True),
    "price": (0, 1e9, False, False),
    "power_w": (0, 1e5, False, True),  # a device drawing 0 W cannot run
}


def _check_type(name: str, value: object, whole: bool) -> None:
    """TypeError for a value of the wrong type (text where a number goes, a fraction
    where a count goes), naming the field."""
    if value is None:
        return
    # numbers.Real: numpy's integers and floats too (a value read from a table)
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        hint = ""
        if isinstance(value, str) and name in _SIZES:
            hint = " (a size as text, such as '7M', is for the command line: give 7e6)"
        raise TypeError(f"{name} must be a number, not {type(value).__name__} {value!r}{hint}")
    if whole and not (
        isinstance(value, numbers.Integral)
        or (math.isfinite(float(value)) and float(value).is_integer())
    ):
        raise TypeError(f"{name} must be a whole number, not {value!r}")


def _in_range(name: str, value: object) -> bool:
    if value is None:
        return True
    low, high, _, open_low = _RANGES[name]
    number = float(value)  # type: ignore[arg-type]
    return (
        math.isfinite(number) and (number > low if open_low else number >= low) and number <= high
    )


def _rule(name: str) -> str:
    low, high, whole, open_low = _RANGES[name]
    if name == "grad_bytes":
        return "must be 1, 2, 4 or 8"
    if name == "bucket_mb":
        return "must be a number of MiB from 1/1024 (1 KiB) to 1,048,576 (1 TiB)"
    if low == 1 and whole:
        return f"must be a positive whole number, at most {_bound(high)}"
    start = f"above {_bound(low)}" if open_low else f"at least {_bound(low)}"
    return f"must be a {'whole number' if whole else 'number'} {start} and at most {_bound(high)}"


def _bound(value: float) -> str:
    """A range's end as a person reads it: ``10^16``, not 10,000,000,000,000,000."""
    exponent = math.log10(value) if value > 0 else 0.0
    if value >= 1e7 and exponent.is_integer():
        return f"10^{int(exponent)}"
    return number(value)


def _check_work_grows(points: tuple[tuple[int, float], ...]) -> None:
    """A step at a larger batch does more work: never faster than at a smaller one (it
    was split into a fixed cost larger than a step and a negative per-sample time)."""
    ordered = sorted(points)
    for (b_small, t_small), (b_large, t_large) in itertools.pairwise(ordered):
        if t_large < t_small:
            raise NamedError(
                f"{ref('step_ms', t_large)} at {ref('batch', b_large)} is faster than "
                f"{t_small:g} at {ref('batch', b_small)}: a larger batch does more work; "
                "measure both again (the same model, precision and device)"
            )


GRADIENT_PRECISION = {2: "bf16"}  # by bytes per gradient element; fp32 otherwise


def _file_read(help: str, names: tuple[str, ...] = ()) -> str | None:
    """A file the advice reads (``--bench``, ``--topo``, ``--collectives``): typed as a
    path on the command line, kept as its text in the request (which is JSON), None when
    not given."""
    return option(None, names=names, parse=str, cli=Path | None, help=help)


@dataclass(frozen=True, kw_only=True, slots=True)
class AdviceRequest(JsonRequest):
    """What to advise on and under which assumptions: each field's help (the ``advise``
    option's) in its metadata, sizes parsed from ``7M``-style text on the command line."""

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
        help="Forward + backward FLOPs per sample (default 6 x params), e.g. 4G.",
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
        optional = {f.name for f in fields(self) if f.default is None}
        for name, value in self._numbers():
            if value is None and name not in optional:
                raise TypeError(f"{name} must be a number, not None ({help_of(self, name)})")
            _check_type(name, value, _RANGES[name][2])
        bad = [(name, value) for name, value in self._numbers() if not _in_range(name, value)]
        if bad:
            name, value = bad[0]
            raise FieldError(name, value, _rule(name))
        if self.nodes * self.gpus_per_node > MAX_DEVICES:
            raise NamedError(
                f"{ref('nodes', self.nodes)} x {ref('gpus_per_node', self.gpus_per_node)} is "
                f"{self.nodes * self.gpus_per_node:,} devices: at most {MAX_DEVICES:,} are "
                "advised on"
            )
        if self.strategy is not None:  # None: as benched (--bench), else ddp
            settle_choice(self, "strategy", STRATEGIES, OTHER_NAMES)
        self._check_state()
        settle_choice(self, "grad_bytes", (1, 2, 4, 8))
        for name in ("bench", "model", "device_name", "interconnect", "topo", "collectives"):
            value = getattr(self, name)
            if value is not None and not isinstance(value, str):
                raise TypeError(f"{name} must be text (a name or a path), not {value!r}")
        settle_choice(self, "scaling", SCALINGS)
        check_preset(self)  # before any file is read (`--bench` missing said after it)
        self._resolve_names()
        self._check_pairs()
        check_pairs(self)  # options that contradict each other (``advice.conflicts``)

    def _check_state(self) -> None:
        """The optimizer and precision named, and known together (``data/state_bytes.csv``
        has a row for the pair)."""
        for name, allowed in (("optimizer", OPTIMIZERS), ("precision", PRECISIONS)):
            if getattr(self, name) is not None:
                settle_choice(self, name, allowed)
        pair = (self.optimizer, self.precision)
        if None not in pair and pair not in state_bytes():
            known = [p for o, p in state_bytes() if o == self.optimizer and p in PRECISIONS]
            raise NamedError(
                f"{ref('optimizer', self.optimizer)} with {ref('precision', self.precision)}: "
                f"its bytes per parameter are known in {joined(known)} only"
            )

    def _resolve_names(self) -> None:
        """The workload and ruleset as every command resolves them (``bret``: "did you
        mean 'bert'?", ``5.0``: ``5.0.0``), for a Python call as for the command line
        (:class:`~gpuscale.names.UnknownNameError`, a ``ValueError``, otherwise)."""
        if self.ruleset is not None:  # None: DEFAULT_RULESET, for a workload only
            if not isinstance(self.ruleset, str):
                raise TypeError(f"ruleset must be text (e.g. 5.0.0), not {self.ruleset!r}")
            try:
                object.__setattr__(self, "ruleset", resolve_ruleset(self.ruleset))
            except UnknownNameError as exc:
                raise exc.as_field("ruleset") from None
        resolve_device(self.device_name)  # "RTX A1000" is no A100: refused, with the closest
        if self.workload is not None:
            if not isinstance(self.workload, str):
                raise TypeError(f"workload must be text (a name), not {self.workload!r}")
            try:
                object.__setattr__(self, "workload", resolve_workloads([self.workload])[0])
            except UnknownNameError as exc:
                raise exc.as_field("workload") from None

    def _check_pairs(self) -> None:
        """Step times at several batches come in (step, batch) pairs of distinct batches;
        a fixed cost is part of the one step time given, so below it."""
        steps, batches = self.step_ms, self.batch
        if isinstance(batches, tuple) and self.bench is not None:
            raise NamedError(ONE_BATCH_WITH_BENCH)
        if isinstance(steps, tuple) or isinstance(batches, tuple):
            count = len(steps) if isinstance(steps, tuple) else 1
            if not isinstance(batches, tuple) or len(batches) != count:
                given = len(batches) if isinstance(batches, tuple) else int(batches is not None)
                raise NamedError(
                    f"{counted(count, 'step time')} ({ref('step_ms')}) "
                    f"{agreeing(count, 'needs', 'need')} as many {ref('batch')} values, one "
                    f"per step time (got {given or 'none'})"
                )
            if len(set(batches)) != len(batches):
                raise NamedError(
                    f"the {ref('batch')} values of the step times must differ: {batches}"
                )
            _check_work_grows(tuple(zip(batches, steps, strict=True)))  # type: ignore[arg-type]
            if self.fixed_ms is not None:
                raise NamedError(f"give {ref('fixed_ms')} or step times at two batches, not both")
        elif self.fixed_ms is not None and steps is not None and self.fixed_ms >= steps:
            raise NamedError(
                f"{ref('fixed_ms', self.fixed_ms)} is not below {ref('step_ms', steps)}: the "
                "fixed per-step cost is the part of that step that does not shrink with the batch"
            )

    @property
    def gradient_precision(self) -> str:
        """``bf16`` for 2-byte gradients, else ``fp32``: the precision the rate is checked
        against the device's peak at."""
        return GRADIENT_PRECISION.get(self.grad_bytes, "fp32")

    @property
    def step_points(self) -> tuple[tuple[int, float], ...]:
        """(per-device batch, step ms) of every step time given; the first is the
        configuration advised on (batch 32 when none was given)."""
        if self.step_ms is None:
            return ()
        if isinstance(self.step_ms, tuple):
            return tuple(zip(self.batch, self.step_ms, strict=True))  # type: ignore[arg-type]
        return ((self.batch or DEFAULT_BATCH, self.step_ms),)  # type: ignore[list-item]

    @property
    def samples_to_train(self) -> float:
        """The samples given, else :data:`DEFAULT_SAMPLES` (the advice then says so)."""
        return DEFAULT_SAMPLES if self.samples is None else float(self.samples)

    def _numbers(self) -> list[tuple[str, object]]:
        """Every number given, each value of a field given several times (a tuple)."""
        out: list[tuple[str, object]] = []
        for name in _RANGES:
            value = getattr(self, name)
            out += [(name, v) for v in value] if isinstance(value, tuple) else [(name, value)]
        return out

    @classmethod
    def of(cls, request: AdviceRequest | None = None, **keywords: object) -> AdviceRequest:
        """``request`` with ``keywords`` replaced, or a request of the keywords."""
        if request is None:
            return cls(**keywords)
        return cls(**(asdict(request) | keywords))

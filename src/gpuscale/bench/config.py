"""One bench configuration: what every run of a sweep does, written once.

The CLI builds a :class:`BenchConfig` (its options' defaults and help come from here)
and the runner hands it to every worker as JSON; what a run of it is in the results file
(its row's config, its key) is ``bench.row_keys``. Nothing here imports torch.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import ClassVar

from gpuscale.bench.cores import usable_cores
from gpuscale.quantities import parse_bytes
from gpuscale.sizes import number_or_none
from gpuscale.tables.refusals import Range, spelled
from gpuscale.tables.requests import (
    FieldError,
    JsonRequest,
    option,
    ref,
    settle_choice,
    text_option,
)

STRATEGIES = ("ddp", "fsdp")
PRECISIONS = ("fp32", "bf16", "fp16")
GRAD_COMMS = ("fp32", "bf16")
SCALINGS = ("weak", "strong")
BACKENDS = ("auto", "nccl", "gloo")
# TF32 for fp32 on a GPU: ``default`` as PyTorch leaves it (cuDNN convolutions on
# ``torch.backends.cudnn.allow_tf32 = True``, matmuls off), ``on`` both, ``off`` neither.
TF32_MODES = ("default", "on", "off")


def tf32_flags(mode: str) -> tuple[bool, bool]:
    """(matmul, cuDNN) TF32 of a mode of ``TF32_MODES``."""
    return mode == "on", mode != "off"


def tf32_mode(value: object) -> str:
    """A mode of ``TF32_MODES`` from a row or option: rows written before the modes said
    ``true`` (both on) or ``false`` (both off); None is PyTorch's default."""
    if value is None:
        return "default"
    if isinstance(value, bool):
        return _TF32_OF_BOOL[value]
    return str(value)


_TF32_OF_BOOL = {True: "on", False: "off"}
# the option that set a mode
_TF32_OPTION = {"on": "--tf32", "off": "--no-tf32"}


class ModelError(ValueError):
    """A model that cannot be run: unknown, not importable, a bad factory, or one whose
    code failed in the guarded child that counts its parameters; ``status`` is the
    row's (``error``, ``timeout``, ``oom``, ``crashed``)."""

    def __init__(self, message: str, *, status: str = "error") -> None:
        super().__init__(message)
        self.status = str(status)


DEFAULT_GLOBAL_BATCH = 64  # strong scaling's, split over the devices
DDP_BUCKET_MB = 25.0  # DistributedDataParallel's bucket_cap_mb default


def _scaling(strong: bool) -> str:
    """``--strong`` -> ``strong``; without it, ``weak``."""
    return "strong" if strong else "weak"


def _nvml(off: bool) -> bool:
    """``--no-nvml`` -> False (NVML not read)."""
    return not off


# The largest value each whole-number field takes (a typo such as 10 digits too many is
# refused where it is parsed, not carried into a launch; a results row's config likewise).
LARGEST = {
    "steps": 10**7,
    "warmup": 10**7,
    "batch": 2**31 - 1,
    "global_batch": 2**31 - 1,
    "accum": 2**20,
    "threads": 4096,
    "repeat": 1000,
}
MAX_TIMEOUT_S = 30 * 86400.0  # 30 days
MIN_MEMORY_BYTES = 64 << 20
MEMORY_LIMIT_RANGE: Range = (MIN_MEMORY_BYTES, 2**60, False)  # bytes, as --memory-limit takes


@dataclass(frozen=True, kw_only=True, slots=True)
class BenchConfig(JsonRequest):
    """How every (model, world size) of a sweep is run: each field's help (the ``bench``
    option's) in its metadata.
    Sent to the workers as JSON; unknown fields are an error (versions must match)."""

    json_name: ClassVar[str] = "bench config"
    field_ranges: ClassVar[Mapping[str, Range]] = {"memory_limit_bytes": MEMORY_LIMIT_RANGE}
    backend: str = option("auto", help="auto, nccl (GPUs) or gloo (CPU).")
    steps: int = option(
        20, help="Timed steps of each kind (synchronised and no-sync), after the warm-up."
    )
    warmup: int = option(5, help="Untimed steps first (the same for every world size).")
    batch: int | None = option(
        None, help="Per-device batch (weak scaling); default 32 on GPU, 8 on CPU."
    )
    # weak (fixed per-device batch) or strong (fixed global batch split)
    scaling: str = option(
        "weak",
        names=("--strong",),
        parse=_scaling,
        cli=bool,
        shown=False,
        help="Strong scaling: --global-batch split over devices.",
    )
    # None where not given (64 under --strong): given without --strong, even as 64, it is refused
    global_batch: int | None = option(
        None, help=f"Global batch for strong scaling; default {DEFAULT_GLOBAL_BATCH}."
    )
    accum: int = option(
        1, help="Gradient accumulation: micro-batches per optimizer step (one sync each)."
    )
    precision: str = option("fp32", help="fp32, bf16 or fp16 (autocast; fp16 with a GradScaler).")
    # TF32_MODES (true / false from older rows: on / off)
    tf32: str = option(
        "default",
        names=("--tf32/--no-tf32",),
        parse=tf32_mode,
        cli=bool | None,
        shown=None,
        help="TF32 tensor cores for fp32 on a GPU: --tf32 for matmuls and convolutions, "
        "--no-tf32 for neither; default as PyTorch runs it (convolutions on, matmuls off).",
    )
    strategy: str = option("ddp", help="ddp (DistributedDataParallel) or fsdp (FSDP2 fully_shard).")
    # None: not typed, DDP's default (``ddp_bucket_mb``); typed with FSDP, refused
    bucket_mb: float | None = option(
        None,
        help=f"DDP bucket size in MiB (DDP's bucket_cap_mb, default {DDP_BUCKET_MB:g}; its "
        "first bucket is 1 MiB).",
    )
    grad_comm: str = option(
        "fp32", help="Gradient communication dtype under DDP: fp32, or bf16 (compression hook)."
    )
    threads: int = option(
        0,
        help="CPU threads per process, the same at every world size "
        "(0: the host's cores / the most ranks the sweep puts on this host, every node on it).",
    )
    timeout_s: float = option(
        600.0,
        names=("--timeout",),
        help="Seconds a model may run before it is stopped and recorded as timeout.",
    )
    nvml: bool = option(
        True, names=("--no-nvml",), parse=_nvml, cli=bool, shown=False, help="Do not read NVML."
    )
    repeat: int = option(
        1,
        help="Run each configuration this many times and keep the run of median throughput "
        "(of an even count the slower middle one); the spread over the median recorded.",
    )
    memory_limit_bytes: int | None = text_option(
        None,
        parse_bytes,
        names=("--memory-limit",),
        help="Host memory each process running a model's code may allocate, e.g. "
        "8G (the child process that counts its parameters, and each rank): past it the run is "
        "recorded as oom. "
        "Default: 2 GiB for the parameter count (on PyTorch's meta device), and for each rank on "
        "CPU the host's memory / the sweep's most ranks per node (ranks on GPUs: no cap).",
    )

    def __post_init__(self) -> None:
        object.__setattr__(self, "tf32", tf32_mode(self.tf32))
        if self.tf32 not in TF32_MODES:
            raise ValueError(f"invalid tf32: {self.tf32!r} is not one of {', '.join(TF32_MODES)}")

        def whole(name: str, low: int, *, optional: bool = False) -> tuple[bool, str]:
            value, high = getattr(self, name), LARGEST[name]
            count = number_or_none(value, whole=True)
            ok = count is not None and low <= count <= high
            return ok or (optional and value is None), f"a whole number from {low} to {high:,}"

        def real(value: object, low: float, high: float) -> bool:
            number = number_or_none(value)
            return number is not None and math.isfinite(number) and low <= number <= high

        rules = {  # the field, whether its value is allowed, and what is
            "steps": whole("steps", 1),
            "warmup": whole("warmup", 0),
            "batch": whole("batch", 1, optional=True),  # None: the device's default
            "global_batch": whole("global_batch", 1, optional=True),  # None: 64 (strong)
            "accum": whole("accum", 1),
            "bucket_mb": (
                self.bucket_mb is None or real(self.bucket_mb, 1 / 1024, 2**20),
                "a number of MiB from 1/1024 (1 KiB) to 1,048,576 (1 TiB)",
            ),
            "threads": whole("threads", 0),
            "timeout_s": (
                real(self.timeout_s, 1e-3, MAX_TIMEOUT_S) and self.timeout_s > 0,
                f"a number of seconds above 0 and at most {MAX_TIMEOUT_S:,.0f} (30 days)",
            ),
            "repeat": whole("repeat", 1),
            "memory_limit_bytes": (
                self.memory_limit_bytes is None
                or real(self.memory_limit_bytes, *MEMORY_LIMIT_RANGE[:2]),
                "at least 64 MiB",
            ),
        }
        bad = [
            (name, getattr(self, name), f"must be {rule}")
            for name, (ok, rule) in rules.items()
            if not ok
        ]
        if bad:
            raise FieldError(*bad[0], more=tuple(bad[1:]))
        for name, allowed in (
            ("scaling", SCALINGS),
            ("precision", PRECISIONS),
            ("strategy", STRATEGIES),
            ("grad_comm", GRAD_COMMS),
            ("backend", BACKENDS),
        ):
            settle_choice(self, name, allowed)
        # an option of the other scaling would otherwise be ignored without a word
        if self.scaling == "weak" and self.global_batch is not None:
            raise FieldError(
                "global_batch",
                self.global_batch,
                f"applies to strong scaling: add {ref('scaling', 'strong', flag=True)} (weak "
                f"scaling keeps {ref('batch')} per device)",
            )
        if self.scaling == "strong" and self.batch is not None:
            raise FieldError(
                "batch",
                self.batch,
                f"is weak scaling's per-device batch; with {ref('scaling', 'strong', flag=True)}, "
                f"{ref('global_batch')} is split",
            )
        if self.strategy == "fsdp" and self.grad_comm != "fp32":
            raise FieldError(
                "grad_comm",
                self.grad_comm,
                f"applies to DDP's compression hook; with {ref('strategy', 'fsdp')} FSDP "
                "communicates in its own dtype",
            )
        if self.strategy == "fsdp" and self.bucket_mb is not None:  # DDP's, as grad_comm
            raise FieldError(
                "bucket_mb",
                self.bucket_mb,
                f"applies to DDP's gradient buckets; with {ref('strategy', 'fsdp')} FSDP "
                "communicates per sharded module (an all-gather and a reduce-scatter each), "
                "in no buckets",
            )
        if self.backend == "gloo" and self.tf32 != "default":  # no effect, a split baseline
            raise FieldError(  # the flag named as typed: --tf32 or --no-tf32
                "tf32",
                True,
                f"applies to GPUs only ({spelled(_TF32_OPTION[self.tf32], repr(self.tf32))} "
                f"given): with "
                f"{ref('backend', 'gloo')} the ranks run on CPUs, where TF32 does nothing",
            )

    @property
    def ddp_bucket_mb(self) -> float:  # the bucket a run uses and its row records
        return DDP_BUCKET_MB if self.bucket_mb is None else self.bucket_mb

    def per_device_batch(self, accelerators: int, device: str) -> int:
        """The micro-batch each device runs: ``batch`` (weak) or the global batch split
        over devices and accumulation steps (strong)."""
        if self.scaling == "strong":
            total = DEFAULT_GLOBAL_BATCH if self.global_batch is None else self.global_batch
            micro = total // (accelerators * self.accum)
            if micro < 1 or total % (accelerators * self.accum):
                raise ValueError(
                    f"global batch {total} does not split into {accelerators} "
                    f"devices x {self.accum} accumulation steps"
                )
            return micro
        return self.batch or (32 if device == "cuda" else 8)

    def resolved_threads(self, largest_local_world: int, nodes_on_host: int = 1) -> int:
        """Threads per process: as given, else the host's cores (those its CPU affinity
        allows: :func:`~gpuscale.bench.cores.usable_cores`) shared by the most processes
        this sweep puts on the host (the largest per-node world size times the nodes
        running on this host), so that every world size computes with the same
        threads per rank (like with like) and two "nodes" on one host do not
        oversubscribe it."""
        if self.threads:
            return self.threads
        ranks = max(1, largest_local_world) * max(1, nodes_on_host)
        return max(1, usable_cores() // ranks)

    def resolved_backend(self, device: str) -> str:
        return "nccl" if device == "cuda" and self.backend in ("auto", "nccl") else "gloo"

    def unapplied(self, device: str) -> list[str]:
        """A note for each GPU option given that does nothing on ``device`` (``cpu``: no
        CUDA device under ``--backend auto``, where --tf32 ran as if not given, unsaid;
        with ``--backend gloo`` --tf32 is refused before)."""
        if device == "cuda":
            return []
        where = "the ranks run on CPUs (gloo)"
        if self.backend == "auto":
            where = f"--backend auto found no CUDA device, so {where}"
        notes = []
        if self.tf32 != "default":
            notes.append(
                f"note: {_TF32_OPTION[self.tf32]} does not apply here: {where}, where TF32 "
                "does nothing; the rows record tf32 'default', what ran (on a GPU host it "
                "applies)"
            )
        if not self.nvml:
            notes.append(
                f"note: --no-nvml does not apply here: {where}, where NVML is not read "
                "(the CPU package's energy is read from RAPL where the host allows it)"
            )
        return notes

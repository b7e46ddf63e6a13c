"""One collectives sweep's settings, written once: the ``gpuscale collectives`` options
take their defaults and help from :class:`CollectivesConfig`, and the torchrun worker
(``gpuscale.bench.collectives``) takes the same defaults for its flags. Also the
record schema and nccl-tests' arithmetic (bus factors, message sizes), which the CLI, the
worker and the tests share. Nothing here imports torch."""

from __future__ import annotations

import math
import os
import re
import secrets
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

from gpuscale.hardware.links import check_preset
from gpuscale.interconnect.nvml import check_gpu_option
from gpuscale.names import UnknownNameError, resolve_choice, resolve_gpu
from gpuscale.quantities import format_bytes, joined, parse_bytes
from gpuscale.tables.requests import (
    FieldError,
    NamedError,
    comma_items,
    flag,
    given_twice,
    option,
    oversubscribe_option,
    ref,
    results_out_option,
    settle_choice,
    text_option,
)

# The collectives nccl-tests times (BUS_FACTOR below has their factors).
OPS = ("all_reduce", "all_gather", "reduce_scatter", "all_to_all", "broadcast", "send_recv")
BACKENDS = ("auto", "nccl", "gloo")
GPU_MAX_BYTES = 1 << 30  # nccl-tests' usual -e 1G
MAX_CALLS = 1_000_000  # timed or warm-up calls per size
MAX_GAP_MS = 60_000  # ms of compute between timed calls
CPU_MAX_BYTES = 64 << 20  # gloo on CPU: larger messages only take longer
MIN_BYTES = 8  # nccl-tests' usual -b 8
# Copies of the largest message each CPU rank's memory holds at once (the worker's
# ``Buffers``, the check's mask, the transport's staging): all-reduce and broadcast one
# buffer, gloo's chunks of it and the check's mask (a quarter); all-to-all and send/recv
# send from one buffer into another. All-gather and reduce-scatter hold the whole message
# and one rank's part, and gloo stages them through flat copies made in its own threads,
# whose freed memory the next call does not always reuse: how much a rank keeps varies
# from run to run, not with the ranks. Measured with gloo (each rank's own high-water
# mark, VmHWM, over a sweep at 8 MiB; tests/bench/test_collectives_memory.py), 4 runs
# each on 1, 2 and 3 ranks: all-reduce up to 1.7 copies, broadcast 1.3, all-to-all and
# send/recv 2.3, all-gather 11.5, reduce-scatter 7.9; staged ops are counted at 16, a
# margin over the most seen.
HOST_BUFFERS = {"all_reduce": 2, "broadcast": 2, "all_to_all": 3, "send_recv": 3}
STAGED = ("all_gather", "reduce_scatter")
STAGED_BUFFERS = 16


def host_buffers(op: str) -> int:
    """Copies of the largest message one CPU rank holds at once in ``op`` (on any number
    of ranks)."""
    return STAGED_BUFFERS if op in STAGED else HOST_BUFFERS[op]


def _names(text: str) -> tuple[str, ...]:
    """``all_reduce,all_gather`` -> its names, as ``--ops`` is typed."""
    return tuple(text.split(","))


def collectives(names: tuple[str, ...]) -> tuple[str, ...]:
    """The collectives ``names`` mean, each by its name in :data:`OPS`: case, ``_``
    and ``-`` ignored, as NCCL (``ALL_REDUCE``, ``AllReduce``) and nccl-tests
    (``alltoall``, ``sendrecv``) spell them, never by a beginning (``broad``: refused
    naming broadcast in full, as every choice's abbreviation is); ``ops``'s
    :class:`FieldError` for an empty name, one unknown (the closest said), or one given
    twice however spelled."""
    typed = ",".join(names)
    comma_items("ops", typed, "all_reduce,broadcast", "name")
    if not names:
        raise FieldError("ops", typed, f"none given; known: {', '.join(OPS)}")
    try:
        found = tuple(resolve_choice(name.strip(), OPS, "collective") for name in names)
    except UnknownNameError as exc:
        raise FieldError("ops", typed, str(exc)) from None
    if twice := given_twice(found, "collective"):
        raise FieldError("ops", typed, twice)
    return found


def sizes_reversed(smallest: int, largest: int, *, given: bool) -> str:
    """Why a sweep cannot run from ``smallest`` to ``largest`` bytes, its fields named
    (:func:`ref`; ``given``: the largest was given, else it is the device's default, said
    as such; a smallest of :data:`MIN_BYTES` is the default, never typed to be refused):
    the way out, either field moved."""
    above = ref("max_bytes", largest) if given else f"the default {ref('max_bytes')}"
    below = ref("min_bytes", smallest)
    if smallest == MIN_BYTES:
        below = f"the default {ref('min_bytes')}"
    return (
        f"{below} ({format_bytes(smallest)}) is above {above} "
        f"({format_bytes(largest)}): the sweep doubles from the smallest message to the "
        f"largest; give a smaller {ref('min_bytes')} or a larger {ref('max_bytes')}"
    )


@dataclass(frozen=True, kw_only=True, slots=True)
class CollectivesConfig:
    """What every rank of a collectives sweep runs: each field's help (the ``collectives``
    option's) in its metadata.
    ``max_bytes`` None: :data:`GPU_MAX_BYTES` on GPUs, :data:`CPU_MAX_BYTES` on CPU."""

    backend: str = option("auto", help="auto, nccl or gloo.")
    min_bytes: int = text_option(
        MIN_BYTES, parse_bytes, shown=str(MIN_BYTES), help="Smallest message (nccl-tests -b)."
    )
    max_bytes: int | None = text_option(
        None,
        parse_bytes,
        help="Largest message (nccl-tests -e): K, M, G are binary (1G = 2^30 B, as "
        "nccl-tests), KiB/MiB/GiB too, KB/MB/GB decimal; default 1G on GPUs, 64M on CPU.",
    )
    ops: tuple[str, ...] = text_option(
        ("all_reduce",),
        _names,
        shown="all_reduce",
        help=f"Comma-separated: {', '.join(OPS)}.",
    )
    iters: int = option(20, help="Timed calls per size (nccl-tests -n).")
    warmup: int = option(5, help="Warm-up calls (nccl-tests -w).")
    check: bool = flag(
        "--check/--no-check", default=True, help="Check every result (nccl-tests -c)."
    )
    gap_ms: float = option(
        0.0,
        help="Compute this many ms between timed calls, as training does between "
        "all-reduces (0: back to back, as nccl-tests).",
    )
    load: bool = flag(
        "--load",
        help="CPU processes: keep a compute thread busy on every rank while the calls are "
        "timed, as backward does beside DDP's all-reduce (calibrates advice for CPU devices); "
        "ignored on GPUs.",
    )

    def __post_init__(self) -> None:
        object.__setattr__(self, "ops", collectives(self.ops))
        settle_choice(self, "backend", BACKENDS)
        checks = {  # the field, whether its value is allowed, and what is
            "min_bytes": (self.min_bytes >= 1, "must be at least 1 byte"),
            "max_bytes": (self.max_bytes is None or self.max_bytes >= 1, "must be at least 1 byte"),
            "iters": (
                1 <= self.iters <= MAX_CALLS,
                f"must be a whole number from 1 to {MAX_CALLS:,}",
            ),
            "warmup": (
                0 <= self.warmup <= MAX_CALLS,
                f"must be a whole number from 0 to {MAX_CALLS:,}",
            ),
            # a gap is compute between all-reduces: past a minute the sweep only waits
            "gap_ms": (
                math.isfinite(self.gap_ms) and 0 <= self.gap_ms <= MAX_GAP_MS,
                f"must be a number of ms from 0 to {MAX_GAP_MS:,} (one minute)",
            ),
        }
        bad = [(name, getattr(self, name), rule) for name, (ok, rule) in checks.items() if not ok]
        if bad:
            raise FieldError(*bad[0], more=tuple(bad[1:]))
        if self.max_bytes is not None and self.min_bytes > self.max_bytes:
            raise NamedError(sizes_reversed(self.min_bytes, self.max_bytes, given=True))

    def largest(self, device: str) -> int:
        """The largest message in bytes on ``device`` (``cuda`` or ``cpu``)."""
        if self.max_bytes is not None:
            return self.max_bytes
        return GPU_MAX_BYTES if device == "cuda" else CPU_MAX_BYTES

    def host_bytes(self, world: int, device: str) -> int:
        """Host memory ``world`` CPU ranks of this sweep hold at its largest message:
        each rank's copies of it (:func:`host_buffers`, the most of the collectives
        asked)."""
        return world * max(host_buffers(op) for op in self.ops) * self.largest(device)

    def worker_args(self, device: str, sweep_id: str) -> list[str]:
        """The flags of ``python -m gpuscale.bench.collectives`` that run this sweep."""
        return [
            *("--backend", self.backend, "--ops", ",".join(self.ops)),
            *("--min-bytes", str(self.min_bytes), "--max-bytes", str(self.largest(device))),
            *("--iters", str(self.iters), "--warmup", str(self.warmup)),
            *("--gap-ms", str(self.gap_ms), "--sweep-id", sweep_id),
            *([] if self.check else ["--no-check"]),
            *(["--load"] if self.load else []),
        ]


SCHEMA = "gpuscale.collectives/2"


def new_sweep_id(now: datetime | None = None) -> str:
    """A sweep's id: the UTC second it started and six random hex digits
    (``20261130T044006-3fa91c``), so that sweeps started in the same second (one after
    another, or side by side into one file) are told apart; ids of files written before
    (the second alone) are read as they are."""
    now = now or datetime.now(timezone.utc)
    return f"{now:%Y%m%dT%H%M%S}-{secrets.token_hex(3)}"


BUS_FACTOR: dict[str, Callable[[int], float]] = {
    "all_reduce": lambda n: 2 * (n - 1) / n,
    "all_gather": lambda n: (n - 1) / n,
    "reduce_scatter": lambda n: (n - 1) / n,
    "all_to_all": lambda n: (n - 1) / n,
    "broadcast": lambda n: 1.0,
    "send_recv": lambda n: 1.0,
}
PLACEMENTS = {
    "all_reduce": ("in-place",),
    "broadcast": ("in-place",),
    "all_gather": ("out-of-place", "in-place"),
    "reduce_scatter": ("out-of-place", "in-place"),
    "all_to_all": ("out-of-place",),
    "send_recv": ("out-of-place",),
}


def bus_bandwidth(op: str, size_bytes: float, seconds: float, ranks: int) -> tuple[float, float]:
    """(algbw, busbw) in GB/s (1e9 bytes per second), the nccl-tests conventions."""
    if seconds <= 0 or ranks < 1:
        raise ValueError("time and ranks must be positive")
    algbw = size_bytes / seconds / 1e9
    return algbw, algbw * BUS_FACTOR[op](ranks)


def message_sizes(max_bytes: int, min_bytes: int = 8, factor: int = 2) -> list[int]:
    """``min_bytes`` times ``factor`` repeatedly up to ``max_bytes``, which is always the
    last size (nccl-tests ``-b``/``-e``/``-f``)."""
    sizes, size = [], min_bytes
    while size < max_bytes:
        sizes.append(size)
        size *= factor
    sizes.append(max_bytes)
    return sizes


# The element every message is made of (the worker's float32), and the collectives whose
# every rank holds the whole message (the others' ranks each hold an equal part of it)
ELEMENT_BYTES = 4
WHOLE_MESSAGE_OPS = ("all_reduce", "broadcast", "send_recv")


def sent_bytes(op: str, size: int, ranks: int) -> int:
    """The bytes ``op`` moves for a message of ``size`` asked on ``ranks``: whole
    elements, at least one per rank's part, split evenly over the ranks where each holds a
    part (nccl-tests rounds its sizes so)."""
    split = 1 if op in WHOLE_MESSAGE_OPS else ranks
    return max(1, size // ELEMENT_BYTES // split) * split * ELEMENT_BYTES


def sizes_measured(op: str, sizes: list[int], ranks: int) -> list[int]:
    """The sizes of ``sizes`` the sweep times for ``op``: the first of those sent as the same
    bytes (:func:`sent_bytes`: 1, 2 and 4 B all-reduced all go as 4 B), once; timing the
    others would show the same message again as rows alike."""
    seen: set[int] = set()
    measured = []
    for size in sizes:
        if (moved := sent_bytes(op, size, ranks)) not in seen:
            seen.add(moved)
            measured.append(size)
    return measured


# Pairs of sizes a rounding note names before it counts the rest
ROUNDED_SHOWN = 3


def _apart(moved: int, asked: list[int]) -> str:
    """``moved`` bytes as :func:`format_bytes` writes them, or in whole bytes where that
    reads as a size asked (4092 B sent for 4 KiB, never "4 KiB as 4 KiB")."""
    said = format_bytes(moved)
    return f"{moved} B" if said in map(format_bytes, asked) else said


def rounded_sizes(config: CollectivesConfig, device: str, ranks: int) -> list[str]:
    """One sentence where a size of the sweep (``--min-bytes`` doubled up to
    ``--max-bytes``) is not the size sent (:func:`sent_bytes`): the sizes as sent, the
    first few named, ops rounded alike said together; none where every size goes as
    asked."""
    sizes = message_sizes(config.largest(device), config.min_bytes)
    ops_of: dict[str, list[str]] = {}  # how sizes went: the ops that sent them so
    once = False  # whether sizes asked went as one size sent (timed once: sizes_measured)
    for op in config.ops:
        sent: dict[int, list[int]] = {}  # bytes sent: the sizes asked that went as it
        for size in sizes:
            if (moved := sent_bytes(op, size, ranks)) != size:
                sent.setdefault(moved, []).append(size)
        once |= any(len(asked) > 1 or moved in sizes for moved, asked in sent.items())
        shown = [
            f"{joined([format_bytes(a) for a in asked])} as {_apart(moved, asked)}"
            for moved, asked in list(sent.items())[:ROUNDED_SHOWN]
        ]
        more = sum(map(len, list(sent.values())[ROUNDED_SHOWN:]))
        if shown:
            how = "; ".join(shown) + (f"; {more:,} sizes more" if more else "")
            ops_of.setdefault(how, []).append(op)
    if not ops_of:
        return []
    split = [op for ops in ops_of.values() for op in ops if op not in WHOLE_MESSAGE_OPS]
    parts = f", split evenly over the {ranks:,} ranks in {joined(split)}" if split else ""
    said = "; ".join(f"{joined(ops)} sent {how}" for how, ops in ops_of.items())
    timed = "; each size sent is timed and shown once" if once else ""
    return [
        f"sizes sent as nccl-tests sends them, in whole {ELEMENT_BYTES}-byte elements"
        f"{parts}: {said}{timed}"
    ]


COLLECTIVES_OUT = Path("collectives.jsonl")


@dataclass(frozen=True, kw_only=True, slots=True)
class CheckRequest:
    """What ``gpuscale collectives`` is asked beside each rank's settings
    (:class:`CollectivesConfig`): where the rows go, how many processes, and what the
    interconnect is judged against; each field's help (the option's) in its metadata."""

    out: Path = results_out_option(COLLECTIVES_OUT)
    nproc: str | None = option(
        None, help="Processes (one per device): one number (default: every GPU, else 2)."
    )
    oversubscribe: bool = oversubscribe_option()
    interconnect: str | None = option(
        None, help="Link preset to judge against (default: from the detected topology)."
    )
    topo_file: Path | None = option(
        None,
        names=("--topo-file", "--topo"),
        help="A saved `nvidia-smi topo -m` to judge against.",
    )
    gpu: str | None = option(None, help="GPU model, e.g. A100 (for --topo-file).")

    def __post_init__(self) -> None:
        from gpuscale.bench.results_file import COLLECTIVES_FILE, check_results_out  # lazy: numpy

        check_results_out("out", self.out, COLLECTIVES_FILE, COLLECTIVES_OUT)
        if self.nproc is not None and len(comma_items("nproc", self.nproc, "2", "count")) > 1:
            raise FieldError(
                "nproc",
                self.nproc,
                f"collectives runs one world size: give one number, e.g. {ref('nproc', '2')} "
                "(run it again for another)",
            )
        if self.nproc is not None and not re.fullmatch(r"0*[1-9][0-9]{0,8}", self.nproc.strip()):
            raise FieldError("nproc", self.nproc, "must be a positive whole number, e.g. 2")
        resolve_gpu(self.gpu)  # a GPU the catalogue does not know: refused before the sweep
        check_gpu_option(self.topo_file, self.gpu)  # --gpu alone would be ignored
        check_preset(self)  # a preset named wrongly: refused before the sweep

    def world(self, environ: Mapping[str, str] = os.environ) -> int:
        """The processes to run: ``--nproc``, else every local device (GPUs, else two
        CPU processes); ``nproc``'s :class:`FieldError` for text that is no number. A
        Slurm step's second task on a node (``srun --ntasks-per-node=8``) is refused, a
        ValueError: each task would run its own sweep on the node's devices at once, the
        sweeps measuring each other's traffic and judged against each other."""
        from gpuscale.bench.runner import world_sizes  # lazy: the runner, only to run
        from gpuscale.bench.slurm import second_task

        if aside := second_task(environ, "gpuscale collectives"):
            raise ValueError(aside)
        return max(world_sizes(self.nproc))

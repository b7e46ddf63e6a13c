"""Timing training steps: synchronised and no-sync steps, interleaved, and the gradient
communication itself, measured by a DDP communication hook.

Every timed step runs twice with the same data, the order alternating: normally
(gradients synchronised: DDP all-reduces buckets overlapped with backward; FSDP
reduce-scatters) and without gradient synchronisation (DDP ``no_sync``; FSDP
``set_requires_gradient_sync(False)``, which still all-gathers parameters). Their
difference is what synchronisation costs a step. The clock is CUDA events on GPUs (read
after ``synchronize``) and ``perf_counter`` on CPUs; one barrier starts the timed phase
and none is placed inside it, so the straggler wait real training pays is measured.

Under DDP the all-reduce of every bucket goes through :class:`CommMeter`, a comm hook
that marks when the bucket was handed to the collective and when the collective
completed; the union of those intervals is the step's **communication time** (in flight,
queueing behind an earlier bucket included). With ``measure_norms`` it also records the
squared gradient norms before (this rank's micro-batch) and after the all-reduce (the
global batch), from which the gradient noise scale is estimated.
"""

from __future__ import annotations

import contextlib
import inspect
import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

import torch
import torch.distributed as dist
from torch.distributed.algorithms.ddp_comm_hooks import default_hooks
from torch.nn.parallel import DistributedDataParallel as DDP

from gpuscale.bench.clock import Instant, Mark, clock
from gpuscale.bench.flops import count
from gpuscale.bench.model_base import Batch, BenchModel


def merged_ms(spans: list[tuple[float, float]]) -> float:
    """Total length of the union of intervals (ms): time with a collective in flight."""
    total, end = 0.0, float("-inf")
    for start, stop in sorted(spans):
        if stop <= end:
            continue
        total += stop - max(start, end)
        end = stop
    return total


class CommMeter:
    """A DDP communication hook: the usual bucket all-reduce (fp32, or bf16-compressed),
    timed. After each synchronised step :meth:`take` returns the step's communication
    time, the buckets' sizes and (with ``measure_norms``) the squared gradient norms."""

    def __init__(self, device: torch.device, compress: bool) -> None:
        self.mark, self.elapsed = clock(device)
        self.compress = compress
        self.measure_norms = False
        self._marks: list[tuple[Instant, Instant]] = []
        self._local_sq: list[torch.Tensor] = []
        self._global_sq: list[torch.Tensor] = []
        self._sizes: list[int] = []
        self.bucket_bytes: list[int] = []  # the buckets of the latest synchronised step

    # No annotations on the hook: DDP checks them at run time, and this module's
    # postponed annotations would be strings. (state: process group, bucket: GradBucket.)
    def hook(self, state, bucket):  # type: ignore[no-untyped-def]
        buffer = bucket.buffer()
        self._sizes.append(buffer.numel() * buffer.element_size())
        if self.measure_norms:
            self._local_sq.append(buffer.detach().float().pow(2).sum())
        start = self.mark()
        send = default_hooks.bf16_compress_hook if self.compress else default_hooks.allreduce_hook
        future = send(state, bucket)

        def done(fut: torch.futures.Future[torch.Tensor]) -> torch.Tensor:
            reduced = fut.value()
            self._marks.append((start, self.mark()))
            if self.measure_norms:
                self._global_sq.append(reduced.detach().float().pow(2).sum())
            return reduced

        return future.then(done)

    def take(self) -> tuple[float, float, float]:
        """(communication ms, local |g|^2, global |g|^2) of the step just finished (the
        device synchronised first); clears the step's marks."""
        if self._marks:
            origin = self._marks[0][0]
            spans = [(self.elapsed(origin, a), self.elapsed(origin, b)) for a, b in self._marks]
        else:
            spans = []
        local, glob = _total(self._local_sq), _total(self._global_sq)
        self.bucket_bytes = self._sizes or self.bucket_bytes
        self._marks, self._local_sq, self._global_sq, self._sizes = [], [], [], []
        return merged_ms(spans), local, glob


def _total(squares: list[torch.Tensor]) -> float:
    """The sum of a step's squared norms; NaN where none was taken (no bucket reduced)."""
    if not squares:
        return math.nan
    return float(sum(t.item() for t in squares))


def ddp(module: torch.nn.Module, device: torch.device, bucket_mb: float = 25.0) -> DDP:
    """``module`` in DistributedDataParallel without buffer syncing in forward: buffers
    (batch norm) would be sent every forward, no-sync steps included, and blur what
    synchronising gradients costs."""
    quiet = (
        {"forward_sync_buffers": False}
        if "forward_sync_buffers" in inspect.signature(DDP).parameters
        else {"broadcast_buffers": False}
    )
    return DDP(
        module,
        device_ids=[device.index] if device.type == "cuda" else None,
        bucket_cap_mb=bucket_mb,
        **quiet,
    )


@dataclass
class Job:
    """Everything one timed step needs."""

    bench: BenchModel
    wrapped: torch.nn.Module
    optimizer: torch.optim.Optimizer
    batch: Batch
    device: torch.device
    accum: int = 1
    autocast: torch.dtype | None = None
    scaler: torch.amp.GradScaler | None = None  # fp16's loss scaling
    fsdp: bool = False
    comm: CommMeter | None = None
    last_loss: torch.Tensor | None = None  # the last step's loss, read once timing is over
    bare: torch.nn.Module | None = None  # FSDP at N = 1: an unsharded copy (sharded in place)

    @contextlib.contextmanager
    def no_sync(self) -> Iterator[None]:
        if self.fsdp:
            self.wrapped.set_requires_gradient_sync(False)
            try:
                yield
            finally:
                self.wrapped.set_requires_gradient_sync(True)
        elif hasattr(self.wrapped, "no_sync"):
            with self.wrapped.no_sync():
                yield
        else:  # the bare module: nothing to synchronise
            yield


def one_step(
    job: Job, sync: bool, mark: Mark
) -> tuple[list[tuple[Instant, Instant, Instant]], Instant, Instant]:
    """One optimizer step of ``job.accum`` micro-batches (gradients synchronised on the
    last one when ``sync``). Returns the (forward start, forward end, backward end) marks
    of every micro-batch, the step's first mark and its end mark."""
    marks = []
    begin = mark()
    for i in range(job.accum):
        quiet = not sync or i < job.accum - 1
        with job.no_sync() if quiet else contextlib.nullcontext():
            t0 = mark()
            with torch.autocast(
                job.device.type, dtype=job.autocast, enabled=job.autocast is not None
            ):
                loss = job.bench.forward_loss(job.wrapped, job.batch) / job.accum
            job.last_loss = loss.detach()  # a reference: no sync while timed
            t1 = mark()
            (job.scaler.scale(loss) if job.scaler is not None else loss).backward()
            t2 = mark()
        marks.append((t0, t1, t2))
    if job.scaler is not None and (sync or not job.fsdp):
        job.scaler.step(job.optimizer)
        job.scaler.update()
    else:  # FSDP2's no-sync step leaves the sharded gradients unset: AdamW steps over none,
        # where fp16's GradScaler refuses a step with no gradient
        job.optimizer.step()
    job.optimizer.zero_grad(set_to_none=True)
    end = mark()
    if job.device.type == "cuda":
        torch.cuda.synchronize(job.device)
    return marks, begin, end


@dataclass
class Timings:
    """Per-step milliseconds of one rank, by kind (``synced``/``nosync``) and phase
    (``forward``, ``backward``, ``optimizer``, ``step``), and per synchronised step the
    communication time."""

    kinds: dict[str, dict[str, list[float]]] = field(
        default_factory=lambda: {
            kind: {"forward": [], "backward": [], "optimizer": [], "step": []}
            for kind in ("synced", "nosync")
        }
    )
    comm_ms: list[float] = field(default_factory=list)


def timed_steps(
    job: Job,
    *,
    steps: int,
    warmup: int,
    on_start: Callable[[], None],
    plain: Job | None = None,
    plain_small: Job | None = None,
) -> Timings:
    """Warm-up, then ``steps`` synchronised and ``steps`` no-sync steps interleaved (the
    order alternating) so both kinds see the same machine state; with ``plain`` (the
    bare module, N = 1) a third kind ``plain`` in the same rotation, and with
    ``plain_small`` (the bare module at a smaller batch) a fourth, ``plain_small``: two
    batches timed alike give the fixed per-step cost. ``on_start`` runs when the timed
    phase begins (after the barrier)."""
    mark, elapsed = clock(job.device)
    out = Timings()
    runs: list[tuple[str, Job, bool]] = [("synced", job, True), ("nosync", job, False)]
    for name, extra in (("plain", plain), ("plain_small", plain_small)):
        if extra is not None:
            out.kinds[name] = {"forward": [], "backward": [], "optimizer": [], "step": []}
            runs.append((name, extra, True))
    for i in range(warmup + steps):
        if i == warmup:
            dist.barrier()  # the timed phase starts together on every rank
            on_start()
        shift = i % len(runs)
        for name, this, sync in runs[shift:] + runs[:shift]:
            marks, begin, end = one_step(this, sync, mark)
            comm = this.comm.take()[0] if this.comm is not None and sync else None
            if i < warmup:
                continue
            kind = out.kinds[name]
            kind["forward"].append(sum(elapsed(a, b) for a, b, _ in marks))
            kind["backward"].append(sum(elapsed(b, c) for _, b, c in marks))
            kind["optimizer"].append(elapsed(marks[-1][2], end))
            kind["step"].append(elapsed(begin, end))
            if comm is not None:
                out.comm_ms.append(comm)
    return out


def gradient_norms(job: Job, steps: int, batch_size: int) -> tuple[list[float], list[float]]:
    """Squared gradient norms over ``steps`` extra synchronised steps (untimed), each on a
    fresh batch of ``batch_size`` drawn by the model's ``make_batch`` (from this rank's
    seed): this rank's gradient (its micro-batches) and the all-reduced global one."""
    if job.comm is None:
        return [], []
    mark, _ = clock(job.device)
    job.comm.measure_norms = True
    local, glob = [], []
    try:
        for _ in range(steps):
            job.batch = job.bench.make_batch(batch_size, job.device)
            one_step(job, True, mark)
            _, small, big = job.comm.take()
            local.append(small)
            glob.append(big)
    finally:
        job.comm.measure_norms = False
    return local, glob


def count_flops(
    bench: BenchModel, batch: Batch, batch_size: int
) -> tuple[float | None, tuple[str, ...], float | None]:
    """(training FLOPs per sample (forward + backward), dense ops that ran uncounted, of
    the FLOPs per sample those of convolutions), by ``torch.utils.flop_counter`` with
    :mod:`gpuscale.bench.flops`'s formulas, on the bare module before it is wrapped; FLOPs
    None if the counter cannot run the model."""
    try:
        counted = count(lambda: bench.forward_loss(bench.module, batch).backward())
    except Exception:  # an operator the counter cannot trace: no FLOPs, no MFU
        return None, (), None
    finally:
        bench.module.zero_grad(set_to_none=True)
    conv = sum(n for op, n in counted.by_op.items() if "conv" in op)
    return counted.total / batch_size, counted.uncounted_ops, conv / batch_size

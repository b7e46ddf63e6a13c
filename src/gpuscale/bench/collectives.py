"""The collectives sweep, as nccl-tests runs it: the torchrun worker behind ``gpuscale
collectives``.

For each collective and size: buffers allocated on every rank (an out-of-memory anywhere
stops every rank with an ``oom`` row), ``--warmup`` calls, then ``--iters`` calls back to
back, each marked (CUDA events on GPU, ``perf_counter`` on CPU), then one more call on
fresh inputs checked element by element (``wrong``: nccl-tests' ``#wrong``). Reported per
size, as nccl-tests does: the time averaged over ranks (``time_us``; the slowest rank's in
``time_us_max``), the 50th and 99th percentile of the per-call time of the slowest rank
(``time_us_p50``/``_p99``), ``algbw = size / time`` and ``busbw = algbw x factor`` with
nccl-tests' factors (its ``doc/PERFORMANCE.md``): all-reduce ``2(n-1)/n``, all-gather,
reduce-scatter and all-to-all ``(n-1)/n``, broadcast and send/recv 1. ``size`` follows
nccl-tests too: the buffer for all-reduce and broadcast, the whole output for all-gather,
the whole input for reduce-scatter and all-to-all, what each rank sends for send/recv.
Out-of-place and in-place where torch has both (all-gather, reduce-scatter); all-reduce
and broadcast are in-place in torch, all-to-all and send/recv out-of-place. The header
records the host's load while the sweep ran (``host``), as ``bench`` records a run's.

Run under torchrun: ``torchrun --nproc-per-node N -m gpuscale.bench.collectives --out F``.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import time
from collections.abc import Callable
from datetime import datetime, timezone
from pathlib import Path

import numpy as np
import torch
import torch.distributed as dist

from gpuscale.bench.background import Background
from gpuscale.bench.clock import clock
from gpuscale.bench.collectives_config import (
    ELEMENT_BYTES,
    PLACEMENTS,
    SCHEMA,
    WHOLE_MESSAGE_OPS,
    CollectivesConfig,
    bus_bandwidth,
    message_sizes,
    new_sweep_id,
    sent_bytes,
    sizes_measured,
)
from gpuscale.bench.ranks import end_rank, pick_device
from gpuscale.bench.results_file import append_records
from gpuscale.bench.telemetry import HostSample, host_busy, machine_environment
from gpuscale.interconnect.nccl import backend_for
from gpuscale.plausibility import UNMEASURED_HOST, host_measured
from gpuscale.sizes import parse_bytes
from gpuscale.sources.processes import die_with_runner


def _compute(device: torch.device, keep_going: Callable[[], bool]) -> None:
    """Small matmuls on ``device`` while ``keep_going()``: a training step's compute."""
    x = torch.ones(64, 64, device=device)
    while keep_going():
        x = torch.tanh(x @ x)
        if device.type == "cuda":
            torch.cuda.synchronize()


def _busy(ms: float, device: torch.device) -> None:
    """Keep the device computing for ``ms`` milliseconds, as a training step does
    between two gradient all-reduces."""
    end = time.perf_counter() + ms / 1e3
    _compute(device, lambda: time.perf_counter() < end)


class _Load(Background):
    """A thread that computes until stopped: with ``--load`` it runs on every rank during
    the timed calls, as backward does while DDP's all-reduce runs. On a CPU "device" both
    then share the rank's core, which is what the step sees."""

    def __init__(self, device: torch.device) -> None:
        super().__init__()
        self._device = device

    def run(self) -> None:
        _compute(self._device, lambda: not self.stopping.is_set())


class Buffers:
    """One collective's tensors for one size and placement, filled so the result is
    known: rank r sends r + 1 everywhere."""

    def __init__(self, op: str, size: int, placement: str, n: int, rank: int, device: torch.device):
        self.op, self.n, self.rank = op, n, rank
        # the ranks a message is split over: each holds all of it in the whole-message ops
        split = 1 if op in WHOLE_MESSAGE_OPS else n
        self.size_bytes = sent_bytes(op, size, n)
        whole = self.size_bytes // ELEMENT_BYTES
        self.elements = whole // split
        dtype = torch.float32
        if op in ("all_reduce", "broadcast"):
            self.send = self.recv = torch.empty(whole, dtype=dtype, device=device)
        elif op in ("all_gather", "reduce_scatter"):  # one whole buffer, one rank's part
            full = torch.empty(whole, dtype=dtype, device=device)
            part = (
                full.narrow(0, rank * self.elements, self.elements)
                if placement == "in-place"
                else torch.empty(self.elements, dtype=dtype, device=device)
            )
            self.send, self.recv = (part, full) if op == "all_gather" else (full, part)
        else:  # all_to_all, send_recv
            self.send = torch.empty(whole, dtype=dtype, device=device)
            self.recv = torch.empty(whole, dtype=dtype, device=device)

    def fill(self) -> None:
        self.send.fill_(float(self.rank + 1))

    def run(self) -> None:
        n, rank = self.n, self.rank
        if self.op == "all_reduce":
            dist.all_reduce(self.send)
        elif self.op == "broadcast":
            dist.broadcast(self.send, src=0)
        elif self.op == "all_gather":
            dist.all_gather_into_tensor(self.recv, self.send)
        elif self.op == "reduce_scatter":
            dist.reduce_scatter_tensor(self.recv, self.send)
        elif self.op == "all_to_all":
            dist.all_to_all_single(self.recv, self.send)
        else:
            ops = [
                dist.P2POp(dist.isend, self.send, (rank + 1) % n),
                dist.P2POp(dist.irecv, self.recv, (rank - 1) % n),
            ]
            for work in dist.batch_isend_irecv(ops):
                work.wait()

    def wrong(self) -> int:
        """Elements that differ from the known result (nccl-tests' #wrong), compared
        against the known values in place: one boolean mask, no copy of the result."""
        n, rank, out = self.n, self.rank, self.recv
        if self.op in ("all_reduce", "reduce_scatter"):
            differs = out != n * (n + 1) / 2
        elif self.op == "broadcast":
            differs = out != 1.0
        elif self.op in ("all_gather", "all_to_all"):  # block r holds r + 1
            known = torch.arange(1, n + 1, dtype=out.dtype, device=out.device).view(n, 1)
            differs = out.view(n, self.elements) != known
        else:
            differs = out != float((rank - 1) % n + 1)
        return int(torch.count_nonzero(differs).item())


def _time_size(
    buffers: Buffers, device: torch.device, config: CollectivesConfig
) -> tuple[list[float], int]:
    """Per-call seconds of ``config.iters`` back-to-back calls after warm-up, and the wrong
    elements of one checked call."""
    mark, elapsed_ms = clock(device)
    buffers.fill()
    for _ in range(config.warmup):
        buffers.run()
    if device.type == "cuda":
        torch.cuda.synchronize()
    spans = []
    start = mark()
    for _ in range(config.iters):
        if config.gap_ms > 0:
            _busy(config.gap_ms, device)
            start = mark()  # the compute gap is not the call's time
        buffers.run()
        end = mark()
        spans.append((start, end))
        start = end
    if device.type == "cuda":
        torch.cuda.synchronize()
    times = [elapsed_ms(a, b) / 1e3 for a, b in spans]
    wrong = 0
    if config.check:
        buffers.fill()
        buffers.run()
        wrong = buffers.wrong()
    return times, wrong


def _all_ok(ok: bool, device: torch.device) -> bool:
    """Whether every rank could do its part (a MIN over ranks)."""
    flag = torch.tensor([int(ok)], dtype=torch.int32, device=device)
    dist.all_reduce(flag, op=dist.ReduceOp.MIN)
    return bool(flag.item())


def _summary(op: str, times: list[list[float]], size: int, n: int) -> dict[str, object]:
    """nccl-tests' figures from every rank's per-call seconds."""
    per_rank = np.asarray(times, dtype=float)  # ranks x iterations
    slowest = per_rank.max(axis=0)
    mean = float(per_rank.mean(axis=1).mean())
    algbw, busbw = bus_bandwidth(op, size, mean, n)
    return {
        "time_us": mean * 1e6,
        "time_us_max": float(per_rank.mean(axis=1).max()) * 1e6,
        "time_us_p50": float(np.percentile(slowest, 50)) * 1e6,
        "time_us_p99": float(np.percentile(slowest, 99)) * 1e6,
        "algbw_gbs": algbw,
        "busbw_gbs": busbw,
    }


def sweep(
    config: CollectivesConfig, sweep_id: str, device: torch.device
) -> list[dict[str, object]]:
    """Every op, size (each size sent once: :func:`sizes_measured`) and placement; rows as
    rank 0 writes them (other ranks: [])."""
    n, rank = dist.get_world_size(), dist.get_rank()
    rows: list[dict[str, object]] = []
    base = {"kind": "result", "sweep_id": sweep_id, "ranks": n, "dtype": "float32"}
    for op in config.ops:
        stop = False
        sizes = message_sizes(config.largest(device.type), config.min_bytes)
        for size in sizes_measured(op, sizes, n):
            for placement in PLACEMENTS[op]:
                row = {**base, "op": op, "placement": placement, "redop": "sum"}
                buffers = None  # the last size's tensors freed before this one's are made
                try:
                    buffers = Buffers(op, size, placement, n, rank, device)
                    ok = True
                except (torch.OutOfMemoryError, MemoryError, RuntimeError):
                    ok, buffers = False, None
                if not _all_ok(ok, device):
                    rows.append({**row, "status": "oom", "size_bytes": size})
                    stop = True
                    break
                try:
                    times, wrong = _time_size(buffers, device, config)
                except (RuntimeError, NotImplementedError, ValueError) as exc:
                    reason = (str(exc).strip().splitlines() or [repr(exc)])[0]
                    rows.append({**row, "status": "unsupported", "error": reason[:300]})
                    stop = True
                    break
                gathered: list[tuple[list[float], int]] = [(times, wrong)] * n  # every rank's
                dist.all_gather_object(gathered, (times, wrong))
                figures = _summary(op, [g[0] for g in gathered], buffers.size_bytes, n)
                rows.append(
                    {
                        **row,
                        "status": "ok",
                        "size_bytes": buffers.size_bytes,
                        "count": buffers.size_bytes // 4,
                        "root": 0 if op == "broadcast" else -1,
                        **figures,
                        "wrong": sum(g[1] for g in gathered),
                        "load": config.load and device.type == "cpu",
                        "gap_ms": config.gap_ms,
                    }
                )
            if stop:
                break
    return rows if rank == 0 else []


def _header(config: CollectivesConfig, sweep_id: str, device: torch.device) -> dict[str, object]:
    env = machine_environment(device)
    return {
        "schema": SCHEMA,
        "kind": "sweep",
        "sweep_id": sweep_id,
        "started_at": datetime.now(timezone.utc).isoformat(),
        "ranks": dist.get_world_size(),
        "nodes": int(os.environ.get("GROUP_WORLD_SIZE", "1")),
        "backend": dist.get_backend(),
        "device": device.type,
        "device_name": env.get("device_name"),
        # the GPUs local rank k may take (the k-th named): whose ring the verdict expects
        "visible_devices": os.environ.get("CUDA_VISIBLE_DEVICES"),
        "versions": {
            "torch": torch.__version__,
            "cuda": torch.version.cuda,
            "nccl": env.get("nccl"),
        },
        "nccl_env": env.get("nccl_env", {}),
        "topology": env.get("topology"),
        "settings": {
            "iters": config.iters,
            "warmup": config.warmup,
            "check": config.check,
            "load": config.load,
            "gap_ms": config.gap_ms,
        },
    }


def _host_load(
    start: HostSample | None, seconds: float
) -> tuple[dict[str, object] | None, list[str]]:
    """The share of each host's CPU time other processes used, and the hypervisor stole,
    while the sweep ran (``seconds`` since ``start``), as ``bench`` records a run's
    (``telemetry.host_busy`` over every rank's samples): not measured (None each) over
    less than ``MIN_BUSY_WINDOW_S``; None where a rank has no /proc. Beside it the hosts
    the ranks ran on, sorted (the header's ``hosts``). Every rank calls it."""
    gathered: list[object] = [None] * dist.get_world_size()
    dist.all_gather_object(gathered, (start, HostSample.now(), os.uname().nodename))
    starts, ends, names = (list(x) for x in zip(*gathered, strict=True))  # type: ignore[call-overload]
    host = host_busy(starts, ends, names)
    if host is not None and not host_measured(seconds):
        host = dict(UNMEASURED_HOST)
    return host, sorted(set(names))


def _bytes(text: str) -> int:
    """A byte size as ``gpuscale collectives`` reads one (``4G``, ``64MiB``, ``1048576``):
    the worker runs alone under torchrun across nodes, given the command's sizes."""
    try:
        return parse_bytes(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def main(argv: list[str] | None = None) -> int:
    d = CollectivesConfig()  # the defaults, the same as `gpuscale collectives`
    parser = argparse.ArgumentParser(prog="python -m gpuscale.bench.collectives")
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--backend", default=d.backend)
    parser.add_argument("--ops", default=",".join(d.ops))
    parser.add_argument("--min-bytes", type=_bytes, default=d.min_bytes)
    parser.add_argument("--max-bytes", type=_bytes, default=d.max_bytes)  # None: by device
    parser.add_argument("--iters", type=int, default=d.iters)
    parser.add_argument("--warmup", type=int, default=d.warmup)
    parser.add_argument("--no-check", dest="check", action="store_false")
    parser.add_argument("--sweep-id", default=new_sweep_id())
    parser.add_argument("--gap-ms", type=float, default=d.gap_ms)
    parser.add_argument("--load", action="store_true")
    args = parser.parse_args(argv)
    die_with_runner()  # with its launcher, and with the command that started it
    try:
        config = CollectivesConfig(
            ops=tuple(args.ops.split(",")),
            **{k: getattr(args, k) for k in ("min_bytes", "max_bytes", "iters", "warmup")},
            **{k: getattr(args, k) for k in ("check", "gap_ms", "load", "backend")},
        )
    except ValueError as exc:
        parser.error(str(exc))
    device = pick_device(config.backend)
    dist.init_process_group(backend_for(device.type))
    try:
        header = _header(config, args.sweep_id, device) if dist.get_rank() == 0 else None
        load = _Load(device) if config.load and device.type == "cpu" else contextlib.nullcontext()
        started, start = time.perf_counter(), HostSample.now()
        with load:
            rows = sweep(config, args.sweep_id, device)
        host, hosts = _host_load(start, time.perf_counter() - started)
        if header is not None:
            header["host"] = host
            header["hosts"] = hosts  # where it ran: a shared file holds several nodes' sweeps
    finally:
        dist.destroy_process_group()
    if header is not None:  # the whole sweep in one write: never interleaved with another's
        append_records(args.out, [{"schema": SCHEMA, **record} for record in (header, *rows)])
    return 0


if __name__ == "__main__":
    end_rank(main)

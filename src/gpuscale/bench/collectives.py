"""Collectives sweep (all-reduce, all-gather, reduce-scatter), reported as nccl-tests does.

For a message of ``size`` bytes (nccl-tests: the per-rank input for all-reduce, the total
output for all-gather and the total input for reduce-scatter) taking ``t`` seconds on
``n`` ranks: ``algbw = size / t`` and ``busbw = algbw * factor`` with factor ``2(n-1)/n``
for all-reduce and ``(n-1)/n`` for all-gather and reduce-scatter, so busbw compares with
the link's bandwidth whatever ``n`` is. The time of a size is the slowest rank's mean
over the timed iterations (after warm-up), each iteration started after a barrier.

Run under torchrun: ``torchrun --nproc-per-node N -m gpuscale.bench.collectives --out F``;
``gpuscale collectives`` does that for you and judges the result.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from gpuscale.bench.background import Background

BUS_FACTOR = {
    "all_reduce": lambda n: 2 * (n - 1) / n,
    "all_gather": lambda n: (n - 1) / n,
    "reduce_scatter": lambda n: (n - 1) / n,
}
SCHEMA = "gpuscale.collectives/1"


def bus_bandwidth(op: str, size_bytes: float, seconds: float, ranks: int) -> tuple[float, float]:
    """(algbw, busbw) in GB/s (1e9 bytes per second), the nccl-tests conventions."""
    if seconds <= 0 or ranks < 1:
        raise ValueError("time and ranks must be positive")
    algbw = size_bytes / seconds / 1e9
    return algbw, algbw * BUS_FACTOR[op](ranks)


def load_collectives(path: Path) -> tuple[Any, dict[str, Any] | None]:
    """The ``ok`` rows of a collectives file as a DataFrame, and the last topology seen."""
    import pandas as pd

    rows, topology = [], None
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            record = json.loads(line)
        except json.JSONDecodeError:
            continue
        if record.get("op") == "topology":
            topology = record.get("topology")
        elif record.get("status") == "ok":
            rows.append(record)
    return pd.DataFrame(rows), topology


def judge_busbw(peak_busbw_gbs: float, preset_name: str | None) -> tuple[float | None, str]:
    """(measured / expected, a sentence) for the peak bus bandwidth against a link preset.

    Below half the expected figure is flagged: it usually means P2P is off, traffic goes
    through the host, or the NCCL transport fell back to sockets.
    """
    from gpuscale.links import PRESETS

    if preset_name is None or preset_name not in PRESETS:
        return None, (
            f"peak bus bandwidth {peak_busbw_gbs:.3g} GB/s; no reference figure for "
            "this link (CPU processes, or the link was not detected: pass "
            "--interconnect)"
        )
    preset = PRESETS[preset_name]
    ratio = peak_busbw_gbs / preset.busbw_gbs
    verdict = (
        "as expected"
        if ratio >= 0.8
        else "somewhat below expectations"
        if ratio >= 0.5
        else "FAR BELOW expectations: check that P2P is enabled "
        "(NCCL_P2P_DISABLE, PCIe ACS, IOMMU) and which NCCL transport is used "
        "(NCCL_DEBUG=INFO)"
    )
    return ratio, (
        f"peak bus bandwidth {peak_busbw_gbs:.3g} GB/s is {ratio:.0%} of the "
        f"{preset.busbw_gbs:g} GB/s expected for {preset.name} "
        f"({preset.description}): {verdict}"
    )


def message_sizes(max_bytes: int, min_bytes: int = 8) -> list[int]:
    """8 B, 16 B, ... doubling up to ``max_bytes``."""
    sizes, size = [], min_bytes
    while size <= max_bytes:
        sizes.append(size)
        size *= 2
    return sizes


def _iterations(size: int) -> int:
    return 50 if size < 1 << 20 else 20 if size < 1 << 26 else 5


def _compute(device: Any, keep_going: Callable[[], bool]) -> None:
    """Small matmuls on ``device`` while ``keep_going()``: a training step's compute."""
    import torch

    x = torch.ones(64, 64, device=device)
    while keep_going():
        x = torch.tanh(x @ x)
        if device.type == "cuda":
            torch.cuda.synchronize()


def _busy(ms: float, device: Any) -> None:
    """Keep the device computing for ``ms`` milliseconds, as a training step does
    between two gradient all-reduces."""
    end = time.perf_counter() + ms / 1e3
    _compute(device, lambda: time.perf_counter() < end)


class _Load(Background):
    """A thread that computes until stopped: with ``--load`` it runs on every rank
    during the timed calls, as backward does while DDP's all-reduce runs. On a CPU
    "device" both then share the rank's core, which is what the step sees."""

    def __init__(self, device: Any) -> None:
        super().__init__()
        self._device = device

    def run(self) -> None:
        _compute(self._device, lambda: not self.stopping.is_set())


def _time_op(op: str, size: int, n: int, device: Any, gap_ms: float) -> dict[str, Any]:
    """One row: the slowest rank's mean time of ``op`` on ``size`` bytes (nccl-tests'
    size convention), after 3 warm-up calls; or an ``unsupported`` row."""
    import torch
    import torch.distributed as dist

    elements = max(1, size // 4)
    per_rank = elements if op == "all_reduce" else max(1, elements // n)
    x = torch.ones(per_rank, dtype=torch.float32, device=device)
    out = torch.empty(
        per_rank * n if op == "all_gather" else per_rank, dtype=torch.float32, device=device
    )
    big = torch.ones(per_rank * n, dtype=torch.float32, device=device)

    def once() -> None:
        if op == "all_reduce":
            dist.all_reduce(x)
        elif op == "all_gather":
            dist.all_gather_into_tensor(out, x)
        else:
            dist.reduce_scatter_tensor(out, big)

    try:
        for _ in range(3):
            once()
        times = []
        for _ in range(_iterations(size)):
            dist.barrier()
            if gap_ms > 0:
                _busy(gap_ms, device)
            start = time.perf_counter()
            once()
            if device.type == "cuda":
                torch.cuda.synchronize()
            times.append(time.perf_counter() - start)
    except (RuntimeError, NotImplementedError) as exc:
        return {"op": op, "status": "unsupported", "error": str(exc).splitlines()[0]}
    mean = torch.tensor([sum(times) / len(times)], dtype=torch.float64, device=device)
    dist.all_reduce(mean, op=dist.ReduceOp.MAX)  # the slowest rank's mean
    slowest = float(mean.item())
    nbytes = per_rank * 4 * (1 if op == "all_reduce" else n)
    algbw, busbw = bus_bandwidth(op, nbytes, slowest, n)
    return {
        "op": op,
        "status": "ok",
        "bytes": nbytes,
        "ranks": n,
        "time_us": slowest * 1e6,
        "algbw_gbs": algbw,
        "busbw_gbs": busbw,
        "backend": dist.get_backend(),
        "device": device.type,
        "gap_ms": gap_ms,
    }


def _run(args: argparse.Namespace) -> list[dict[str, Any]]:
    import contextlib

    import torch
    import torch.distributed as dist

    local_rank = int(os.environ.get("LOCAL_RANK", "0"))
    use_cuda = args.backend in ("auto", "nccl") and torch.cuda.is_available()
    if use_cuda:
        torch.cuda.set_device(local_rank)
    device = torch.device("cuda", local_rank) if use_cuda else torch.device("cpu")
    dist.init_process_group("nccl" if use_cuda else "gloo")
    n, rank = dist.get_world_size(), dist.get_rank()
    rows = []
    # GPU kernels do not share a core with the all-reduce: the load is for CPU devices.
    load = _Load(device) if args.load and not use_cuda else contextlib.nullcontext()
    try:
        with load:
            for op in args.ops.split(","):
                for size in message_sizes(args.max_bytes):
                    row = _time_op(op, size, n, device, args.gap_ms)
                    rows.append({**row, "load": not use_cuda and args.load})
                    if row["status"] != "ok":
                        break
    finally:
        dist.destroy_process_group()
    return rows if rank == 0 else []


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m gpuscale.bench.collectives")
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--backend", default="auto", choices=["auto", "nccl", "gloo"])
    parser.add_argument("--ops", default="all_reduce,all_gather,reduce_scatter")
    parser.add_argument("--max-bytes", type=int, default=1 << 30)
    parser.add_argument(
        "--gap-ms",
        type=float,
        default=0.0,
        help="compute this long between timed calls (0: back to back, as nccl-tests)",
    )
    parser.add_argument(
        "--load",
        action="store_true",
        help="CPU devices: keep a compute thread busy on every rank during the timed calls "
        "(as backward does while DDP all-reduces); ignored on GPUs",
    )
    args = parser.parse_args(argv)
    rows = _run(args)
    if rows:
        from gpuscale.bench.topology import nvml_topology

        with args.out.open("a", encoding="utf-8") as handle:
            for row in rows:
                handle.write(json.dumps({"schema": SCHEMA, **row}) + "\n")
            topology = nvml_topology()
            handle.write(
                json.dumps({"schema": SCHEMA, "op": "topology", "topology": topology}) + "\n"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())

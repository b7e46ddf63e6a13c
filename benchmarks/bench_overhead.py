"""The cost of gpuscale's step instrumentation: instrumented vs plain DDP loop.

Usage::

    python benchmarks/bench_overhead.py [--nproc 2] [--models mlp-1m,tf-1.5m]
                                        [--steps 40] [--blocks 10]

Re-launches itself under torchrun (gloo on CPU, NCCL on GPUs). In every process the same
DDP model runs blocks of plain steps (forward, backward, optimizer: nothing else) and
blocks of instrumented steps (``gpuscale.bench.worker._one_step``: a barrier, four clock
marks, the CUDA synchronise), alternating so both see the same machine state. Prints the
plain loop's time per step, the step time the instrumentation *reports* (its bias against
the plain loop; target within 3%) and the instrumented loop's wall time per step (which
also pays the barrier placed before each timed step, outside the timed interval).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time


def measure(args: argparse.Namespace) -> None:
    import torch

    from gpuscale.bench.worker import process_group

    torch.set_num_threads(max(1, (os.cpu_count() or 1) // int(os.environ["LOCAL_WORLD_SIZE"])))
    with process_group("auto", 600) as device:
        for name in args.models.split(","):
            _compare(name, device, args)


def _compare(name: str, device: object, args: argparse.Namespace) -> None:
    import torch
    import torch.distributed as dist
    from torch.nn.parallel import DistributedDataParallel as DDP

    from gpuscale.bench.models import BY_NAME
    from gpuscale.bench.worker import _clock, _loss, _one_step

    spec = BY_NAME[name]
    model = spec.build().to(device)
    ddp = DDP(model, device_ids=[device.index] if device.type == "cuda" else None)
    optimizer = torch.optim.AdamW(ddp.parameters(), lr=1e-4)
    batch = spec.batch(args.batch, device)
    mark, elapsed = _clock(device)
    measured: list[float] = []

    def plain() -> None:
        loss = _loss(spec, ddp(batch[0]), batch[1])
        loss.backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)

    def instrumented() -> None:
        t0, _, _, t3 = _one_step(ddp, spec, optimizer, batch, True, mark, None, device)
        measured.append(elapsed(t0, t3))

    for _ in range(3):
        plain()
        instrumented()
    measured.clear()
    totals = {"plain": 0.0, "instrumented": 0.0}
    for block in range(args.blocks):
        order = ("plain", "instrumented") if block % 2 == 0 else ("instrumented", "plain")
        for kind in order:
            step = plain if kind == "plain" else instrumented
            if device.type == "cuda":
                torch.cuda.synchronize()
            dist.barrier()
            start = time.perf_counter()
            for _ in range(args.steps):
                step()
            if device.type == "cuda":
                torch.cuda.synchronize()
            totals[kind] += time.perf_counter() - start
    n = args.blocks * args.steps
    plain_ms = totals["plain"] / n * 1e3
    inst_ms = totals["instrumented"] / n * 1e3
    reported_ms = sum(measured) / len(measured)
    if dist.get_rank() == 0:
        bias = reported_ms / plain_ms - 1
        print(
            f"{name:10s} plain loop {plain_ms:8.3f} ms/step | instrumented: reported "
            f"step {reported_ms:8.3f} ms ({100 * bias:+.1f}% vs plain, "
            f"{'within' if abs(bias) < 0.03 else 'outside'} the 3% target), loop "
            f"wall time {inst_ms:8.3f} ms/step ({100 * (inst_ms / plain_ms - 1):+.1f}%,"
            " barrier included)",
            flush=True,
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--nproc", type=int, default=2)
    parser.add_argument("--models", default="mlp-1m,tf-1.5m")
    parser.add_argument("--steps", type=int, default=40)
    parser.add_argument("--blocks", type=int, default=10)
    parser.add_argument("--batch", type=int, default=8)
    args = parser.parse_args()
    if "LOCAL_WORLD_SIZE" in os.environ:
        measure(args)
        return
    command = [
        sys.executable,
        "-m",
        "torch.distributed.run",
        "--standalone",
        f"--nproc-per-node={args.nproc}",
        __file__,
        *sys.argv[1:],
    ]
    print(f"DDP on {args.nproc} processes; instrumented vs plain step, same run:")
    sys.exit(subprocess.run(command, env={**os.environ, "OMP_NUM_THREADS": "1"}).returncode)


if __name__ == "__main__":
    main()

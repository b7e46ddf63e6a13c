"""The cost of gpuscale's step instrumentation: instrumented vs plain DDP loop.

Usage::

    python benchmarks/bench_overhead.py [--nproc 2] [--models mlp-1m,tf-1.5m,cnn-0.3m]
                                        [--steps 40] [--blocks 10]

Re-launches itself under torchrun (gloo on CPU, NCCL on GPUs). In every process two DDP
copies of the same model run, in alternating blocks so both see the same machine state:
a plain loop (forward, backward, optimizer: nothing else) and the instrumented step
``gpuscale.bench.steps.one_step`` with gpuscale's communication hook (``CommMeter``, which
marks every bucket's all-reduce) and its clock marks. Prints the plain loop's time per
step, the step time the instrumentation *reports* (its bias against the plain loop) and
the instrumented loop's wall time per step (its cost): target within 3% of the plain
loop. Also prints the one-time cost of counting FLOPs (``torch.utils.flop_counter``, one
forward + backward before timing starts) against one plain step.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time


def measure(args: argparse.Namespace) -> None:
    import torch

    from gpuscale.bench.ranks import process_group

    torch.set_num_threads(max(1, (os.cpu_count() or 1) // int(os.environ["LOCAL_WORLD_SIZE"])))
    with process_group("auto", 600) as device:
        for name in args.models.split(","):
            _compare(name, device, args)


def _ddp(name: str, device, comm: bool):
    import torch
    import torch.distributed as dist

    from gpuscale.bench.models import load_model
    from gpuscale.bench.steps import CommMeter
    from gpuscale.bench.steps import ddp as wrap

    torch.manual_seed(0)
    bench = load_model(name)
    bench.module.to(device)
    ddp = wrap(bench.module, device)
    meter = None
    if comm and dist.get_world_size() > 1:
        meter = CommMeter(device, compress=False)
        ddp.register_comm_hook(dist.group.WORLD, meter.hook)
    return bench, ddp, torch.optim.AdamW(ddp.parameters(), lr=1e-4), meter


def _compare(name: str, device, args: argparse.Namespace) -> None:
    import torch
    import torch.distributed as dist

    from gpuscale.bench.clock import clock
    from gpuscale.bench.steps import Job, count_flops, one_step

    bench, plain_ddp, plain_opt, _ = _ddp(name, device, comm=False)
    batch = bench.make_batch(args.batch, device)
    start = time.perf_counter()
    count_flops(bench, batch, args.batch)
    flop_s = time.perf_counter() - start
    inst_bench, inst_ddp, inst_opt, meter = _ddp(name, device, comm=True)
    job = Job(
        bench=inst_bench,
        wrapped=inst_ddp,
        optimizer=inst_opt,
        batch=batch,
        device=device,
        comm=meter,
    )
    mark, elapsed = clock(device)
    measured: list[float] = []

    def plain() -> None:
        bench.forward_loss(plain_ddp, batch).backward()
        plain_opt.step()
        plain_opt.zero_grad(set_to_none=True)

    def instrumented() -> None:
        _, begin, end = one_step(job, True, mark)
        measured.append(elapsed(begin, end))
        if meter is not None:
            meter.take()

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
            begin = time.perf_counter()
            for _ in range(args.steps):
                step()
            if device.type == "cuda":
                torch.cuda.synchronize()
            totals[kind] += time.perf_counter() - begin
    n = args.blocks * args.steps
    plain_ms = totals["plain"] / n * 1e3
    inst_ms = totals["instrumented"] / n * 1e3
    reported_ms = sum(measured) / len(measured)
    if dist.get_rank() == 0:
        bias = reported_ms / plain_ms - 1
        cost = inst_ms / plain_ms - 1
        print(
            f"{name:9s} plain {plain_ms:8.3f} ms/step | instrumented: reported "
            f"{reported_ms:8.3f} ms ({100 * bias:+.1f}%), wall {inst_ms:8.3f} ms "
            f"({100 * cost:+.1f}%, {'within' if abs(cost) < 0.03 else 'outside'} the 3% "
            f"target) | FLOP count once: {flop_s * 1e3:.1f} ms = "
            f"{flop_s * 1e3 / plain_ms:.1f} plain steps",
            flush=True,
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--nproc", type=int, default=2)
    parser.add_argument("--models", default="mlp-1m,tf-1.5m,cnn-0.3m")
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
        # not our argv: torchrun's parser reads `--nproc` as an ambiguous abbreviation of its
        # own options even after the script (an H100 machine's torch 2.11 refused it)
        *(f"--{k}={getattr(args, k)}" for k in ("models", "steps", "blocks", "batch")),
    ]
    print(f"DDP on {args.nproc} processes; instrumented vs plain step, same run:")
    sys.exit(subprocess.run(command, env={**os.environ, "OMP_NUM_THREADS": "1"}).returncode)


if __name__ == "__main__":
    main()

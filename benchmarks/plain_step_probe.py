"""Why the bench's plain step of a launch-bound model can read above a tight loop of the
same module (``tests/bench/test_on_gpu.py``'s open xfail; docs/measure.md). On a GPU (on a
CPU it runs the same variants with ``perf_counter``, where no queue runs ahead: a check
that the probe runs, not a reading):

    python benchmarks/plain_step_probe.py --out benchmarks/results/plain_step_probe.json

For each of mlp-4m, cnn-4.7m and tf-7m (batch 32, AdamW, fp32, PyTorch's TF32 defaults)
it times one module's training step five ways, the five interleaved and repeated, so a
host's drift reaches all of them alike (ms per step, the mean of each repeat):

1. ``loop``: steps back to back, the wall clock around them, one synchronize at each end
   (the test's independent loop);
2. ``loop_synced``: the same loop with ``torch.cuda.synchronize()`` after every step,
   the wall clock around them: what a per-step synchronize alone costs;
3. ``one_step``: the bench's own ``one_step`` on the bare module, alone (CUDA events,
   a synchronize after every step);
4. ``bench``: the bench's ``timed_steps`` at N = 1 (DDP synced, DDP no-sync, plain and
   plain at a quarter batch, rotated), its ``plain`` kind: what a row records;
5. ``rotation_unsynced``: the same rotation with no synchronize between steps, the
   events read once at the end.

Reading: ``loop_synced`` near ``bench`` and above ``loop`` puts the gap on the per-step
synchronize (a step's queued kernels drain before the next step's launches begin, which
a launch-bound step cannot hide); ``one_step`` near ``loop`` and ``bench`` above both puts
it on the rotation; ``rotation_unsynced`` near ``loop`` says reading the events at the
end, with no synchronize, would remove it.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import torch
import torch.distributed as dist

from gpuscale.bench.clock import clock
from gpuscale.bench.config import BenchConfig
from gpuscale.bench.model_run import _bare, _job, small_batch
from gpuscale.bench.models import load_model
from gpuscale.bench.steps import Job, one_step, timed_steps

MODELS = ("mlp-4m", "cnn-4.7m", "tf-7m")
BATCH = 32
STEPS, WARMUP = 50, 10  # per variant and repeat (the bench's rotation: 20 and 5, as the test)
DEVICE = torch.device("cuda", 0) if torch.cuda.is_available() else torch.device("cpu")


def _synchronize() -> None:
    if DEVICE.type == "cuda":
        torch.cuda.synchronize(DEVICE)


def loop_ms(name: str, synced: bool = False) -> float:
    """The same module, AdamW, one batch made on the device, PyTorch's defaults (TF32 for
    cuDNN, not matmuls): ms per step, synchronised around the timed steps (``synced``: after
    every step too). ``tests/bench/test_on_gpu.py``'s independent loop."""
    device = DEVICE
    torch.manual_seed(0)
    bench = load_model(name)
    bench.module.to(device)
    optimizer = torch.optim.AdamW(bench.module.parameters(), lr=1e-4)
    batch = bench.make_batch(BATCH, device)

    def step() -> None:
        optimizer.zero_grad(set_to_none=True)
        bench.forward_loss(bench.module, batch).backward()
        optimizer.step()
        if synced:
            _synchronize()

    for _ in range(WARMUP):
        step()
    _synchronize()
    start = time.perf_counter()
    for _ in range(STEPS):
        step()
    _synchronize()
    return (time.perf_counter() - start) / STEPS * 1e3


def _bench_jobs(name: str) -> tuple[Job, Job, Job | None]:
    """The bench's N = 1 jobs: the DDP job, the bare one and the bare one at a quarter batch."""
    cfg = BenchConfig(steps=20, warmup=5, batch=BATCH)
    device = DEVICE
    micro = cfg.per_device_batch(1, device.type)
    job, _, _ = _job(name, cfg, device, 1, micro)
    plain = _bare(job)
    small = small_batch(micro)
    plain_small = replace(plain, batch=job.bench.make_batch(small, device)) if small else None
    return job, plain, plain_small


def _one_step_ms(name: str) -> float:
    _, plain, _ = _bench_jobs(name)
    mark, elapsed = clock(DEVICE)
    spans = []
    for i in range(WARMUP + STEPS):
        _, begin, end = one_step(plain, True, mark)
        if i >= WARMUP:
            spans.append(elapsed(begin, end))
    return statistics.fmean(spans)


def _bench_ms(name: str) -> float:
    job, plain, plain_small = _bench_jobs(name)
    timings = timed_steps(
        job, steps=20, warmup=5, on_start=lambda: None, plain=plain, plain_small=plain_small
    )
    return statistics.fmean(timings.kinds["plain"]["step"])


def _rotation_unsynced_ms(name: str) -> float:
    """The bench's rotation of four kinds with the per-step synchronize left out: the
    plain kind's events are read after one synchronize at the end."""
    job, plain, plain_small = _bench_jobs(name)
    runs = [(job, True), (job, False), (plain, True)] + ([(plain_small, True)] * bool(plain_small))
    mark, elapsed = clock(DEVICE)
    spans = []
    real = torch.cuda.synchronize
    torch.cuda.synchronize = lambda *args, **kwargs: None  # one_step's per-step sync, left out
    try:
        for i in range(5 + 20):
            shift = i % len(runs)
            for this, sync in runs[shift:] + runs[:shift]:
                _, begin, end = one_step(this, sync, mark)
                if this is plain and i >= 5:
                    spans.append((begin, end))
    finally:
        torch.cuda.synchronize = real
    _synchronize()
    return statistics.fmean(elapsed(a, b) for a, b in spans)


VARIANTS: dict[str, Callable[[str], float]] = {
    "loop": lambda name: loop_ms(name, synced=False),
    "loop_synced": lambda name: loop_ms(name, synced=True),
    "one_step": _one_step_ms,
    "bench": _bench_ms,
    "rotation_unsynced": _rotation_unsynced_ms,
}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, required=True, help="the JSON written")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args(argv)
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    os.environ.setdefault("MASTER_PORT", "29531")
    if DEVICE.type == "cuda":
        torch.cuda.set_device(DEVICE)
        dist.init_process_group("nccl", rank=0, world_size=1, device_id=DEVICE)
    else:
        print("no CUDA device: the variants run on the CPU (a check, not a reading)")
        dist.init_process_group("gloo", rank=0, world_size=1)
    ms: dict[str, dict[str, list[float]]] = {m: {v: [] for v in VARIANTS} for m in MODELS}
    for _ in range(args.repeats):
        for name in MODELS:
            for variant, run in VARIANTS.items():
                ms[name][variant].append(round(run(name), 4))
                if DEVICE.type == "cuda":
                    torch.cuda.empty_cache()
    dist.destroy_process_group()
    result = {
        "device": torch.cuda.get_device_name(DEVICE) if DEVICE.type == "cuda" else "cpu",
        "torch": torch.__version__,
        "cpu_count": os.cpu_count(),
        "batch": BATCH,
        "ms_per_step": ms,
    }
    args.out.write_text(json.dumps(result, indent=1) + "\n")
    for name in MODELS:
        print(name, {v: ms[name][v] for v in VARIANTS})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

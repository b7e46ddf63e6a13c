"""The memory a collectives sweep's CPU ranks hold, against what its pre-check counts: two
gloo ranks run the worker's own sweep of each collective at one size, and the host memory
each rank's resident set grew by (its peak, the measure the kernel's out-of-memory killer
goes by) is within the estimate the sweep is refused by. A sweep with all_gather once
passed the pre-check (2 buffers a rank) and a rank was killed."""

from __future__ import annotations

from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

from gpuscale.bench.collectives_config import OPS, CollectivesConfig  # noqa: E402

SIZE = 8 << 20  # one message of 8 MiB: a rank's copies of it stand out from the noise


def _rank(rank: int, op: str, store: str, out: str) -> None:
    import resource

    import torch.distributed as dist

    from gpuscale.bench.collectives import sweep

    def peak() -> int:
        # this process's own high-water mark (VmHWM): ru_maxrss starts from the peak of the
        # process that started it (a pytest worker's gigabyte), and would hide the growth
        status = Path("/proc/self/status")
        if status.exists():
            for line in status.read_text().splitlines():
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) * 1024
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024

    dist.init_process_group("gloo", init_method=f"file://{store}", rank=rank, world_size=2)
    try:
        cpu = torch.device("cpu")  # a small size first: what gloo sets up once not counted
        sweep(CollectivesConfig(ops=(op,), max_bytes=1 << 16, iters=2, warmup=1), "s", cpu)
        before = peak()
        config = CollectivesConfig(ops=(op,), min_bytes=SIZE, max_bytes=SIZE, iters=2)
        sweep(config, "s", cpu)
        grown = peak() - before
    finally:
        dist.destroy_process_group()
    Path(f"{out}.{rank}").write_text(str(grown))


@pytest.mark.slow
def test_the_memory_precheck_counts_what_the_ranks_hold(tmp_path: Path) -> None:
    import torch.multiprocessing as mp

    for op in OPS:  # each in fresh processes: a peak already reached hides a later one
        out = tmp_path / op
        mp.spawn(_rank, args=(op, str(tmp_path / f"{op}.store"), str(out)), nprocs=2)
        estimate = CollectivesConfig(ops=(op,), max_bytes=SIZE).host_bytes(2, "cpu") // 2
        for rank in range(2):
            grown = int(Path(f"{out}.{rank}").read_text())
            assert grown <= estimate, (
                f"rank {rank}'s {op} grew by {grown / SIZE:.2f} messages, "
                f"the pre-check counts {estimate / SIZE:.2f}"
            )

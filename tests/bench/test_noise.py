"""The gradient noise scale the bench measures, against a known answer (see linreg.py):
two gloo ranks run the worker's own measurement of one model; each rank draws its own
data, and B_simple's bootstrap interval holds the closed form."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

from gpuscale.analysis.critical_batch import noise_scale  # noqa: E402
from tests.builders import end_spawned_rank  # noqa: E402

from .linreg import b_simple  # noqa: E402


def _rank(rank: int, store: str, out: str) -> None:
    import torch.distributed as dist

    from gpuscale.bench.config import BenchConfig
    from gpuscale.bench.worker import run_model

    torch.set_num_threads(1)
    dist.init_process_group("gloo", init_method=f"file://{store}", rank=rank, world_size=2)
    try:
        cfg = BenchConfig(backend="gloo", steps=100, warmup=0, batch=4, nvml=False)
        measured = run_model("tests.bench.linreg:make", cfg, torch.device("cpu"))
        if rank == 0:
            Path(out).write_text(json.dumps(measured["noise"]))
    finally:
        dist.destroy_process_group()
    end_spawned_rank()


@pytest.mark.slow
def test_noise_scale_has_the_known_answer(tmp_path: Path) -> None:
    import torch.multiprocessing as mp

    out = tmp_path / "noise.json"
    mp.spawn(_rank, args=(str(tmp_path / "store"), str(out)), nprocs=2)
    noise = json.loads(out.read_text())
    assert (noise["batch_small"], noise["batch_big"]) == (4, 8)
    # different data on each rank: the local gradient is not the global one
    assert all(a != b for a, b in zip(noise["local_sq"], noise["global_sq"], strict=True))
    found = noise_scale(
        noise["local_sq"], noise["global_sq"], noise["batch_small"], noise["batch_big"]
    )
    assert found is not None
    truth = b_simple()  # 9.0
    assert found.low <= truth <= found.high, (found, truth)
    assert found.high / found.low < 3  # an interval that says something

"""A sweep compared with an earlier one (a new user's walk: two-call CPU sweeps printed
"DROPPED 78% ...: something changed (driver, P2P, a link, NCCL settings)"): only sweeps
that ran alike are compared, over the sizes both measured, with enough calls, and a
difference within the calls' own spread is said to be noise; gloo is never told to
check NCCL."""

from __future__ import annotations

import json
from pathlib import Path

from gpuscale.interconnect.records import read_sweeps
from gpuscale.interconnect.verdict import judge

SCHEMA = "gpuscale.collectives/2"


def sweep(
    sweep_id: str,
    busbw: float,
    *,
    iters: int = 20,
    backend: str = "gloo",
    device: str = "cpu",
    spread: float = 1.05,
    sizes: tuple[int, ...] = (1 << 20,),
) -> list[dict]:
    header = {
        "schema": SCHEMA,
        "kind": "sweep",
        "sweep_id": sweep_id,
        "backend": backend,
        "device": device,
        "nodes": 1,
        "settings": {"iters": iters, "warmup": 5, "check": True, "load": False, "gap_ms": 0.0},
    }
    rows = [
        {
            "schema": SCHEMA,
            "kind": "result",
            "sweep_id": sweep_id,
            "op": "all_reduce",
            "placement": "in-place",
            "status": "ok",
            "size_bytes": size,
            "ranks": 2,
            "busbw_gbs": busbw * size / sizes[-1],
            "time_us": 100.0,
            "time_us_p50": 100.0,
            "time_us_p99": 100.0 * spread,
        }
        for size in sizes
    ]
    return [header, *rows]


def change(tmp_path: Path, *sweeps: list[dict]) -> str:
    path = tmp_path / "c.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for s in sweeps for r in s))
    (verdict,) = judge(read_sweeps(path))
    return verdict.change


def test_two_call_sweeps_are_not_compared(tmp_path: Path) -> None:
    said = change(tmp_path, sweep("a", 1.0, iters=2), sweep("b", 0.22, iters=2))
    assert "DROPPED" not in said
    assert said.startswith("Not compared with earlier sweeps: this sweep's 2 timed calls")
    # an earlier two-call sweep is no baseline for a good one either
    said = change(tmp_path, sweep("a", 1.0, iters=2), sweep("b", 0.22))
    assert "DROPPED" not in said and "sweep a's 2 timed calls" in said


def test_a_difference_within_the_spread_of_the_calls_is_noise(tmp_path: Path) -> None:
    said = change(tmp_path, sweep("a", 1.0, spread=3.0), sweep("b", 0.5, spread=3.0))
    assert said.startswith("50% lower than sweep a (1 -> 0.5 GB/s), within the calls' own")
    assert "noise, not a drop" in said


def test_a_drop_beyond_the_noise_on_gloo_never_blames_nccl(tmp_path: Path) -> None:
    said = change(tmp_path, sweep("a", 1.0), sweep("b", 0.22))
    assert said.startswith("DROPPED 78% since sweep a")
    assert "NCCL" not in said and "other work on the host" in said
    gpu = change(
        tmp_path,
        sweep("a", 300.0, backend="nccl", device="cuda"),
        sweep("b", 100.0, backend="nccl", device="cuda"),
    )
    assert gpu.startswith("DROPPED 67% since sweep a") and "NCCL settings" in gpu


def test_only_sweeps_that_ran_alike_over_the_same_sizes_are_compared(tmp_path: Path) -> None:
    other_backend = sweep("a", 300.0, backend="nccl", device="cuda")
    assert change(tmp_path, other_backend, sweep("b", 0.2)) == ""
    # the earlier sweep reached 64 MiB, this one 1 MiB: compared at 1 MiB only
    big = sweep("a", 1.0, sizes=(1 << 20, 64 << 20))
    said = change(tmp_path, big, sweep("b", 1.0 / 64, sizes=(1 << 20,)))
    assert "DROPPED" not in said and said.startswith("within 15% of the best earlier sweep")

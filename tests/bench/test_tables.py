"""Results file, bench table, speedup and break-even, busbw, topology parsing."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from gpuscale.analysis.bench_scaling import bench_scaling, break_even_params
from gpuscale.bench.collectives import bus_bandwidth, judge_busbw, message_sizes
from gpuscale.bench.results import (
    BENCH_COLUMNS,
    ResultsError,
    append_result,
    bench_table,
    done_keys,
    read_results,
)
from gpuscale.bench.topology import parse_topo_matrix

PHB_PAIR = """\tGPU0\tGPU1\tCPU Affinity\tNUMA Affinity\tGPU NUMA ID
GPU0\t X \tPHB\t0-15\t0\t\tN/A
GPU1\tPHB\t X \t0-15\t0\t\tN/A

Legend:

  X    = Self
  PHB  = Connection traversing PCIe as well as a PCIe Host Bridge (typically the CPU)
"""

NVLINK_8 = (
    "\t"
    + "\t".join(f"GPU{i}" for i in range(8))
    + "\tNIC0\tCPU Affinity\n"
    + "".join(
        f"GPU{i}\t" + "\t".join(" X " if i == j else "NV18" for j in range(8)) + "\tPXB\t0-55\n"
        for i in range(8)
    )
    + "NIC0\t"
    + "\t".join(["PXB"] * 8)
    + "\t X \n"
)

DUAL_SOCKET = """\x1b[4m\tGPU0\tGPU1\tGPU2\tGPU3\tCPU Affinity\x1b[0m
GPU0\t X \tPIX\tSYS\tSYS\t0-23
GPU1\tPIX\t X \tSYS\tSYS\t0-23
GPU2\tSYS\tSYS\t X \tPIX\t24-47
GPU3\tSYS\tSYS\tPIX\t X \t24-47
"""


@pytest.mark.parametrize(
    "text, gpus, slowest, preset",
    [
        (PHB_PAIR, 2, "PHB", "pcie-phb"),
        (NVLINK_8, 8, "NV", "nvlink4"),
        (DUAL_SOCKET, 4, "SYS", "pcie-sys"),
    ],
)
def test_topology_samples(text: str, gpus: int, slowest: str, preset: str) -> None:
    topo = parse_topo_matrix(text)
    assert len(topo.gpus) == gpus and topo.slowest_link() == slowest and topo.preset() == preset
    matrix = topo.matrix()
    assert all(matrix[i][i] == "X" for i in range(gpus))


def test_topology_rejects_other_text() -> None:
    with pytest.raises(ValueError):
        parse_topo_matrix("No devices were found")


@pytest.mark.parametrize(
    "op, n, factor",
    [
        ("all_reduce", 2, 1.0),
        ("all_reduce", 8, 1.75),
        ("all_gather", 4, 0.75),
        ("reduce_scatter", 8, 0.875),
    ],
)
def test_busbw_formula(op: str, n: int, factor: float) -> None:
    algbw, busbw = bus_bandwidth(op, 2e9, 0.5, n)  # 2 GB in 0.5 s
    assert algbw == pytest.approx(4.0) and busbw == pytest.approx(4.0 * factor)


def test_message_sizes_and_verdict() -> None:
    sizes = message_sizes(1 << 30)
    assert sizes[0] == 8 and sizes[-1] == 1 << 30 and len(sizes) == 28
    ratio, sentence = judge_busbw(4.0, "pcie-phb")
    assert ratio == pytest.approx(0.4) and "FAR BELOW" in sentence
    assert judge_busbw(350.0, "nvlink4")[1].endswith("as expected")
    assert judge_busbw(1.0, None)[0] is None


def record(model: str, params: int, world: int, sps: float, status: str = "ok") -> dict:
    return {
        "key": f"{model}|{world}",
        "status": status,
        "config": {
            "model": model,
            "family": "mlp",
            "params": params,
            "world_size": world,
            "backend": "gloo",
            "device": "cpu",
            "scaling": "weak",
            "precision": "fp32",
            "bucket_mb": 25.0,
            "steps": 20,
        },
        "timing": {"samples_per_s": sps, "step_ms_mean": 1.0},
    }


def test_results_roundtrip_and_bad_lines(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    append_result(path, record("a", 10, 1, 100.0))
    with path.open("a") as handle:
        handle.write("{broken\n" + json.dumps({"schema": "other"}) + "\n")
    append_result(path, record("a", 10, 2, 150.0, status="timeout"))
    records, problems = read_results(path)
    assert [r["status"] for r in records] == ["ok", "timeout"] and len(problems) == 2
    assert done_keys(path) == {"a|1", "a|2"}
    assert done_keys(path, include_failed=False) == {"a|1"}
    assert tuple(bench_table(records).columns) == BENCH_COLUMNS
    with pytest.raises(ResultsError):
        read_results(tmp_path / "missing.jsonl")


def test_speedup_and_break_even() -> None:
    rows = [
        record("s", 100_000, 1, 100.0),
        record("s", 100_000, 2, 50.0),
        record("m", 1_000_000, 1, 100.0),
        record("m", 1_000_000, 2, 100.0),
        record("l", 10_000_000, 1, 100.0),
        record("l", 10_000_000, 2, 180.0),
    ]
    scaling = bench_scaling(bench_table(rows))
    m2 = scaling[(scaling.model == "m") & (scaling.world_size == 2)].iloc[0]
    assert (m2["speedup"], m2["efficiency"]) == (1.0, 0.5)
    # crosses 1 between s (0.5) and m (1.0) exactly at m
    assert break_even_params(scaling, 2) == pytest.approx(1_000_000)
    # 1.4 is crossed between m (1.0) and l (1.8): half way in log10 -> 10^6.5
    assert break_even_params(scaling, 2, speedup=1.4) == pytest.approx(10**6.5)
    assert break_even_params(scaling, 4) is None
    assert bench_scaling(bench_table([])).empty
    assert pd.isna(bench_scaling(bench_table([record("x", 5, 2, 1.0)]))["speedup"]).all()

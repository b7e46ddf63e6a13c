"""What the advice tells you to measure can be run where it says: rows from a host of one
GPU (``h100_resnet50_bf16.jsonl``: one H100 80GB HBM3, its topology listing one GPU) have
no second device, so a ``--nproc 1,2`` the advice proposes names a host of two or more
(a user walk on the H100 found `gpuscale bench --nproc 1,2` proposed for a one-GPU host)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

import gpuscale
from gpuscale.analysis.bench_scaling import bench_scaling
from gpuscale.bench.results import load_bench
from gpuscale.report.bench_section import measured_answer

ONE_GPU_HOST = Path(__file__).with_name("h100_resnet50_bf16.jsonl")
CPU_PROCESSES = Path(__file__).with_name("cpu_tiny_model_gloo.jsonl")
ELSEWHERE = "on a host of 2 or more devices, where the bench's had 1"


def _proposing_two(advice: gpuscale.Advice) -> list[str]:
    return [line for line in advice.explanation if "--nproc 1,2" in line]


def test_the_bench_table_says_how_many_gpus_its_host_had() -> None:
    gpu = load_bench(ONE_GPU_HOST).table
    cpu = load_bench(CPU_PROCESSES).table
    assert gpu["host_devices"].tolist() == [1, 1]  # the records' topology: one GPU
    assert pd.to_numeric(cpu["host_devices"], errors="coerce").isna().all()  # processes


def test_a_one_gpu_host_is_told_to_measure_two_devices_elsewhere() -> None:
    table = load_bench(ONE_GPU_HOST).table
    lines = _proposing_two(gpuscale.advise(bench=table))
    assert len(lines) >= 2, lines  # overlap and the wait for the slowest device at least
    assert all(ELSEWHERE in line for line in lines), lines


def test_a_host_with_devices_to_spare_is_told_to_run_it_there() -> None:
    table = load_bench(ONE_GPU_HOST).table.assign(host_devices=8)
    lines = _proposing_two(gpuscale.advise(bench=table))
    assert lines and not any("on a host of" in line for line in lines), lines
    older = load_bench(ONE_GPU_HOST).table.drop(columns=["host_devices"])  # an earlier table
    assert not any("on a host of" in line for line in _proposing_two(gpuscale.advise(bench=older)))


def test_cpu_processes_run_on_any_host() -> None:
    lines = _proposing_two(gpuscale.advise(bench=load_bench(CPU_PROCESSES).table))
    assert not any("on a host of" in line for line in lines), lines


def test_the_report_says_where_the_missing_run_can_be_measured() -> None:
    scaling = bench_scaling(load_bench(ONE_GPU_HOST).table)
    assert ELSEWHERE in measured_answer(scaling)
    assert "on a host of" not in measured_answer(scaling.assign(host_devices=2))

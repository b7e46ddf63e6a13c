"""The sentences under a bench table say what the rows hold: the CPU baseline only where
an N = 1 run and an N > 1 run read against it are there (with their counts), and a file's
earlier rows counted by what they are."""

from __future__ import annotations

import pandas as pd

from gpuscale.analysis.bench_scaling import bench_scaling
from gpuscale.analysis.bench_sentences import baseline_sentence, earlier_rows
from gpuscale.bench.config import BenchConfig
from gpuscale.bench.results import bench_table

from ..builders import bench_record


def _runs(*counts: tuple[int, int]) -> pd.DataFrame:
    """mlp-1m at each (devices, nodes), one sweep."""
    records = []
    for n, nodes in counts:
        record = bench_record("mlp-1m", 10**6, n, 100.0 * n, sweep_id="s")
        record["config"]["nnodes"] = nodes
        records.append(record)
    return bench_scaling(bench_table(records))


def test_no_cpu_baseline_sentence_without_a_comparison() -> None:
    assert baseline_sentence(_runs((1, 1))) is None  # --nproc 1 only
    assert baseline_sentence(_runs((2, 2))) is None  # two nodes, no N = 1 run


def test_the_cpu_baseline_names_the_largest_run_compared() -> None:
    said = baseline_sentence(_runs((1, 1), (2, 1)))
    assert said is not None and "whether 2 processes beat this machine" in said
    said = baseline_sentence(_runs((1, 1), (4, 2)))
    assert said is not None and "whether 4 processes on 2 machines beat one machine" in said


def test_earlier_rows_count_flagged_runs_among_the_ok_ones() -> None:
    busy = ["machine busy: other processes used 60% of its CPU time during the timed steps"]
    cfg = BenchConfig(steps=20)
    rows = [
        {**bench_record("mlp-1m", 10**6, n, 100.0, config=cfg, sweep_id="old"), "flags": busy}
        for n in (1, 2)
    ]
    scaling = bench_scaling(bench_table(rows))
    said = earlier_rows(scaling, scaling.iloc[0:0], "r.jsonl")
    assert said is not None and "(2 ok, 2 of them flagged; 0 failed)" in said

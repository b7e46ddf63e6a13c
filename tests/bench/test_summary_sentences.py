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


def test_the_cpu_baseline_command_runs_the_compared_configuration_on_every_core() -> None:
    """The one-process run it suggests is the compared runs' configuration (a walk: runs at
    --batch 32 were offered `bench --nproc 1 --model M`, at the default batch 8, another
    configuration), less their threads: one process takes every core by default."""
    import shlex

    records = [bench_record("mlp-1m", 10**6, n, 100.0 * n, batch=32) for n in (1, 2)]
    said = baseline_sentence(bench_scaling(bench_table(records)))
    assert said is not None
    words = shlex.split(said.split("`")[1])
    assert words[:2] == ["gpuscale", "bench"] and "--threads" not in words
    options = dict(zip(words[2::2], words[3::2], strict=True))
    assert options == {"--models": "mlp-1m", "--batch": "32", "--backend": "gloo", "--nproc": "1"}

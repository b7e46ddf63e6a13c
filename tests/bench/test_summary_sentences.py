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


def _models_measured(said: str | None) -> list[str]:
    """The models of the one-process command(s) the CPU baseline suggests."""
    import shlex

    assert said is not None
    named = []
    for command in said.split("`")[1::2]:
        words = shlex.split(command)
        named += words[words.index("--models") + 1].split(",")
    return named


def test_the_cpu_baseline_names_every_model_compared_and_never_a_broken_one() -> None:
    """Of two models run on 1, 2 and 4 processes, the note named only the larger's
    one-process run, and named it where its loss was not finite at 4 (a broken model, no
    run of which the advice uses)."""
    from gpuscale.plausibility import loss_flags

    def table(broken_at: int | None) -> pd.DataFrame:
        records = []
        for model, params in (("mlp-1m", 10**6), ("mlp-4m", 4 * 10**6)):
            for n in (1, 2, 4):
                lost = loss_flags(float("nan")) if model == "mlp-4m" and n == broken_at else []
                records.append(bench_record(model, params, n, 100.0 * n, flags=lost))
        return bench_scaling(bench_table(records))

    assert sorted(_models_measured(baseline_sentence(table(None)))) == ["mlp-1m", "mlp-4m"]
    assert _models_measured(baseline_sentence(table(4))) == ["mlp-1m"]
    assert _models_measured(baseline_sentence(table(1))) == ["mlp-1m"]  # no N = 1 run sound
    broken_only = bench_scaling(
        bench_table(
            [
                bench_record("mlp-4m", 4 * 10**6, n, 100.0, flags=loss_flags(float("nan")))
                for n in (1, 2)
            ]
        )
    )
    assert baseline_sentence(broken_only) is None  # no sound model compared: nothing to say

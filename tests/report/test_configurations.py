"""One model in two configurations (precisions, batches, strategies) or run twice is two
rows and two labels in every bench table and figure (issue 41 item 5)."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpuscale.analysis.bench_scaling import bench_scaling
from gpuscale.bench.config import BenchConfig
from gpuscale.bench.results import bench_table
from gpuscale.report.bench_section import build_bench_section
from gpuscale.report.svg import FigureFiles

from ..builders import bench_record


def _record(model: str, world: int, sps: float, sweep: str, **config) -> dict:
    record = bench_record(model, 30_000_000, world, sps, config=BenchConfig(steps=20, **config))
    record["sweep_id"] = sweep
    return record


def test_two_precisions_and_two_runs_are_told_apart(tmp_path: Path) -> None:
    records = [
        _record("tf-30m", 1, 100.0, "s1", precision="fp32", batch=8),
        _record("tf-30m", 2, 150.0, "s1", precision="fp32", batch=8),
        _record("tf-30m", 1, 300.0, "s2", precision="bf16", batch=8),
        _record("tf-30m", 2, 450.0, "s2", precision="bf16", batch=8),
        _record("mlp-4m", 1, 900.0, "s1", batch=8),
        _record("mlp-4m", 1, 950.0, "s3", batch=8),  # the same configuration again
    ]
    scaling = bench_scaling(bench_table(records))
    labels = set(scaling["configuration"])
    assert {"tf-30m (fp32)", "tf-30m (bf16)"} <= labels
    assert {"mlp-4m (run 1)", "mlp-4m (run 2)"} <= labels
    assert not scaling.duplicated(["configuration", "accelerators"]).any()
    section = build_bench_section(
        bench_table(records), FigureFiles(tmp_path)
    )  # crashed on duplicates
    assert section is not None
    shown = [row["Model"] for row in section.rows]
    assert shown.count("tf-30m (fp32)") == 2 and shown.count("tf-30m (bf16)") == 2
    assert (tmp_path / "bench_step_breakdown.svg").exists()
    assert "1 model" not in " ".join(section.findings)


def test_a_resumed_sweep_completes_its_run() -> None:
    """A user walk: a sweep interrupted after cnn-0.3m's N = 1 run, then `--resume`, which
    measured only its N = 2 run: labelled "run 1" and "run 2", the report said "cnn-0.3m
    (run 2) 0.84x on 2" of a run that had no N = 1 row. Counts a later sweep lacks
    complete the earlier run; a count measured again is the next run."""
    records = [
        _record("cnn-0.3m", 1, 100.0, "s1", batch=8),
        _record("cnn-0.3m", 2, 160.0, "s2", batch=8),  # --resume: only what s1 lacked
    ]
    scaling = bench_scaling(bench_table(records))
    assert scaling["configuration"].tolist() == ["cnn-0.3m", "cnn-0.3m"]
    assert scaling.loc[scaling["accelerators"] == 2, "speedup"].iloc[0] == pytest.approx(1.6)
    again = [*records, _record("cnn-0.3m", 1, 110.0, "s3", batch=8),
             _record("cnn-0.3m", 2, 170.0, "s3", batch=8)]  # fmt: skip
    labels = bench_scaling(bench_table(again))[["configuration", "accelerators"]]
    assert sorted(map(tuple, labels.to_numpy().tolist())) == [
        ("cnn-0.3m (run 1)", 1), ("cnn-0.3m (run 1)", 2),
        ("cnn-0.3m (run 2)", 1), ("cnn-0.3m (run 2)", 2),
    ]  # fmt: skip


def test_two_models_of_one_spec_say_their_size() -> None:
    """A second walk: tiny.py:make of two folders (172 and 676 parameters) into one file
    read "tiny.py:make (run 1)" and "(run 2)", as if one model had run twice."""
    records = []
    for params, sweep in ((172, "s1"), (676, "s2")):
        for n in (1, 2):
            record = bench_record("tiny.py:make", params, n, 100.0 * n, config=BenchConfig())
            record["sweep_id"] = sweep
            records.append(record)
    labels = bench_scaling(bench_table(records))["configuration"]
    assert sorted(set(labels)) == ["tiny.py:make (172 params)", "tiny.py:make (676 params)"]


def test_two_batches_of_one_model_say_their_batch() -> None:
    records = [
        _record("tf-7m", 1, 100.0, "s1", batch=8),
        _record("tf-7m", 1, 400.0, "s1", batch=64),
    ]
    labels = set(bench_scaling(bench_table(records))["configuration"])
    assert labels == {"tf-7m (batch 8)", "tf-7m (batch 64)"}


@pytest.mark.shared
def test_the_h100_ladder_report_renders(h100, tmp_path: Path) -> None:
    """tf-30m in fp32 and bf16 (``ladder.jsonl``): 'cannot reindex on an axis with
    duplicate labels' before."""
    from gpuscale.bench.results import read_results

    records, _ = read_results(h100("ladder.jsonl"))
    section = build_bench_section(bench_table(records), FigureFiles(tmp_path))
    assert section is not None
    shown = {row["Model"] for row in section.rows}
    assert {"tf-30m (fp32)", "tf-30m (bf16)"} <= shown


def test_a_count_of_one_reads_in_the_singular() -> None:
    """A walk read "mlp-0.2m (1 threads)" beside "(2 threads)"."""
    records = [
        bench_record("mlp-4m", 4_000_000, 1, 900.0, threads=1),
        bench_record("mlp-4m", 4_000_000, 1, 950.0, threads=2),
    ]
    labels = set(bench_scaling(bench_table(records))["configuration"])
    assert labels == {"mlp-4m (1 thread)", "mlp-4m (2 threads)"}


def test_an_fsdp_run_is_not_labelled_with_ddps_settings() -> None:
    """A user walk: a file of DDP runs at two gradient dtypes and an FSDP run labelled the
    latter ``mlp-0.2m (strong scaling, accum 1, fp32, fsdp, buckets 25.0 MiB, fp32
    gradients)``: bucket size and gradient dtype are DDP's, which FSDP does not use."""
    ddp = [_record("mlp-0.2m", n, 100.0 * n, "s1") for n in (1, 2)]
    ddp += [_record("mlp-0.2m", n, 110.0 * n, "s2", grad_comm="bf16", bucket_mb=50.0)
            for n in (1, 2)]  # fmt: skip
    fsdp = [_record("mlp-0.2m", n, 90.0 * n, "s3", strategy="fsdp") for n in (1, 2)]
    fsdp += [_record("mlp-0.2m", n, 80.0 * n, "s4", strategy="fsdp", accum=2) for n in (1, 2)]
    labels = bench_scaling(bench_table(ddp + fsdp))["configuration"].tolist()
    assert labels == [
        *["mlp-0.2m (accum 1, ddp, buckets 25.0 MiB, fp32 gradients)"] * 2,
        *["mlp-0.2m (accum 1, ddp, buckets 50.0 MiB, bf16 gradients)"] * 2,
        *["mlp-0.2m (accum 1, fsdp)"] * 2,
        *["mlp-0.2m (accum 2, fsdp)"] * 2,
    ]
    # FSDP runs whose DDP-only settings differ (bucket_mb, unused; a file written before
    # bench refused it with FSDP) differ in nothing else
    alike = [_record("mlp-0.2m", n, 90.0 * n, "s5", strategy="fsdp") for n in (1, 2)]
    for record in alike:
        record["config"]["bucket_mb"] = 50.0
    assert set(bench_scaling(bench_table(fsdp[:2] + alike))["configuration"]) == {
        "mlp-0.2m (run 1)",
        "mlp-0.2m (run 2)",
    }

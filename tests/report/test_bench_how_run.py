"""The bench table and figure say how each row was run where rows differ: the H100 file
holds an FSDP run (tf-30m), a run of 4 micro-batches per step (tf-7m) and rows of several
precisions beside DDP ones; the table had no such column, the figure of them all was
titled "Where DDP's step time goes", and the section counted "5 models" of 6 benched."""

from __future__ import annotations

from pathlib import Path

from gpuscale.analysis.bench_scaling import bench_scaling
from gpuscale.bench.results import bench_table, read_results
from gpuscale.report.bench_section import build_bench_section
from gpuscale.report.svg import FigureFiles

from ..builders import bench_record

HERE = Path(__file__).parent


def _bench():
    return bench_table(read_results(HERE / "h100_paths.jsonl")[0])


def test_the_table_shows_strategy_precision_and_accumulation_where_rows_differ(
    tmp_path: Path,
) -> None:
    bench = _bench()
    scaling = bench_scaling(bench)
    assert scaling["strategy"].nunique() > 1 and scaling["accum"].nunique() > 1
    section = build_bench_section(bench, FigureFiles(tmp_path))
    assert section is not None
    for label in ("Strategy", "Precision", "Accum. steps"):
        assert label in section.columns
    for row, r in zip(section.rows, scaling.itertuples(), strict=True):
        assert row["Model"] == r.configuration
        assert row["Strategy"] == str(r.strategy) and row["Precision"] == str(r.precision)
        assert row["Accum. steps"] == str(int(r.accum))


def test_rows_run_alike_get_no_such_columns(tmp_path: Path) -> None:
    rows = [bench_record("a", 10**6, n, 100.0 * n) for n in (1, 2)]
    section = build_bench_section(bench_table(rows), FigureFiles(tmp_path))
    assert section is not None
    assert not {"Strategy", "Precision", "Accum. steps", "Ran on"} & set(section.columns)


def test_the_breakdown_is_titled_for_the_strategies_it_holds(tmp_path: Path) -> None:
    bench = _bench()
    strategies = {str(s).upper() for s in bench_scaling(bench)["strategy"]}
    section = build_bench_section(bench, FigureFiles(tmp_path))
    title, svg, _ = section.figures[0]
    assert "DDP's step" not in title and title.startswith("Where each step's time goes")
    assert all(s in title for s in strategies)
    assert "DDP's step" not in svg and "Where each step" in svg  # the figure's own title


def test_the_summary_counts_every_model_over_the_platforms() -> None:
    from gpuscale.report.bench_words import bench_findings

    scaling = bench_scaling(_bench())
    first = bench_findings(scaling)[0]
    assert first.startswith(f"{scaling['model'].nunique()} models benched: ")
    for platform, rows in scaling.groupby("platform"):
        assert f"{rows['model'].nunique()} on {platform}" in first

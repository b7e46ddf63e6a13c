"""Each strategy's own numbers in its own column, and the words about them generated from
that column (an H100 walk: the report said "DDP's step reaches 0.85-1.01x the bare
module's" where 1.01x was tf-30m's FSDP run, its 'DDP vs bare module' cell filled, and
`analyze --bench` showed FSDP's 10.05 ms synchronised-minus-no-sync gap as
``ddp_overhead_ms``)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pandas as pd
import pytest

from gpuscale.analysis.bench_scaling import bench_scaling
from gpuscale.analysis.bench_view import bench_view
from gpuscale.bench.results import bench_table, read_results
from gpuscale.report.bench_figures import step_breakdown
from gpuscale.report.bench_section import build_bench_section
from gpuscale.report.svg import FigureFiles

from ..builders import bench_record

ROWS = Path(__file__).parent / "h100_paths.jsonl"


def _records() -> list[dict]:
    return [json.loads(line) for line in ROWS.read_text().splitlines()]


def test_fsdps_gap_is_in_its_own_column() -> None:
    table = bench_table(read_results(ROWS)[0])
    fsdp = [r for r in _records() if r["config"]["strategy"] == "fsdp"]
    assert fsdp  # the premise: the H100 file holds an FSDP run
    for record in fsdp:
        row = table[table["key"] == record["key"]].iloc[0]
        # FSDP's own work: at least its synchronised minus no-sync gap (an FSDP run's
        # plain step timed the sharded module: fully_shard shards in place), at least 0
        timing = record["timing"]
        plain = timing["step_ms_mean"] - timing["plain_step_ms_mean"]
        own = max(plain, timing["step_ms_mean"] - timing["nosync_step_ms_mean"], 0.0)
        assert row["fsdp_overhead_ms"] == pytest.approx(own)
        assert pd.isna(row["ddp_overhead_ms"])
    ddp = table[table["strategy"] == "ddp"]
    assert ddp["fsdp_overhead_ms"].isna().all() and ddp["ddp_overhead_ms"].notna().all()


def test_the_one_device_ratio_is_in_the_column_of_the_strategy_run() -> None:
    scaling = bench_scaling(bench_table(read_results(ROWS)[0]))
    one = scaling[scaling["accelerators"] == 1]
    ratio = one["samples_per_s"] / (
        one["batch_per_device"] * one["accum"] / (one["plain_step_ms_mean"] / 1e3)
    )
    fsdp = one["strategy"] == "fsdp"
    assert one.loc[fsdp, "fsdp_vs_bare"].to_numpy() == pytest.approx(ratio[fsdp].to_numpy())
    assert one.loc[~fsdp, "ddp_vs_bare"].to_numpy() == pytest.approx(ratio[~fsdp].to_numpy())
    assert one.loc[fsdp, "ddp_vs_bare"].isna().all()
    assert one.loc[~fsdp, "fsdp_vs_bare"].isna().all()


def _range(text: str) -> tuple[float, float]:
    low, _, high = text.removesuffix("x").partition("-")
    return float(low), float(high or low)


def test_the_reports_sentences_read_their_own_column(tmp_path: Path) -> None:
    bench = bench_table(read_results(ROWS)[0])
    section = build_bench_section(bench, FigureFiles(tmp_path))
    assert section is not None
    said = " ".join(section.findings)
    for strategy in ("DDP", "FSDP"):
        label = f"{strategy} vs bare module (1 device)"
        assert label in section.columns
        for platform in {r["Ran on"] for r in section.rows}:
            cells = [float(r[label]) for r in section.rows if r["Ran on"] == platform and r[label]]
            found = re.search(
                rf"On one device \({re.escape(platform)}\) {strategy}'s step reaches "
                rf"(\S+) the bare module's throughput \((?:the|the \d+) N = 1 runs?, "
                rf"column '{strategy} vs bare module'",
                said,
            )
            if not cells:
                assert found is None, (strategy, platform)
                continue
            assert found is not None, (strategy, platform)
            # the sentence's 3 figures of the column's (the table's 4, as the terminal's)
            assert _range(found.group(1)) == tuple(
                float(f"{c:.3g}") for c in (min(cells), max(cells))
            )
    for row in section.rows:  # a cell in the column of the strategy the row ran only
        other = "DDP" if row["Strategy"] == "fsdp" else "FSDP"
        assert row[f"{other} vs bare module (1 device)"] == ""


def test_analyze_and_the_figure_name_fsdp_where_it_ran() -> None:
    scaling = bench_scaling(bench_table(read_results(ROWS)[0]))
    view = bench_view(bench_table(read_results(ROWS)[0]))
    assert {"fsdp_overhead_ms", "fsdp_vs_bare", "ddp_overhead_ms", "ddp_vs_bare"} <= set(view.shown)
    assert "fsdp vs bare (N = 1 only)" in view.said[0]
    legend = [t.get_text() for t in step_breakdown(scaling).figure.axes[0].get_legend().texts]
    assert "FSDP's own overhead" in legend and "DDP's own overhead" in legend
    # a file of DDP runs alone: no empty FSDP column, no FSDP legend entry
    ddp_only = bench_table([bench_record("m", 10**6, n, 100.0 * n) for n in (1, 2)])
    view = bench_view(ddp_only)
    assert not {"fsdp_overhead_ms", "fsdp_vs_bare"} & set(view.shown)
    assert not any("fsdp vs bare" in line for line in view.said)
    chart = step_breakdown(bench_scaling(ddp_only))
    assert "FSDP's own overhead" not in [
        t.get_text() for t in chart.figure.axes[0].get_legend().texts
    ]


def test_an_fsdp_groups_speedup_over_its_wrapped_step_is_fsdps() -> None:
    """An FSDP run at N = 1 and 2 with no bare-module step timed: its speedups are read
    against FSDP's one-rank step, said so (was ``speedup_ddp`` and baseline "DDP N = 1")."""
    from gpuscale.bench.config import BenchConfig

    cfg = BenchConfig(steps=20, batch=8, strategy="fsdp")
    rates = {1: 100.0, 2: 180.0}
    records = [bench_record("f", 10**6, n, rate, config=cfg) for n, rate in rates.items()]
    scaling = bench_scaling(bench_table(records)).set_index("accelerators")
    assert (scaling["strategy"] == "fsdp").all()  # the premise
    assert scaling.loc[2, "speedup_fsdp"] == pytest.approx(rates[2] / rates[1])
    assert scaling["speedup_ddp"].isna().all()
    assert scaling.loc[2, "baseline"] == "FSDP N = 1"
    view = bench_view(bench_table(records))
    assert "speedup_fsdp" in view.shown and "speedup_ddp" not in view.shown
    assert "speedup fsdp: against FSDP's N = 1 step" in view.said[0]


SPEEDUP_COLUMNS = ("speedup_ddp", "ddp_vs_bare", "speedup_fsdp", "fsdp_overhead_ms", "fsdp_vs_bare")


def test_the_legend_explains_the_columns_shown(tmp_path: Path, golden) -> None:
    """Below a bench table, what the speedups are against names each strategy column
    the table shows, as its heading says it, and no column it does not show (an FSDP
    walk: the legend explained speedup_ddp and ddp_vs_bare beside 'speedup fsdp' and
    'fsdp vs bare')."""
    from gpuscale.bench.config import BenchConfig

    cfg = BenchConfig(steps=20, batch=8, strategy="fsdp")
    files = {
        "fsdp": [bench_record("f", 10**6, n, 100.0 * n, config=cfg) for n in (1, 2)],
        "ddp": [bench_record("m", 10**6, n, 100.0 * n) for n in (1, 2)],
        "both": _records(),
    }
    for name, records in files.items():
        view = bench_view(bench_table(records))
        legend = view.said[0]
        for column in SPEEDUP_COLUMNS:
            heading = column.replace("_", " ")  # as the terminal heads it
            assert (heading in legend) == (column in view.shown), (name, column, legend)
            assert column not in legend, (name, column)  # the field's name is no heading
        golden.check("bench/legend", f"analyze --bench: {name} runs", legend)
    section = build_bench_section(bench_table(files["fsdp"]), FigureFiles(tmp_path))
    assert section is not None
    assert "FSDP vs bare module (1 device)" in section.columns
    assert "FSDP vs bare module (1 device)" in section.speedup_basis
    assert "DDP" not in section.columns and "DDP vs bare" not in section.speedup_basis

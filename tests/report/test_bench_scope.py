"""The "your hardware" section says what each sentence, row and bar covers: the models
measured at a count (not "every model"), the device and backend of each row where they
differ, no "speedup" at one device, bars in numeric order under a true title.

Real rows from one H100 (h100_paths.jsonl: GPU rows and mlp-4m as CPU gloo processes at
N = 1 and 2; h100_sweep.jsonl: three models at batch 1, 8, 64, 256, all N = 1)."""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd
import pytest

from gpuscale.analysis.bench_scaling import bench_scaling
from gpuscale.analysis.bench_view import bench_view
from gpuscale.bench.results import bench_table, read_results
from gpuscale.report.bench_figures import speedup_by_size, step_breakdown
from gpuscale.report.bench_section import bench_findings, build_bench_section, measured_answer
from gpuscale.report.svg import FigureFiles

from ..builders import bench_record
from ..golden import Golden

HERE = Path(__file__).parent
VIEW = "report/bench_scope"
H100 = "NVIDIA H100 80GB HBM3"  # the device of the real rows
SPANS_ROW = re.compile(r"figure:has\(> svg\[data-wide\]\)\s*\{\s*grid-column: 1 / -1")


def _scaling(name: str) -> pd.DataFrame:
    return bench_scaling(bench_table(read_results(HERE / name)[0]))


def _as_gpu(record: dict) -> dict:
    """A builder record as if an H100 ran it over NCCL."""
    return {
        **record,
        "config": {**record["config"], "device": "cuda", "backend": "nccl"},
        "environment": {**record["environment"], "device_name": H100},
    }


def test_a_sentence_on_a_count_names_the_models_measured_there(golden: Golden) -> None:
    """paths: only mlp-4m ran at N = 2; the section said "On 2 devices every model trains
    slower than on one device" of a file of 6 models."""
    scaling = _scaling("h100_paths.jsonl")
    at_two = scaling[(scaling["accelerators"] == 2) & scaling["speedup"].notna()]
    assert list(at_two["configuration"]) == ["mlp-4m"]  # the table the sentences describe
    findings = bench_findings(scaling)
    text = " ".join(findings)
    assert "every model" not in text
    (on_two,) = [f for f in findings if f.startswith("mlp-4m, ")]
    assert "mlp-4m" in on_two and "the only model" in on_two and "slower" in on_two
    golden.check(VIEW, "h100 paths: the findings", "\n".join(findings))


@pytest.mark.parametrize("rates", [(50.0, 60.0, 70.0), (150.0, 160.0, 170.0)])
def test_all_slower_or_faster_names_each_model_measured_there(rates: tuple, golden: Golden) -> None:
    """Three models at N = 2 of four measured at N = 1: the sentence counts and names the
    three, not "every model"."""
    rows = [bench_record(m, p, 1, 100.0) for m, p in (("a", 10**5), ("b", 10**6))]
    rows += [bench_record(m, p, 1, 100.0) for m, p in (("c", 10**7), ("d", 10**8))]
    rows += [
        bench_record(m, p, 2, r)
        for (m, p), r in zip((("a", 10**5), ("b", 10**6), ("c", 10**7)), rates, strict=True)
    ]
    scaling = bench_scaling(bench_table(rows))
    measured = scaling[(scaling["accelerators"] == 2)]["configuration"].tolist()
    pace = "slower" if (scaling["speedup"].dropna() < 1).all() else "faster"
    text = " ".join(bench_findings(scaling))
    assert "every model" not in text
    assert f"each of the {len(measured)} " in text and f"trains {pace}" in text
    assert "(a, b and c" in text  # the three named
    # the summary says which models ran at 2, not "4 models on 1, 2 devices"
    assert "(a, b and c only)" in text and "(all 4)" in text
    golden.check(VIEW, f"three of four models at 2, all {pace}", "\n".join(bench_findings(scaling)))


def test_rows_of_another_device_or_backend_say_which_they_ran_on(
    tmp_path: Path, golden: Golden
) -> None:
    """paths: mlp-4m's rows are CPU gloo processes beside H100 NCCL rows; the table had no
    device column and the top of the report said "mlp-4m 0.34x on 2" under a header
    naming the H100."""
    scaling = _scaling("h100_paths.jsonl")
    section = build_bench_section(
        bench_table(read_results(HERE / "h100_paths.jsonl")[0]), FigureFiles(tmp_path)
    )
    assert section is not None and "Ran on" in section.columns
    for row, (_, r) in zip(section.rows, scaling.iterrows(), strict=True):
        cpu = r["device"] == "cpu"
        assert row["Ran on"].startswith("CPU processes" if cpu else str(r["device_name"]))
        assert row["Ran on"].endswith(str(r["backend"]))
    answer = measured_answer(scaling)
    assert "0.34x on 2 (CPU" in answer  # the platform beside the measurement
    golden.check(VIEW, "h100 paths: the measured answer", answer)
    # every sentence about a count names the platform it covers
    findings = bench_findings(scaling)
    about_counts = [f for f in findings if re.search(r"on (one|\d+) device", f)]
    assert about_counts and all(
        ("CPU processes" in f and "gloo" in f) or (H100 in f and "nccl" in f) for f in about_counts
    ), about_counts
    # the bars and the speedup legend name their platform
    chart = step_breakdown(scaling)
    ticks = [t.get_text() for t in chart.figure.axes[0].get_xticklabels()]
    assert ticks[0] == "mlp-4m (CPU, gloo)" and all("(GPU, nccl)" in t for t in ticks[1:])
    legend = [
        t.get_text() for t in speedup_by_size(scaling).figure.axes[0].get_legend().get_texts()
    ]
    assert any(t.startswith("2 devices") and t.endswith("(CPU, gloo)") for t in legend)


def test_one_platform_adds_no_device_column(tmp_path: Path) -> None:
    """One device and backend: no column repeating it, the first finding names it."""
    table = bench_table(read_results(HERE / "h100_sweep.jsonl")[0])
    section = build_bench_section(table, FigureFiles(tmp_path))
    assert "Ran on" not in section.columns
    assert f"{H100}, nccl" in section.findings[0]


def test_no_speedup_at_one_device_the_ddp_ratio_named_instead(tmp_path: Path) -> None:
    """At N = 1 the table showed "Speedup 0.829 | Efficiency 0.829" (DDP's step against
    the bare module): now blank, the ratio in its own column, from the two throughputs."""
    table = bench_table(read_results(HERE / "h100_sweep.jsonl")[0])
    scaling = bench_scaling(table)
    assert scaling["speedup"].isna().all() and scaling["efficiency"].isna().all()
    bare = scaling["batch_per_device"] / (scaling["plain_step_ms_mean"] / 1e3)
    assert scaling["ddp_vs_bare"].to_numpy() == pytest.approx(
        (scaling["samples_per_s"] / bare).to_numpy()
    )
    assert (scaling["ddp_vs_bare"] < 1).all()
    section = build_bench_section(table, FigureFiles(tmp_path))
    assert all(r["Speedup"] == "" and r["Efficiency"] == "" for r in section.rows)
    assert all(r["DDP vs bare module (1 device)"] for r in section.rows)
    # analyze --bench shows the same columns, and its note says what each is against
    view = bench_view(table)
    assert "ddp_vs_bare" in view.shown
    (note,) = [s for s in view.said if "ddp vs bare" in s]  # the column as the table heads it
    assert "N = 1 only" in note
    # at N > 1 the speedup is still there and the ratio is not
    rows = [
        bench_record("m", 10**6, 1, 100.0, plain_step_ms=3.0),
        bench_record("m", 10**6, 2, 150.0),
    ]
    two = bench_scaling(bench_table(rows)).set_index("accelerators")
    assert pd.notna(two.at[2, "speedup"]) and pd.isna(two.at[2, "ddp_vs_bare"])
    assert pd.isna(two.at[1, "speedup"]) and pd.notna(two.at[1, "ddp_vs_bare"])


def test_breakdown_bars_in_numeric_batch_order_under_a_true_title(
    tmp_path: Path, golden: Golden
) -> None:
    """sweep: the bars and rows read batch 1, 256, 64, 8 (sorted as text), the title "1
    device (solid) vs 1 (hatched)" and the caption "by model size" of model x batch bars."""
    scaling = _scaling("h100_sweep.jsonl")
    chart = step_breakdown(scaling)
    ticks = [t.get_text() for t in chart.figure.axes[0].get_xticklabels()]
    for model in scaling["model"].unique():
        batches = [
            int(re.search(r"batch (\d+)", t).group(1)) for t in ticks if t.startswith(model + " ")
        ]
        assert batches == sorted(batches) and len(batches) > 1
    title = chart.figure.axes[0].get_title()
    counts = sorted(scaling["accelerators"].unique())
    assert counts == [1] and "vs" not in title and "on 1 device" in title
    section = build_bench_section(
        bench_table(read_results(HERE / "h100_sweep.jsonl")[0]), FigureFiles(tmp_path)
    )
    models = [r["Model"] for r in section.rows]
    assert models == list(scaling["configuration"])
    caption = section.figures[0][0]
    assert "and batch" in caption and "by model size" not in caption
    golden.check(VIEW, "h100 sweep: the breakdown's caption and title", f"{caption}\n{title}")
    # two counts: the smallest and the largest measured are compared
    rows = [bench_record("m", 10**6, n, 100.0 * n) for n in (2, 4)]
    title = step_breakdown(bench_scaling(bench_table(rows))).figure.axes[0].get_title()
    assert "2 devices" in title and "vs 4" in title
    golden.check(VIEW, "2 and 4 devices: the breakdown's title", title)


def test_a_wide_figure_takes_its_whole_row(tmp_path: Path) -> None:
    """The 11-bar breakdown was drawn in a third of the page, its legend unreadable: a
    figure drawn wider than the standard is marked, and the page's CSS spans it."""
    from gpuscale.report.svg import WIDE_IN

    section = build_bench_section(
        bench_table(read_results(HERE / "h100_sweep.jsonl")[0]), FigureFiles(tmp_path)
    )
    svg = section.figures[0][1]
    assert step_breakdown(_scaling("h100_sweep.jsonl")).figure.get_figwidth() > WIDE_IN
    assert 'data-wide="true"' in svg
    css = (Path(__file__).parents[2] / "src/gpuscale/report/templates/report.css").read_text()
    assert SPANS_ROW.search(css)

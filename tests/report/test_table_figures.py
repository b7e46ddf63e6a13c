"""The report's tables write each column's numbers as the terminal's tables do: to
TABLE_DIGITS significant figures, trailing zeros kept (a time "34" beside its interval
"33.97-34.02", where the terminal shows 33.98; an E of "0.59" beside 0.636), each value
unchanged."""

from __future__ import annotations

import math
import re
from pathlib import Path

import pandas as pd

from gpuscale import load_round
from gpuscale.analysis import AnalysisOptions
from gpuscale.analysis.analyze import analyze
from gpuscale.analysis.bench_scaling import bench_scaling
from gpuscale.bench.results import bench_table, read_results
from gpuscale.quantities import TABLE_DIGITS
from gpuscale.report.bench_section import build_bench_section, shown_columns
from gpuscale.report.page import TABLE_COLUMNS, section_rows
from gpuscale.report.svg import FigureFiles

HERE = Path(__file__).parent


def _figures(cell: str) -> int:
    """The figures a cell writes (``0.6360``: 4, ``33.98``: 4, ``3,070``: 4)."""
    return len(re.sub(r"[^0-9]", "", cell).lstrip("0"))


def _check(rows: list[dict[str, object]], frame: pd.DataFrame, labels: dict[str, str]) -> int:
    """Each float cell of a fraction's column (below 10**TABLE_DIGITS, not 0) written to
    TABLE_DIGITS figures (a whole number all its figures, 3,070) and reading as its value;
    the count of cells checked."""
    checked = 0
    for column, label in labels.items():
        values = frame[column]
        if not pd.api.types.is_float_dtype(values):
            continue
        for row, value in zip(rows, values, strict=True):
            if not math.isfinite(value) or value == 0 or abs(value) >= 10**TABLE_DIGITS:
                continue
            cell = str(row[label])
            figures = _figures(cell)
            whole = "." not in cell and figures > TABLE_DIGITS  # 12,345: every figure
            assert figures == TABLE_DIGITS or whole, (label, value, cell)
            assert math.isclose(float(cell.replace(",", "")), value, rel_tol=1e-3), (label, cell)
            checked += 1
    return checked


def test_the_systems_table_writes_the_terminals_figures() -> None:
    (bert,) = analyze(load_round("v4.1"), ["bert"], AnalysisOptions(n_boot=100))
    rows = section_rows(bert.table)
    labels = {c: label for c, label in TABLE_COLUMNS.items() if c in bert.table}
    assert _check(rows, bert.table, labels) > 3 * len(rows)  # time, speedup, E, E' at least


def test_the_bench_table_writes_the_terminals_figures(tmp_path: Path) -> None:
    bench = bench_table(read_results(HERE / "h100_paths.jsonl")[0])
    section = build_bench_section(bench, FigureFiles(tmp_path))
    scaling = bench_scaling(bench)
    labels = {c: label for c, label in shown_columns(scaling).items() if c in scaling}
    assert _check(section.rows, scaling, labels) > len(section.rows)

"""The ideal (linear) speedup line is drawn one way in every figure, black and dashed
(grey, it was read as data beside the grey flagged runs and the family colours), and
named "linear (ideal)" in each legend; the report's plan table says what each count's
comparison crosses (``planning.crossing``), its names from the logs escaped."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pandas as pd
import pytest
from matplotlib.colors import to_hex

from gpuscale.analysis.analyze import AnalysisOptions, workload_table
from gpuscale.report.plan_section import SHOWN, PlanData, plan_data, plan_section
from gpuscale.report.svg import FigureFiles

BLACK = "#000000"


def _legend_entry(ax, label: str):
    legend = ax.get_legend()
    assert legend is not None
    texts = [t.get_text() for t in legend.get_texts()]
    assert label in texts, texts
    return legend.legend_handles[texts.index(label)]


def _is_ideal(line) -> bool:
    return to_hex(line.get_color()) == BLACK and line.get_linestyle() == "--"


@pytest.fixture(scope="module")
def bert(v41):
    return workload_table(v41, "v4.1", "bert", AnalysisOptions(n_boot=100))


def test_the_speedup_figure_names_its_black_dashed_ideal_line(bert) -> None:
    from gpuscale.report.figures import speedup

    ax = speedup(bert).figure.axes[0]
    assert _is_ideal(_legend_entry(ax, "linear (ideal)"))
    ideal = [ln for ln in ax.get_lines() if _is_ideal(ln)]
    assert len(ideal) == 1  # one reference: the study's 2 x RTX A5000
    x, y = (list(map(float, v)) for v in ideal[0].get_data())
    assert y[0] == 1.0 and y[1] == pytest.approx(x[1] / x[0])


def test_the_like_with_like_speedup_panel_draws_each_familys_ideal_black(bert) -> None:
    from gpuscale.report.answer_figures import scaling

    ax = scaling(bert).figure.axes[0]
    assert _is_ideal(_legend_entry(ax, "linear (ideal)"))
    ideal = [ln for ln in ax.get_lines() if _is_ideal(ln)]
    # one per family that ran more than one count: H100 (4 to 3,472), A100-PCIe (16, 32)
    starts = sorted(float(ln.get_data()[0][0]) for ln in ideal if len(set(ln.get_data()[0])) > 1)
    assert starts == [4.0, 16.0]


def test_the_bench_figure_names_its_black_dashed_ideal_line() -> None:
    from gpuscale.report.bench_figures import predicted_scaling

    predicted = pd.DataFrame(
        {
            "accelerators": [1, 2, 4],
            "speedup": [1.0, 1.8, 3.1],
            "speedup_low": [1.0, 1.6, 2.7],
            "speedup_high": [1.0, 1.9, 3.5],
        }
    )
    ax = predicted_scaling(predicted, None, "a title").figure.axes[0]
    assert _is_ideal(_legend_entry(ax, "linear (ideal)"))


CROSSED = {
    "crosses": "hardware generation, software stack",
    "crosses_generation_from": "Hopper",
    "crosses_generation_to": "Ampere",
    "crosses_software_from": "Dell",
    "crosses_software_to": "<b>Evil</b> & Co",
}


def test_the_plan_table_says_the_crossing_escaped(v41, tmp_path: Path) -> None:
    item = next(p for p in plan_data(v41.scores, ["bert"]) if isinstance(p, PlanData))
    table = item.table.copy()
    assert (table["crosses"] == "").all()  # the H100s ran BERT themselves: nothing crossed
    table.loc[table.index[1], list(CROSSED)] = list(CROSSED.values())
    section = plan_section([replace(item, table=table)], FigureFiles(tmp_path), rounds=["v4.1"])
    assert section is not None
    (_, columns, rows) = section.tables[0]
    assert SHOWN["crosses"] in columns
    cells = [r[SHOWN["crosses"]] for r in rows]
    assert cells[0] == "none"
    assert cells[1] == (
        "hardware generation (Hopper to Ampere) and software stack (Dell to <b>Evil</b> & Co)"
    )
    from jinja2 import Environment, PackageLoader, select_autoescape

    env = Environment(
        loader=PackageLoader("gpuscale", "report/templates"),
        autoescape=select_autoescape(default=True),
    )
    html = env.get_template("plan_tables.html").render(extra=section)
    assert "<b>Evil</b>" not in html
    assert "software stack (Dell to &lt;b&gt;Evil&lt;/b&gt; &amp; Co)" in html

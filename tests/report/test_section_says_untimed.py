"""A workload's section of the report says what ``analyze`` says of its runs and what its
figures leave out: a run whose logged time cannot be true (v0.7 Google tpu-v3-8192-TF
SSD: ``ci_untimed_runs``, the runs' ``time_flag``) and the systems the why-E'-falls figure
draws no point for (it dropped them unsaid). Names from the logs stay escaped."""

from __future__ import annotations

from dataclasses import replace
from html import escape

import pytest

from gpuscale.analysis import AnalysisOptions
from gpuscale.analysis.analyze import analyze
from gpuscale.analysis.terminal import untimed_sentences
from gpuscale.report.convergence_figures import decomposition
from gpuscale.report.findings import workload_findings
from gpuscale.report.page import Section, render_html

from .ragged import rows_of, tables_of, with_holes

EVIL = "<script>alert(1)</script>"
SYSTEMS = (
    ("Acme", "H100-SXM5-80GB", 8, 30.0),
    ("Bolt", "H100-SXM5-80GB", 16, 16.0),
    ("Core", "H100-SXM5-80GB", 32, 9.0),
    ("Dyna", "H100-SXM5-80GB", 64, 5.5),
)


def _analysed(holes: dict[str, set[int]] | None = None):
    rows = rows_of(SYSTEMS)
    tables = tables_of(with_holes(rows, holes or {}))
    [result] = analyze(tables, ["bert"], AnalysisOptions(n_boot=100))
    return tables, result


def test_an_untimed_run_is_said_in_its_workload_s_section_escaped() -> None:
    tables, result = _analysed()
    untimed = [1 if s == "Core" else 0 for s in result.table["submitter"]]
    table = result.table.assign(ci_untimed_runs=untimed)
    table.loc[table["submitter"] == "Core", "system_name"] = EVIL
    found = workload_findings(replace(result, table=table), "study")
    said = [f for f in found if "cannot be true" in f]
    assert said == [f"{untimed_sentences(table)[0]}."]  # analyze's words, one sentence
    assert said[0].startswith(f"Core {EVIL}: 1 run logged a time") and "time_flag" in said[0]
    section = Section("bert", "BERT", found, [], [])
    page = render_html(tables, [section], None, AnalysisOptions())
    assert EVIL not in page and escape(EVIL, quote=False) + ": 1 run logged" in page
    # a table with no such run says none
    assert not [f for f in workload_findings(result, "study") if "cannot be true" in f]


def test_the_systems_the_decomposition_figure_leaves_out_are_named_with_why() -> None:
    """Bolt's and Core's global batch and count missing (either alone gives a factor: the
    measured count, or the count the batch predicts): the figure draws the other 2 of the
    family's 4 systems, and the section names both left out and why."""
    _, result = _analysed({"global_batch_size": {1, 2}, "samples_to_converge": {1, 2}})
    [said] = [f for f in workload_findings(result, "study") if f.startswith("The figure of")]
    assert "within H100-SXM5-80GB draws 2 of its 4 systems" in said
    for name in ("Bolt 16xH100-SXM5-80GB (16", "Core 32xH100-SXM5-80GB (32"):
        why = "no global batch or samples-to-converge count in its logs"
        assert f"{name} x H100-SXM5-80GB): {why}" in said
    assert "Acme" not in said and "Dyna" not in said
    drawn = decomposition(result).labels["points-0"]  # the figure the sentence speaks of
    assert len(drawn) == 2 and not any("Bolt" in d or "Core" in d for d in drawn)


@pytest.mark.parametrize("holes", [{}, {"samples_to_converge": {0, 1, 2, 3}}])
def test_a_figure_that_draws_all_or_none_needs_no_such_sentence(holes) -> None:
    _, result = _analysed(holes)
    assert not [f for f in workload_findings(result, "study") if f.startswith("The figure of")]

"""Findings in words follow the numbers and never mix hardware generations."""

from __future__ import annotations

from gpuscale import load_round
from gpuscale.analysis import AnalysisOptions, analyze
from gpuscale.report.findings import workload_findings


def test_why_efficiency_falls_does_not_depend_on_the_reference_rule() -> None:
    tables = load_round("v4.1")
    sentences = {}
    for rule in ("study", "family"):
        result = analyze(tables, ["bert"], AnalysisOptions(reference=rule, n_boot=100))[0]
        sentences[rule] = [f for f in workload_findings(result, rule) if f.startswith("Why")]
    assert sentences["study"] == sentences["family"] and len(sentences["study"]) == 1
    assert "H100-SXM5-80GB" in sentences["study"][0]


def test_caution_when_the_reference_is_another_generation() -> None:
    result = analyze(load_round("v4.1"), ["bert"], AnalysisOptions(n_boot=100))[0]
    text = " ".join(workload_findings(result, "study"))
    assert "RTX A5000" in text and "mixes hardware generations" in text

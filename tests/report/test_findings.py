"""Findings in words follow the numbers and never mix hardware generations."""

from __future__ import annotations

import re

from gpuscale.analysis import AnalysisOptions, analyze
from gpuscale.report.findings import workload_findings


def test_why_efficiency_falls_does_not_depend_on_the_reference_rule(study_analysis) -> None:
    sentences = {}
    for rule in ("study", "family"):
        result = study_analysis[rule][0]
        assert result.workload == "bert"
        sentences[rule] = [f for f in workload_findings(result, rule) if f.startswith("Why")]
    assert sentences["study"] == sentences["family"] and len(sentences["study"]) == 1
    assert "H100-SXM5-80GB" in sentences["study"][0]


def test_caution_when_the_reference_is_another_generation(study_analysis) -> None:
    result = study_analysis["study"][0]
    text = " ".join(workload_findings(result, "study"))
    assert "RTX A5000" in text and "mixes hardware generations" in text
    assert "not super-linear scaling" in text  # BERT's E' reaches 24 against 2 x A5000


def test_no_super_linear_aside_when_no_e_prime_exceeds_one(v50) -> None:
    # v5.0 Stable Diffusion: the reference is a GB200 system, the most submitted family
    # H200; no system beats the reference per accelerator.
    result = analyze(v50, ["stable_diffusion"], AnalysisOptions(n_boot=100))[0]
    assert result.table["normalized_efficiency"].max() <= 1.05
    text = " ".join(workload_findings(result, "study"))
    assert "mixes hardware generations" in text and "super-linear" not in text


def test_device_counts_are_written_with_thousands_separators(study_analysis) -> None:
    # v4.1 BERT reaches 3,472 accelerators; every count in words is separated.
    result = study_analysis["study"][0]
    assert result.table["accelerators"].max() >= 1000
    text = " ".join(workload_findings(result, "study"))
    assert f"{int(result.table['accelerators'].max()):,} accelerators" in text
    assert re.search(r"\b\d{4,} (x|accelerators)\b", text) is None, text

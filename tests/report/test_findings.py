"""Findings in words follow the numbers and never mix hardware generations."""

from __future__ import annotations

import re

import pytest

from gpuscale.analysis import AnalysisOptions, analyze
from gpuscale.analysis.crossing import scaling_family
from gpuscale.report.findings import workload_findings

from ..golden import Golden

VIEW = "report/findings"
UNSEPARATED = re.compile(r"\b\d{4,} (x|accelerators)\b")  # a count without its separator
ONE = re.compile(r"(?<![\d.,])1 (system|submitter)\b")  # a count of one, singular


def test_why_efficiency_falls_does_not_depend_on_the_reference_rule(study_analysis) -> None:
    sentences = {}
    for rule in ("study", "family"):
        result = study_analysis[rule][0]
        assert result.workload == "bert"
        sentences[rule] = [f for f in workload_findings(result, rule) if f.startswith("Why")]
    assert sentences["study"] == sentences["family"] and len(sentences["study"]) == 1
    assert "H100-SXM5-80GB" in sentences["study"][0]


def test_caution_when_the_reference_is_another_generation(study_analysis, golden: Golden) -> None:
    result = study_analysis["study"][0]
    assert result.table["normalized_efficiency"].max() > 20  # E' reaches 24 against 2 x A5000
    caution = next(f for f in workload_findings(result, "study") if f.startswith("Caution"))
    assert "RTX A5000" in caution and "generations" in caution and "super-linear" in caution
    golden.check(VIEW, "v4.1 BERT: the reference another generation", caution)


def test_no_super_linear_aside_when_no_e_prime_exceeds_one(v50) -> None:
    # v5.0 Stable Diffusion: the study's reference is a GB200 system and the family that
    # ran the most counts is GB200 (8 counts; H200 has more systems at 4); no system beats
    # the reference per accelerator.
    result = analyze(v50, ["stable_diffusion"], AnalysisOptions(n_boot=100))[0]
    assert result.table["normalized_efficiency"].max() <= 1.05
    assert scaling_family(result.table) == "GB200"
    text = " ".join(workload_findings(result, "study"))
    assert "within GB200" in text and "super-linear" not in text


def test_device_counts_are_written_with_thousands_separators(study_analysis) -> None:
    # v4.1 BERT reaches 3,472 accelerators; every count in words is separated.
    result = study_analysis["study"][0]
    assert result.table["accelerators"].max() >= 1000
    text = " ".join(workload_findings(result, "study"))
    assert f"{int(result.table['accelerators'].max()):,} accelerators" in text
    assert UNSEPARATED.search(text) is None, text


def test_the_article_follows_how_the_family_is_said(study_analysis) -> None:
    # v4.1 BERT's study reference is 2 x RTX A5000: "an RTX", never "a RTX"
    text = " ".join(workload_findings(study_analysis["study"][0], "study"))
    assert "is an RTX A5000" in text and "a RTX" not in text


def test_another_form_factor_is_not_another_generation(v41, golden: Golden) -> None:
    # v4.1 RetinaNet: the study reference is an H100 NVL system, most systems H100 SXM
    result = analyze(v41, ["retinanet"], AnalysisOptions(n_boot=100))[0]
    assert result.references[0].accelerator_family == "H100-NVL-94GB"
    caution = next(f for f in workload_findings(result, "study") if f.startswith("Caution"))
    assert "hardware generations" not in caution
    assert "form factors" in caution and "(H100)" in caution  # one chip, named
    golden.check(VIEW, "v4.1 RetinaNet: two form factors", caution)


@pytest.mark.parametrize(
    "a, b, expected",
    [
        ("H200-SXM5-141GB", "H100-SXM5-80GB", "two chips of one generation (Hopper: H200, H100)"),
        ("NVIDIA A30-PCIE-24GB", "A100-SXM4-80GB", "two chips of one generation (Ampere"),
        ("TPU-v5p", "TPU-Trillium", "hardware generations"),
        ("RTX A5000", "H100-SXM5-80GB", "hardware generations"),
    ],
)
def test_hardware_differences_in_words(a: str, b: str, expected: str) -> None:
    from gpuscale.report.findings import hardware_difference

    assert hardware_difference(a, b).startswith(expected)


@pytest.mark.parametrize(
    "a, b, case",
    [
        ("A100-SXM4-80GB", "A100-SXM4-80GB-500W", "one part at two power limits"),
        ("V100-SXM3-32GB-450W", "V100-SXM3-32GB-350W", "DGX-2H against DGX-2"),
        ("A100-SXM4-80GB-500W", "A100-SXM4-40GB", "two memory sizes, one form"),
    ],
)
def test_a_power_or_memory_difference_is_not_another_form(
    a: str, b: str, case: str, golden: Golden
) -> None:
    from gpuscale.hardware.accelerators import normalise_accelerator
    from gpuscale.report.findings import hardware_difference

    one, other = normalise_accelerator(a), normalise_accelerator(b)
    assert (one.product, one.form_factor) == (other.product, other.form_factor)
    golden.check(VIEW, f"hardware difference: {case}", hardware_difference(a, b))


def test_no_cross_family_pick_under_a_per_family_reference(study_analysis) -> None:
    """Under --reference family every family's reference has E' = 1, so 'all systems'
    picks by E' or S x E compared references, not scaling: none is made, and the rows
    say why; fastest and knee (T and N only) stay."""
    from gpuscale.analysis.answers import answers

    result = study_analysis["family"][0]
    frame = answers(result)
    overall = frame[frame["scope"] == "all systems"].set_index("criterion")
    by_e = [c for c in overall.index if c.startswith("E'") or c == "speed x efficiency"]
    assert len(by_e) == 2
    assert overall.loc[by_e, "accelerators"].isna().all()
    assert overall.loc[by_e, "note"].str.contains("not across families").all()
    assert overall.loc[["fastest", "knee"], "accelerators"].notna().all()
    within = frame[frame["scope"] != "all systems"].set_index("criterion")
    assert within.loc[by_e, "accelerators"].notna().all()  # the family's own picks stay
    # the study rule (one reference) still picks across all systems
    study = answers(study_analysis["study"][0])
    assert study[study["scope"] == "all systems"]["accelerators"].notna().all()
    text = " ".join(workload_findings(result, "family"))
    # the answer is the family of the most counts', and no E' pick is made over all systems
    family = "H100-SXM5-80GB"
    assert f"within {family}" in text
    overall_by_e = [
        f for f in workload_findings(result, "family") if f.startswith("Over all") and "E'" in f
    ]
    assert overall_by_e == []


def test_answers_hold_the_typed_answer_schema(study_analysis) -> None:
    """The answers are a frame of ``tables.ANSWER_SCHEMA``: counts stay whole numbers
    (``Int64``, empty where no pick) beside picks that are missing, not floats like 8.0."""
    from gpuscale.analysis.answers import answers
    from gpuscale.tables import ANSWER_SCHEMA

    frame = answers(study_analysis["family"][0])
    assert frame["accelerators"].isna().any()  # the cross-family rows pick nothing
    assert list(frame.columns) == list(ANSWER_SCHEMA)
    assert str(frame["accelerators"].dtype) == "Int64"
    assert str(frame["time_to_train_min"].dtype) == "float64"


DURATION = re.compile(r"(?<![\w.])(\d[\d,]*(?:\.\d+)?)\s?(s|min|h|d)\b")
# a long time's hours or days in parentheses restate its minutes (``format_minutes``)
RESTATED = re.compile(r"(?<= min) \([\d.,-]+ (?:h|days)\)")


def test_every_time_in_the_findings_is_in_the_tables_unit_and_value(study_analysis) -> None:
    """One unit for the durations of a section, the table's (``time_to_train_min``, the
    "Time (min)" column), and each one a time of that table as the table writes it: never
    "7 s" in one sentence beside "5.39 min" in the next (v4.1 BERT's fastest system)."""
    from gpuscale.quantities import number

    checked = 0
    for rule, results in study_analysis.items():
        for result in results:
            times = {number(t) for t in result.table["time_to_train_min"].dropna()}
            for sentence in workload_findings(result, rule):
                for value, unit in DURATION.findall(RESTATED.sub("", sentence)):
                    assert unit == "min", f"{value} {unit} in: {sentence}"
                    assert value in times, f"{value} min is no time of the table: {sentence}"
                    checked += 1
    assert checked > 20


def test_a_count_of_one_takes_the_singular_in_every_sentence(v41) -> None:
    """A walk: "Pareto front: 1 systems", "6 systems from 1 submitters". On every
    v4.1 workload analysed within each family (one system, one submitter, one point on the
    front happen), no sentence says "1 <noun>s"."""
    from gpuscale.analysis.terminal import equilibrium_sentences

    families = sorted(v41.scores["accelerator_family"].dropna().unique())
    text = []
    for family in families:
        options = AnalysisOptions(families=(family,), n_boot=100)
        for result in analyze(v41, [], options):
            text += workload_findings(result, "study") + equilibrium_sentences(result)
    ones = [t for t in text if re.search(r"(?<![\d.,])1 (system|submitter|run|problem)s\b", t)]
    assert text and ones == []
    assert any(ONE.search(t) for t in text)  # it happens

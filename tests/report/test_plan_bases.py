"""A report answers "where do more accelerators stop paying" twice by the E' threshold:
the answer table (the family's fastest measured system per count) and each plan's "stops
paying" column (its planned counts). Beside the plan a sentence names the basis of each
and, where the counts differ, what each basis gives at them; its numbers are the tables'
(a walk: v4.1 BERT on H100 read 8 in the answer table and 16 in the plan, unreconciled)."""

from __future__ import annotations

import re

import pytest

from gpuscale.analysis.answers import answers
from gpuscale.report.plan_bases import bases_sentence, with_bases
from gpuscale.report.plan_section import PlanData, plan_data, plan_section
from gpuscale.report.svg import FigureFiles
from gpuscale.tables import STUDY_WORKLOADS, display_name

AT = re.compile(r"at ([\d,]*\d) (the plan keeps ([\d.]+) of its best|the plan asks no such count)")
MEASURED = re.compile(r"at ([\d,]*\d) [^;]*?fastest measured \((.+?), ([\d.]+) min\) ([\d.]+)")


@pytest.fixture(scope="module")
def plans(v41) -> list[PlanData]:
    return [p for p in plan_data(v41.scores, list(STUDY_WORKLOADS)) if isinstance(p, PlanData)]


def _count(text: str) -> int:
    return int(text.replace(",", ""))


def _planned_share(item: PlanData) -> dict[int, float]:
    """E' of each unflagged planned count against the best of them, from the plan's
    table: N T at the first count over N T at each."""
    kept = item.table[item.table["flags"] == ""]
    work = {
        int(n): n * t for n, t in zip(kept["accelerators"], kept["time_to_train_min"], strict=True)
    }
    first = work[min(work)]
    e = {n: first / w for n, w in work.items()}
    return {n: v / max(e.values()) for n, v in e.items()}


def test_each_plan_beside_the_answer_table_names_both_bases(plans, study_analysis) -> None:
    results = study_analysis["study"]
    said = 0
    for item in plans:
        result = next(r for r in results if r.workload == item.workload)
        table = answers(result)
        within = table[table["scope"] == f"{item.family} (most counts)"]
        picked = within[within["criterion"].str.startswith("E' >= ")]["accelerators"]
        marked = item.table[item.table["stops_paying"].str.contains("E' >= ")]
        if picked.empty or picked.isna().all() or marked.empty:
            continue
        sentence = bases_sentence(item, result)
        said += 1
        pick, mark = int(picked.iloc[0]), int(marked["accelerators"].iloc[0])
        assert f"marks {mark:,}, the answer table's" in sentence
        assert f"picks {pick:,} within {item.family}" in sentence
        # the basis of each named
        assert "against the best of the counts it plans" in sentence
        assert f"fastest measured system per count in {result.round}" in sentence
        if pick == mark:
            assert sentence.endswith("both mark the same count.")
            continue
        # its numbers are the tables', and explain each pick against the 0.8 threshold
        share = _planned_share(item)
        sentence = sentence.split("They differ as the bases do: ")[1]
        for n, _, value in AT.findall(sentence):
            if value:
                assert float(value) == pytest.approx(share[_count(n)], abs=0.006)
                assert (float(value) >= 0.8) == (_count(n) <= mark), sentence
            else:
                assert _count(n) not in share
        family = result.table[result.table["accelerator_family"] == item.family]
        best = family["normalized_efficiency"].max()
        for n, system, minutes, value in MEASURED.findall(sentence):
            at = family[family["accelerators"] == _count(n)]
            fastest = at.loc[at["time_to_train_min"].idxmin()]
            assert fastest["system_name"] == system
            assert float(minutes) == pytest.approx(fastest["time_to_train_min"], rel=0.005)
            assert float(value) == pytest.approx(fastest["normalized_efficiency"] / best, abs=0.006)
            assert (float(value) >= 0.8) == (_count(n) <= pick), sentence
        assert {mark, pick} <= {_count(n) for n, *_ in AT.findall(sentence)}
    assert said == len(plans) == 4


def test_the_sentence_follows_each_plans_words(plans, study_analysis, tmp_path) -> None:
    section = plan_section(plans, FigureFiles(tmp_path), rounds=["v4.1"])
    together = with_bases(section, study_analysis["study"])
    for item in plans:
        name = f"{display_name(item.workload)} on {item.family}"
        at = next(k for k, f in enumerate(together.findings) if f.startswith(f"{name}: "))
        assert together.findings[at + 1].startswith(f"{name}, where more accelerators stop")


def test_the_reports_plans_take_its_threshold(v41, tmp_path) -> None:
    """A report at another E' threshold (``AnalysisOptions.threshold``) marked its plans
    at the plan's default 0.8 beside the answer table's own threshold."""
    from html import unescape

    from gpuscale.analysis import AnalysisOptions
    from gpuscale.report.html import build_report

    options = AnalysisOptions(n_boot=100, threshold=0.7)
    path = build_report(v41, ["bert"], tmp_path, options, workers=1)
    text = unescape(re.sub(r"<[^>]+>", " ", path.read_text()))
    said = re.search(r"BERT on H100-SXM5-80GB, where more accelerators stop paying: ([^\n]+)", text)
    assert said and "this plan's E' >= 0.7 x best marks" in said[1]
    assert "the answer table's E' >= 0.7 x best" in said[1]
    assert "E' >= 0.8" not in text.split("Plan a run (gpuscale plan)")[-1]


def test_a_plan_with_no_count_kept_says_nothing(plans, study_analysis) -> None:
    from dataclasses import replace

    item = plans[0]
    flagged = replace(item, table=item.table.assign(flags="far beyond the data"))
    result = next(r for r in study_analysis["study"] if r.workload == item.workload)
    assert bases_sentence(flagged, result) == ""

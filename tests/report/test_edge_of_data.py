"""The answer's family is the one whose results hold the scaling (the most distinct
accelerator counts, then the most systems), and a recommended count at an end of the
counts that family ran says so: on the bundled v5.0, in the report's record, `analyze`'s
answer table and its JSON alike."""

from __future__ import annotations

from dataclasses import replace

import pytest

from gpuscale.analysis import AnalysisOptions, analyze
from gpuscale.analysis.answers import answers
from gpuscale.analysis.crossing import FEWEST, MOST, scaling_family
from gpuscale.analysis.document import equilibrium_json
from gpuscale.report.page import recommendation_rows, report_headline
from gpuscale.report.recommend import recommend

from ..golden import Golden

VIEW = "report/edge_of_data"
WORKLOADS = ["bert", "rgat", "llama31_405b", "llama2_70b_lora", "dlrm_dcnv2"]


@pytest.fixture(scope="module")
def results(v50):
    return {r.workload: r for r in analyze(v50, WORKLOADS, AnalysisOptions(n_boot=100))}


def test_the_family_is_the_one_that_ran_the_most_counts(results) -> None:
    table = results["bert"].table
    per = table.groupby("accelerator_family", observed=True)["accelerators"]
    # B200 has the most systems (11) at two counts; GB200 fewer (7) at six, 4 to 512
    assert (per.size()["B200"], per.nunique()["B200"]) == (11, 2)
    assert (per.size()["GB200"], per.nunique()["GB200"]) == (7, 6)
    assert scaling_family(table) == "GB200"
    rec = recommend(results["bert"])
    assert (rec.family, rec.accelerators, rec.fewest_measured, rec.most_measured) == (
        "GB200",
        8,
        4,
        512,
    )
    assert rec.edge == ""  # GB200 ran 4: fewer than the pick was measured
    # DLRM: H200 both ways (the most counts, 3, and the most systems)
    assert scaling_family(results["dlrm_dcnv2"].table) == "H200-SXM5-141GB"


@pytest.mark.parametrize(
    ("workload", "count", "edge"),
    [("rgat", 8, FEWEST), ("llama31_405b", 2496, MOST), ("dlrm_dcnv2", 8, FEWEST)],
)
def test_a_pick_at_an_end_of_the_counts_measured_says_so(results, workload, count, edge) -> None:
    result = results[workload]
    rec = recommend(result)
    assert (rec.accelerators, rec.edge) == (count, edge)
    ends = {FEWEST: rec.fewest_measured, MOST: rec.most_measured}
    assert ends[edge] == count
    ran = result.table.loc[result.table["accelerator_family"] == rec.family, "accelerators"]
    assert ends[edge] == {FEWEST: ran.min(), MOST: ran.max()}[edge]


@pytest.mark.parametrize("workload", WORKLOADS)
def test_the_report_analyze_and_its_json_agree_on_the_edge(results, workload) -> None:
    result = results[workload]
    rec = recommend(result)
    frame = answers(result)
    within = frame[frame["scope"] == f"{rec.family} (most counts)"]
    row = within[within["criterion"].str.startswith("E' >=")].iloc[0]
    assert (int(row["accelerators"]), row["edge"]) == (rec.accelerators, rec.edge)
    (own,) = [e for e in result.by_family if e.scope == rec.family]
    pick = equilibrium_json(own, result.table)["efficiency_threshold"]
    assert (pick["accelerators"], pick["edge"]) == (rec.accelerators, rec.edge)


def test_the_range_reaching_an_end_beyond_the_pick(results) -> None:
    # Llama2 70B LoRA: 36 within GB200, its 95% range 32-72; GB200 ran 4 to 512
    rec = recommend(results["llama2_70b_lora"])
    assert (rec.accelerators, rec.count_low, rec.count_high) == (36, 32, 72)
    assert rec.range_edges == ()
    # a range from 8 to 512, the most GB200 ran, reaches that end beyond the pick
    wider = replace(rec, accelerators=8, count_low=8, count_high=512)
    assert (wider.edge, wider.range_edges) == ("", (MOST,))
    fewest = replace(rec, accelerators=4, count_low=4, count_high=512)
    assert (fewest.edge, fewest.range_edges) == (FEWEST, (FEWEST, MOST))


def test_the_first_screen_lines(results, golden: Golden) -> None:
    recs = [recommend(results[w]) for w in WORKLOADS]
    rows = recommendation_rows(recs)
    assert [r["_count"] for r in rows] == ["8", "8", "2,496", "36", "8"]
    golden.check(VIEW, "v5.0 first screen", "\n".join(report_headline(recs)))

"""Like with like includes the software: a submitter whose time at the reference count is
twice its family's median there neither sets E' nor decides "why not more", even where
it alone ran the next counts; the comparison at the next count is a submitter's own
systems where it can be, and says when it crosses submitters. One rule in ``analyze``,
the report's first screen and overview, and ``plan``."""

from __future__ import annotations

import math

import pytest

from gpuscale.analysis import AnalysisOptions
from gpuscale.analysis.analyze import analyze
from gpuscale.analysis.terminal import outlier_sentences
from gpuscale.planning import PlanRequest, plan_for
from gpuscale.planning.cache import fits_of
from gpuscale.report.answer_figures import per_family
from gpuscale.report.page import recommendation_rows
from gpuscale.report.recommend import recommend

from .ragged import rows_of, tables_of, with_holes

FAMILY = "B200"
# Four submitters at 8 near 22 min; Slow's at 8 twice their median, and only Slow at 16
# and 32 (its own software scaling, not the family's).
SLOW_ROUND = (
    ("Acme", FAMILY, 8, 21.5),
    ("Bolt", FAMILY, 8, 22.0),
    ("Core", FAMILY, 8, 22.3),
    ("Dyna", FAMILY, 8, 21.8),
    ("Slow", FAMILY, 8, 43.8),
    ("Slow", FAMILY, 16, 30.0),
    ("Slow", FAMILY, 32, 20.0),
)


def _analysed(systems: tuple[tuple[str, str, int, float], ...], reference: str = "study"):
    tables = tables_of(with_holes(rows_of(systems), {}))
    options = AnalysisOptions(n_boot=100, reference=reference)
    return tables, analyze(tables, ["bert"], options)[0]


def test_the_only_submitter_at_the_next_counts_is_an_outlier_and_decides_nothing(golden) -> None:
    _, result = _analysed(SLOW_ROUND)
    slow = result.table[result.table["submitter"] == "Slow"]
    assert (slow["outlier"] != "").all()
    assert (result.table.loc[result.table["submitter"] != "Slow", "outlier"] == "").all()
    rec = recommend(result)
    assert rec.accelerators == 8
    assert rec.next_accelerators is None and rec.decides == ""  # not decided on Slow
    assert [(n, who) for n, who, _ in rec.passed_over] == [(16, "Slow"), (32, "Slow")]
    (root,) = {why for *_, why in rec.passed_over}
    assert root in set(slow["outlier"])  # the outlier at 8 they rest on
    assert len(rec.outliers) == 3
    # Slow's 43.8 min at 8 sets no E': the family's reference is Core's 22.3
    like = per_family(result.table)
    assert set(like["reference_time_to_train_min"]) == {22.3}
    assert like.loc[like["submitter"] != "Slow", "normalized_efficiency"].max() == pytest.approx(
        22.3 / 21.5
    )
    said = outlier_sentences(result.table)
    assert len(said) == 3  # analyze names each
    golden.check("report/outliers", "analyze: each outlier", "\n".join(said))
    why = recommendation_rows([rec])[0]["Why not more"]
    golden.check("report/outliers", "first screen: beyond the pick only an outlier ran", why)


def test_family_reference_in_analyze_leaves_the_outlier_out() -> None:
    _, result = _analysed(SLOW_ROUND, reference="family")
    assert set(result.table["reference_submitter"]) == {"Core"}
    family = next(e for e in result.by_family if e.scope == FAMILY)
    picked = [p.submitter for p in family.picks]
    assert picked and "Slow" not in picked


def test_the_next_count_compares_a_submitters_own_systems_where_it_can(golden) -> None:
    """Bolt ran 8 and 16: the factors at 16 are Bolt's own 8 -> 16, though Acme's is the
    system picked at 8; where only Dyna, which never ran 8, ran 16, the comparison
    crosses submitters, said."""
    own = (
        ("Acme", FAMILY, 8, 20.0),
        ("Bolt", FAMILY, 8, 22.0),
        ("Core", FAMILY, 8, 22.5),
        ("Bolt", FAMILY, 16, 14.0),
    )
    rec = recommend(_analysed(own)[1])
    assert (rec.accelerators, rec.next_accelerators) == (8, 16)
    assert rec.compared == ("Bolt",) and not rec.crosses_submitters
    assert rec.own_comparison == "Bolt" and rec.submitter == "Acme"
    assert rec.compared_systems == ("Bolt 8xB200", "Bolt 16xB200")  # not Acme's picked one
    # Bolt's own E' ratio, 22 x 8 / (14 x 16): throughput x convergence
    assert rec.throughput_ratio * rec.convergence_ratio == pytest.approx(22.0 / (14.0 * 2))
    why = recommendation_rows([rec])[0]["Why not more"]
    golden.check("report/outliers", "first screen: the next count is one submitter's own", why)
    crossing = (*own[:3], ("Dyna", FAMILY, 16, 14.5))
    rec = recommend(_analysed(crossing)[1])
    assert rec.compared == ("Acme", "Dyna") and rec.crosses_submitters
    assert rec.own_comparison == ""
    why = recommendation_rows([rec])[0]["Why not more"]
    golden.check("report/outliers", "first screen: the next count crosses submitters", why)


def test_the_plan_leaves_the_outlier_out_of_its_fit() -> None:
    tables, _ = _analysed(SLOW_ROUND)
    fit = fits_of(tables.scores)["workloads"]["bert"]
    assert sorted(fit["families"][FAMILY]["counts"]) == ["8"]  # 16 and 32 were Slow's only
    assert [o[1] for o in fit["outliers"]] == ["Slow"] * 3
    result = plan_for(
        PlanRequest(workload="bert", accelerator=FAMILY, devices="8,16"), tables.scores
    )
    at8 = result.rows[0]
    assert math.isclose(at8["time_to_train_min"], 21.9, rel_tol=0.05)  # the four, not Slow
    assert all(s["submitter"] != "Slow" for s in result.systems)


def test_a_plan_on_one_submitter_whose_software_is_an_outlier_elsewhere_says_so() -> None:
    """Slow alone ran 8 H100s, and Acme alone 8 A100s: both plans rest on one submission,
    named; Slow's is also said to be an outlier on B200 (its 2x at 8), Acme's is not."""
    systems = (
        *SLOW_ROUND,
        ("Slow", "H100-SXM5-80GB", 8, 15.0),
        ("Acme", "A100-SXM4-80GB", 8, 40.0),
    )
    tables, _ = _analysed(systems)
    said = {}
    for family in ("H100-SXM5-80GB", "A100-SXM4-80GB"):
        request = PlanRequest(workload="bert", accelerator=family, devices="8")
        (row,) = plan_for(request, tables.scores).rows
        said[family] = (row["rests_on"], row["rests_on_submitter"], row["rests_on_outlier"])
    assert said["A100-SXM4-80GB"] == ("one submission", "Acme", "")
    mark, who, outlier = said["H100-SXM5-80GB"]
    assert (mark, who) == ("one submission", "Slow")
    # its root outlier only (not the counts it ran alone beside it), with its round and system
    assert outlier == "v4.1 Slow 8xB200: 2.00x the median of B200's other submitters at 8"


def test_the_first_screen_and_its_overview_name_the_outliers() -> None:
    from gpuscale.report.answer_figures import overview_like
    from gpuscale.report.page import outlier_lines

    _, result = _analysed(SLOW_ROUND)
    rec = recommend(result)
    assert len(outlier_lines([rec])) == 3
    row = recommendation_rows([rec])[0]
    # 8 is the fewest B200 ran (Slow's 16 and 32 are measured too, though set aside)
    assert (rec.fewest_measured, rec.most_measured, rec.edge) == (8, 32, "fewest")
    assert row["_count"] == "8"
    chart = overview_like([result], [rec])
    crosses = [c for c in chart.figure.axes[0].collections if c.get_offsets().shape[0] == 3]
    assert crosses  # one cross over each of Slow's three systems

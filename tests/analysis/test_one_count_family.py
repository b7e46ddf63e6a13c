"""A family (or a table) measured at one accelerator count has no E' that measures
scaling (against a peer at its count) and no equilibrium: no pick, the reason as
``trends`` says it, alike in the library, the sentences, the JSON, the CSV columns, the
answer rows and the report's recommendation."""

from __future__ import annotations

import pytest

from gpuscale.analysis.analyze import analyze
from gpuscale.analysis.answers import answers
from gpuscale.analysis.document import as_json, with_family_columns
from gpuscale.analysis.equilibrium import equilibrium, equilibrium_by_family
from gpuscale.analysis.metrics import scaling_table, within_own_family
from gpuscale.analysis.terminal import equilibrium_sentences
from gpuscale.analysis.trends import trends
from gpuscale.report.recommend import recommend
from gpuscale.tables.analysis_request import AnalysisOptions

from .tables import scores

LABELS = ["knee", "speed x efficiency", "E' >= 0.8 x best"]
LADDER = {1: 64.0, 2: 32.5, 4: 16.6, 8: 8.6, 16: 6.0, 32: 4.8, 64: 4.2, 128: 3.9}


def _rows() -> list[tuple[str, str, int, float]]:
    ladder = [(f"h{n}", "H100", n, t) for n, t in LADDER.items()]
    return [*ladder, ("p8", "H200", 8, 5.0), ("q8", "H200", 8, 5.3)]


def test_a_family_at_one_count_picks_nothing_and_says_why() -> None:
    table = scaling_table(scores(_rows()), "bert")
    by_family = {e.scope: e for e in equilibrium_by_family(table)}
    one = by_family["H200"]
    assert one.picks == [] and one.reference == ""
    assert list(one.unpicked) == ["knee", "max_speed_x_efficiency", "efficiency_threshold"]
    assert one.unpicked_labels == list(LABELS)
    assert one.why_none == "one accelerator count (8): no E'"
    assert set(one.unpicked.values()) == {one.why_none}
    # the multi-count family: the same picks as its own table gives (numbers unchanged)
    own = within_own_family(table[table["accelerator_family"] == "H100"])
    alone = equilibrium(own, scope="H100")
    assert by_family["H100"] == alone and len(alone.picks) == 3 and alone.why_none == ""


def test_a_table_of_one_system_or_one_count_picks_nothing() -> None:
    lone = equilibrium(scaling_table(scores([("a", "X", 8, 5.0)]), "bert"))
    assert lone.picks == [] and lone.why_none == "one system: no E'"
    same = equilibrium(scaling_table(scores([("a", "X", 4, 5.0), ("b", "Y", 4, 9.0)]), "bert"))
    assert same.picks == [] and same.why_none == "one accelerator count (4): no E'"
    assert same.pareto == ["Org/a"]  # T against GPU-hours needs no E'


@pytest.fixture(scope="module")
def bert():
    from gpuscale import load_round

    tables = load_round("v4.1")
    options = AnalysisOptions(n_boot=100)
    (result,) = analyze(tables, ["bert"], options)
    return tables, options, result


def test_bundled_bert_one_count_families_alike_everywhere(bert) -> None:
    tables, options, result = bert
    table = result.table
    for family, count in (("H200-SXM5-141GB", 8), ("RTX A5000", 2)):
        assert set(table.loc[table["accelerator_family"] == family, "accelerators"]) == {count}
        eq = next(e for e in result.by_family if e.scope == family)
        why = f"one accelerator count ({count}): no E'"
        assert eq.picks == [] and eq.why_none == why
        assert f"within {family}: {why}" in equilibrium_sentences(result)
        (document,) = as_json([result], options)
        (shown,) = [e for e in document["equilibrium_by_family"] if e["scope"] == family]
        assert shown["reference"] is None and shown["efficiency_threshold"] is None
        assert {u["why"] for u in shown["unpicked"].values()} == {why}
        assert set(shown["unpicked"]) == {"knee", "max_speed_x_efficiency", "efficiency_threshold"}
        rows = with_family_columns(result)
        rows = rows[rows["accelerator_family"] == family]
        assert rows["family_reference"].isna().all() and rows["family_picks"].isna().all()
        assert rows["family_normalized_efficiency"].isna().all()
    # trends says the same of the family in that round
    trend = trends(tables.scores, ["bert"])
    (note,) = trend.loc[trend["accelerator_family"] == "H200-SXM5-141GB", "note"]
    assert "one accelerator count (8): no E'" in note
    # the multi-count families keep their picks
    kept = {e.scope: e.efficiency_threshold.accelerators for e in result.by_family if e.picks}
    assert kept == {"H100-SXM5-80GB": 8, "A100-PCIe-80GB": 32}


def test_bundled_bert_families_of_one_system_are_named(bert) -> None:
    """A family with one system (no outlier beside it) has no equilibrium of its own; the
    sentences name each such family once, none with a pick."""
    _, _, result = bert
    table = result.table
    systems = table.groupby("accelerator_family")["system_id"].nunique()
    alone = sorted(systems[systems == 1].index)
    assert alone and not {e.scope for e in result.by_family} & set(alone)
    (line,) = [s for s in equilibrium_sentences(result) if "one system" in s]
    assert all(family in line for family in alone) and line.endswith("no pick")
    (document,) = as_json([result], bert[1])
    assert document["families_alone"] == alone  # -f json names them as the text does


def test_answers_and_recommendation_of_a_one_count_family(bert) -> None:
    tables, _, _ = bert
    options = AnalysisOptions(n_boot=100, families=["H200-SXM5-141GB"])
    (result,) = analyze(tables, ["bert"], options)
    frame = answers(result)
    picked = frame[frame["criterion"] != "fastest"]
    assert len(picked) == 6 and picked["accelerators"].isna().all()
    assert set(picked["note"]) == {"one accelerator count (8): no E'"}
    fastest = frame[frame["criterion"] == "fastest"]
    assert list(fastest["accelerators"]) == [8, 8]
    rec = recommend(result)
    assert rec.accelerators is None and rec.why_none == "one accelerator count (8): no E'"

"""Why the factors of E' are unread, said from the table's fields: v0.7 BERT's report said
"no samples to converge or global batch in the logs" and its study finding "no measured
samples-to-converge count", though all 13 scored results have a global batch and a count
was read for each, flagged as impossible (1 sample where millions are needed)."""

from __future__ import annotations

import pytest

from gpuscale.analysis import AnalysisOptions
from gpuscale.analysis.analyze import analyze, study_statements
from gpuscale.analysis.study_findings import WHY as WHY_FINDING
from gpuscale.report.page import recommendation_rows
from gpuscale.report.recommend import recommend

from .ragged import base_rows, tables_of, with_holes

FLAG = "1 sample is more than 10x outside what the references needed: a logging error"
WHY = WHY_FINDING.name


def _flagged(family: str | None = None):
    """v0.7-like tables (no RCPs: no expected count): BERT's counts 1.0, flagged, for
    ``family``'s results (every family's without)."""
    rows = base_rows("v0.7")
    for row in rows:
        if row["workload"] == "bert" and family in (None, row["accelerator_family"]):
            row["samples_to_converge"] = 1.0
            row["samples_to_converge_flag"] = FLAG
    tables = tables_of(with_holes(rows, {}))
    return next(r for r in analyze(tables, ["bert"], AnalysisOptions(n_boot=100)))


@pytest.mark.parametrize(("family", "flagged"), [(None, "all 7"), ("H100-SXM5-80GB", "5 of the 7")])
def test_a_flagged_count_is_said_flagged_with_how_many(family, flagged) -> None:
    result = _flagged(family)
    rec = recommend(result)
    assert rec.unread == ("throughput", "convergence")
    assert rec.unread_flag == FLAG
    count = (result.table["samples_to_converge_flag"].fillna("") != "").sum()
    assert rec.flagged_results == (count, len(result.table)) == ((7 if family is None else 5), 7)
    assert rec.unread_lacking == ()  # a batch and a count read for each
    assert rec.no_expected  # no RCPs in v0.7's ruleset
    why = recommendation_rows([rec])[0]["Why not more"]
    # the first screen counts the flagged results; each flag's why is the table's
    assert f"flagged as impossible for {flagged} results" in why and FLAG not in why
    assert "global batch in the logs" not in why
    [statement] = [s for s in study_statements([result], AnalysisOptions()) if s.finding == WHY]
    assert statement.verdict == "not testable"
    assert "flagged as impossible" in statement.text and FLAG in statement.text
    assert f"{flagged} results of the workload are flagged" in statement.text
    assert "no measured samples-to-converge count" not in statement.text


def test_counts_missing_are_said_missing() -> None:
    """No count read at all (and no batch for some): said so, not flagged."""
    rows = base_rows("v0.7")
    holes = {"samples_to_converge": set(range(len(rows))), "global_batch_size": {0, 3, 4}}
    result = next(
        r
        for r in analyze(tables_of(with_holes(rows, holes)), ["bert"], AnalysisOptions(n_boot=100))
    )
    rec = recommend(result)
    assert (rec.unread_flag, rec.flagged_results) == ("", (0, 0))
    assert "samples to converge" in rec.unread_lacking
    why = recommendation_rows([rec])[0]["Why not more"]
    assert "flagged" not in why and "no samples to converge" in why


@pytest.mark.slow
def test_v07_bert_says_its_13_counts_are_flagged(shared_archive) -> None:
    """The published v0.7 round: all 13 scored BERT results have a global batch and a
    count read, each flagged (NVIDIA's 1.0: their logs give epoch_num 1 at evaluation)."""
    from gpuscale.mlperf.load import read_paths

    tables = read_paths([shared_archive("v0.7")])
    [result] = analyze(tables, ["bert"], AnalysisOptions())
    table = result.table
    assert len(table) == 13 and table["global_batch_size"].notna().all()
    assert (table["samples_to_converge_flag"].fillna("") != "").all()
    rec = recommend(result)
    assert (rec.accelerators, rec.next_accelerators) == (16, 256)
    assert rec.flagged_results == (13, 13) and rec.unread_lacking == ()
    assert rec.unread_flag.startswith("1 sample is more than 10x outside")
    [statement] = [s for s in study_statements([result], AnalysisOptions()) if s.finding == WHY]
    assert "all 13 results of the workload are flagged" in statement.text

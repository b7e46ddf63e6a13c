"""The closed division is analysed unless asked: an open result (another model's times:
v1.1's open "BERT" held Google's 828-min runs beside 0.42-min BERT-large ones) never
joins a closed curve without being asked, and what was left out is said."""

from __future__ import annotations

import re

import pandas as pd
import pytest

from gpuscale.analysis import AnalysisOptions
from gpuscale.analysis.analyze import NothingAnalysedError, analyze_asked
from gpuscale.analysis.trends import trends, trends_view
from gpuscale.report.request import ReportRequest
from gpuscale.tables import RoundTables

from ..golden import Golden
from .tables import runs_for, scores

VIEW = "analysis/divisions"

CLOSED = [("c4", "H100", 4, 100.0), ("c8", "H100", 8, 55.0), ("c16", "H100", 16, 30.0)]
# an open result of another, much larger model: 20x slower at 64 accelerators
OPEN = [("o64", "H100", 64, 2000.0)]


def counted(note: str, division: str, done: str = "left out") -> int | None:
    """The number of ``division`` results a note says were ``done`` (None: it says none)."""
    found = re.search(rf"(\d+) {division}-division results? {done}", note)
    return int(found[1]) if found else None


def round_tables(rows_closed: list, rows_open: list, round_name: str = "v9.9") -> RoundTables:
    closed = scores(rows_closed)
    opened = scores(rows_open).assign(division="open")
    frame = pd.concat([closed, opened], ignore_index=True).assign(round=round_name)
    return RoundTables(frame.iloc[:0], runs_for(frame), frame, frame.iloc[:0])


def test_the_open_result_is_left_out_and_said_by_default(golden: Golden) -> None:
    analysed = analyze_asked(round_tables(CLOSED, OPEN), ["bert"])
    [result] = analysed.results
    assert set(result.table["system_id"]) == {"c4", "c8", "c16"}
    [said] = [n for n in analysed.notes if "open-division" in n]
    assert counted(said, "open") == 1 and "--division open" in said  # and how to include it
    golden.check(VIEW, "an open result left out", said)


def test_all_puts_both_on_one_curve_and_open_alone_is_analysable() -> None:
    tables = round_tables(CLOSED, OPEN)
    both = analyze_asked(tables, ["bert"], AnalysisOptions(division="all"))
    assert set(both.results[0].table["system_id"]) == {"c4", "c8", "c16", "o64"}
    assert not [n for n in both.notes if "left out" in n]
    alone = analyze_asked(tables, ["bert"], AnalysisOptions(division="open"))
    assert set(alone.results[0].table["system_id"]) == {"o64"}
    assert [counted(n, "closed") for n in alone.notes if counted(n, "closed")] == [3]


def test_a_workload_of_open_results_only_says_why_nothing_is_analysed(golden: Golden) -> None:
    with pytest.raises(NothingAnalysedError) as caught:
        analyze_asked(round_tables([], [*OPEN, ("o128", "H100", 128, 1500.0)]), ["bert"])
    said = str(caught.value)
    assert "its 2 scored results" in said and "--division open" in said
    golden.check(VIEW, "only open results: nothing analysed", said)


def test_closed_results_today_s_rules_do_not_score_are_said_before_the_open_ones(
    golden: Golden,
) -> None:
    # v1.1's closed BERT: every result unscored by today's rules, the open ones scored
    tables = round_tables(CLOSED, OPEN)
    frame = tables.scores.copy()
    frame.loc[frame["division"] != "open", "time_to_train_min"] = float("nan")
    unscored = RoundTables(tables.systems, tables.runs, frame, tables.problems)
    with pytest.raises(NothingAnalysedError) as caught:
        analyze_asked(unscored, ["bert"])
    said = str(caught.value)
    assert counted(said, "closed", "(?:is|are) not scored") == 3
    assert "its 1 scored result is of another division" in said
    golden.check(VIEW, "closed results unscored, open scored: nothing analysed", said)


def test_trends_keep_the_closed_division_and_say_what_they_left_out() -> None:
    tables = round_tables(CLOSED, OPEN)
    frame = trends(tables.scores)
    assert int(frame["largest_accelerators"].max()) == 16  # not the open 64
    assert int(trends(tables.scores, division="all")["largest_accelerators"].max()) == 64
    view = trends_view(
        tables.scores, None, None, republished=False, first_rounds={}, last_rounds={}
    )
    assert [counted(n, "open") for n in view.notes if counted(n, "open")] == [1]


def test_the_report_analyses_the_division_its_request_names() -> None:
    assert ReportRequest().analysis().division == "closed"
    assert ReportRequest(division="all").analysis().division == "all"
    with pytest.raises(ValueError, match="division"):
        ReportRequest(division="opne-ish")


def test_a_whole_round_says_the_workload_it_left_for_its_division() -> None:
    """``analyze ROUND`` (no -b) left v1.1's BERT, all open, out of its output without a
    word: every workload asked is said, analysed or not."""
    bert = round_tables(CLOSED, OPEN)
    only_open = scores([("o8", "H100", 8, 10.0), ("o16", "H100", 16, 6.0)], "ssd")
    frame = pd.concat([bert.scores, only_open.assign(division="open")], ignore_index=True)
    tables = RoundTables(frame.iloc[:0], runs_for(frame), frame, frame.iloc[:0])
    analysed = analyze_asked(tables, [])
    assert [r.workload for r in analysed.results] == ["bert"]
    [said] = [n for n in analysed.notes if "ssd" in n.lower() or "retinanet" in n.lower()]
    assert counted(said, "open") == 2


def test_open_results_analysed_on_request_carry_a_caution(golden: Golden) -> None:
    analysed = analyze_asked(round_tables(CLOSED, OPEN), ["bert"], AnalysisOptions(division="all"))
    [said] = [n for n in analysed.notes if "analysed" in n]
    assert counted(said, "open", "analysed") == 1 and "different work" in said
    golden.check(VIEW, "an open result analysed", said)
    closed = analyze_asked(round_tables(CLOSED, OPEN), ["bert"])
    assert not [n for n in closed.notes if "analysed (" in n]


def test_what_a_division_left_out_is_read_as_the_scaling_tables_read_a_workload() -> None:
    """``left_out`` matched a workload's rows in a copy of the scaling table's reading that
    had drifted: a row whose workload is named by an old folder name (``gnn``, as a
    hand-made table may name it) was in ``gnn``'s scaling table but not in what ``gnn``
    left out."""
    from gpuscale.analysis.divisions import left_out
    from gpuscale.analysis.metrics import workload_scaling_table

    named = [
        ("gnn", "gnn", "rgat"),  # folder gnn, cross-round name rgat (as the ingest names it)
        ("rgat", "gnn_old", "gnn"),  # a table naming the workload by its old folder name
        ("rgat", "rgat", "rgat"),
        ("ssd", "ssd", "ssd_resnet34"),  # v1.1's ssd: SSD-ResNet34, not RetinaNet
    ]
    parts = []
    for k, (benchmark, system, workload) in enumerate(named):
        for division in ("closed", "open"):
            rows = scores([(f"{system}-{division}", "H100", 8 * (k + 1), 10.0)], workload)
            parts.append(rows.assign(benchmark=benchmark, division=division))
    table = pd.concat(parts, ignore_index=True)
    for asked in ("gnn", "rgat", "ssd", "ssd_resnet34", "retinanet"):
        opened = workload_scaling_table(table, asked, division="open")
        said = left_out(table, [("v9.9", asked)], "closed", "{other}")
        counted = [int(s.split(": ")[1].split(" ")[0]) for s in said]
        assert sum(counted) == len(opened), (asked, said, len(opened))


def test_the_closed_results_left_out_are_said_as_closed_ones(golden: Golden) -> None:
    """With --division open the closed results left out were said in the words for open
    ones ("the open division may change the model ...")."""
    from gpuscale.analysis.divisions import WHY, left_out

    table = round_tables(CLOSED, OPEN).scores
    [closed] = left_out(table, [("v9.9", "bert")], "open", "{other}")
    assert counted(closed, "closed") == len(CLOSED)
    assert WHY not in closed and "reference model" in closed
    golden.check(VIEW, "closed results left out", closed)
    [opened] = left_out(table, [("v9.9", "bert")], "closed", "{other}")
    assert counted(opened, "open") == len(OPEN) and WHY in opened


def test_trends_of_a_workload_of_the_other_division_only_say_what_it_held(
    golden: Golden,
) -> None:
    """`trends v1.1 -b bert` ended with "no scored results for these options": its 6
    scored results are open division, said nowhere (the notes are not shown then)."""
    tables = round_tables([], OPEN)
    view = trends_view(
        tables.scores, ["bert"], None, republished=False, first_rounds={}, last_rounds={}
    )
    assert view.empty.startswith("no closed-division ")
    assert counted(view.empty, "open") == len(OPEN)
    golden.check(VIEW, "trends: only open results", view.empty)


@pytest.mark.parametrize("unnamed", ["", None])
def test_a_result_with_no_division_named_is_said_so_with_the_option_that_draws_it(
    unnamed: str | None, golden: Golden
) -> None:
    """v0.7's Tencent and SIAT system files name no division: the note counts such a
    result as one with no division named (not a "-division result") and names ``all``,
    the one option that draws it (not ``--division  or all``)."""
    tables = round_tables(CLOSED, [("u8", "V100", 8, 150.0)])
    tables.scores.loc[tables.scores["system_id"] == "u8", "division"] = unnamed
    analysed = analyze_asked(tables, ["bert"])
    [said] = [n for n in analysed.notes if "left out" in n]
    assert "1 result with no division named left out" in said
    assert "--division all analyses them" in said and "-division result" not in said
    golden.check(VIEW, "a result with no division named left out", said)
    both = analyze_asked(tables, ["bert"], AnalysisOptions(division="all"))
    assert "u8" in set(both.results[0].table["system_id"])


def test_only_results_with_no_division_named_say_why_nothing_is_analysed() -> None:
    tables = round_tables([], [("u8", "V100", 8, 150.0), ("u16", "V100", 16, 80.0)])
    tables.scores["division"] = ""
    with pytest.raises(NothingAnalysedError) as caught:
        analyze_asked(tables, ["bert"])
    said = str(caught.value)
    assert "(no division named; --division all includes them)" in said


@pytest.mark.parametrize("missing", [None, 0], ids=["no count", "a count of 0"])
def test_a_scored_result_without_an_accelerator_count_is_named_not_dropped_unsaid(
    golden: Golden, missing: int | None
) -> None:
    """A scored result whose system gives no accelerator count (v0.7's and v3.x's Intel
    CPU-only systems, v0.7's Dell C4140) cannot join a curve per accelerator: it is left
    out and named in a note, of the division asked; one of another division is counted
    once, with that division's results left out, not named again."""
    frame = scores([*CLOSED, ("cpu", "CPU only", 1, 70.0), ("cpu-open", "CPU only", 1, 9.0)])
    frame["accelerators"] = frame["accelerators"].astype(object)
    frame.loc[frame["system_id"].str.startswith("cpu"), "accelerators"] = missing
    frame.loc[frame["system_id"] == "cpu-open", "division"] = "open"
    tables = RoundTables(frame.iloc[:0], runs_for(frame), frame, frame.iloc[:0])
    for division, named in (("closed", ["Org/cpu"]), ("all", ["Org/cpu", "Org/cpu-open"])):
        analysed = analyze_asked(tables, ["bert"], AnalysisOptions(division=division))
        assert set(analysed.results[0].table["system_id"]) == {"c4", "c8", "c16"}
        [said] = [n for n in analysed.notes if "no accelerator count" in n]
        assert said.startswith(f"v9.9 BERT: {' and '.join(named)} left out")
        if division == "closed":  # the open one said once, with the open results left out
            assert counted(" ".join(analysed.notes), "open") == 1
            golden.check(VIEW, "a result without an accelerator count", said)

"""What ``gpuscale analyze`` and ``gpuscale dataset`` ask of the library besides the numbers:
why nothing was analysed (a typed error), where ``-k`` was lowered, and what was written,
each said from the tables."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from gpuscale.analysis.analyze import (
    AnalysisOptions,
    NothingAnalysedError,
    analyze,
    analyze_asked,
    analyze_or_explain,
    clusters_lowered,
)
from gpuscale.analysis.dataset import written_sentence
from gpuscale.analysis.metrics import scaling_table
from gpuscale.names import UnknownNameError
from gpuscale.tables import RoundTables

from .tables import runs_for, scores

ROWS = [("a4", "H100", 4, 100.0), ("a8", "H100", 8, 52.0), ("a16", "H100", 16, 28.0)]


def tables_of(rows: list[tuple[str, str, int, float]]) -> RoundTables:
    frame = scores(rows)
    return RoundTables(frame.iloc[:0], runs_for(frame), frame, frame.iloc[:0])


def test_nothing_analysed_says_why_per_round_and_workload() -> None:
    unscored = tables_of([(s, f, n, math.nan) for s, f, n, _ in ROWS])
    with pytest.raises(NothingAnalysedError, match=r"v9\.9 bert: none of its 3 result"):
        analyze_or_explain(unscored, ["bert"], AnalysisOptions(n_boot=100))
    scored = tables_of(ROWS)
    with pytest.raises(NothingAnalysedError, match=r"v9\.9 bert: no scored system matches"):
        analyze_or_explain(scored, ["bert"], AnalysisOptions(n_boot=100, availability="cloud"))
    with pytest.raises(NothingAnalysedError, match=r"v9\.9 bert: its 3 scored results are of"):
        analyze_or_explain(scored, ["bert"], AnalysisOptions(n_boot=100, division="open"))
    found = analyze_or_explain(scored, ["bert"], AnalysisOptions(n_boot=100))
    assert [(r.round, r.workload) for r in found] == [("v9.9", "bert")]


def test_families_and_divisions_are_read_as_the_command_reads_them() -> None:
    """``analyze`` from Python reads ``families=("h100",)`` and ``division="Closed"`` as
    ``gpuscale analyze --family h100 --division Closed`` does (it found nothing before), and
    ``analyze_asked`` (the command's use case) says how it read them."""
    tables = tables_of([(s, "H100-SXM5-80GB", n, t) for s, _, n, t in ROWS])
    asked = AnalysisOptions(n_boot=100, families=("h100",), division="Closed")
    found = analyze(tables, ["bert"], asked)
    assert len(found) == 1 and len(found[0].table) == 3
    analysed = analyze_asked(tables, ["bert"], asked)
    assert analysed.options.families == ("H100-SXM5-80GB",)
    assert analysed.options.division == "closed"
    assert analysed.notes == ["'h100' read as the accelerator family H100-SXM5-80GB"]
    with pytest.raises(
        UnknownNameError, match=r"accelerator family B300 .* valid here: H100-SXM5-80GB"
    ):
        analyze(tables, ["bert"], AnalysisOptions(n_boot=100, families=("B300",)))
    # scaling_table too, one family given as text or in a list
    for families in ("h100", ["H100"]):
        assert len(scaling_table(tables.scores, "bert", families=families, division="Closed")) == 3
    with pytest.raises(UnknownNameError, match="did you mean 'open'"):
        scaling_table(tables.scores, "bert", division="opn")
    with pytest.raises(UnknownNameError, match=r"abbreviation.*closed in full"):
        scaling_table(tables.scores, "bert", division="clo")  # read as closed in silence


def test_nothing_analysed_names_the_filters_and_says_each_reason_once() -> None:
    """``--availability zzz`` over a round's seven workloads said "no scored system matches
    the options" seven times and not which option: each reason once, its pairs counted."""
    import pandas as pd

    frame = pd.concat([scores(ROWS, workload=w) for w in ("bert", "gpt3", "rgat", "ssd")])
    tables = RoundTables(frame.iloc[:0], runs_for(frame), frame, frame.iloc[:0])
    with pytest.raises(NothingAnalysedError) as raised:
        analyze_or_explain(tables, [], AnalysisOptions(n_boot=100, availability="zzz"))
    said = str(raised.value)
    # the division analysed by default is a filter too, and named
    assert said.startswith(
        "no scored system matches these options (division 'closed', availability 'zzz'); "
    )
    assert said.count("no scored system matches the options") == 1
    assert "v9.9 bert, v9.9 gpt3, v9.9 rgat and 1 more: no scored" in said


def test_a_lowered_k_is_said_with_the_count_found() -> None:
    results = analyze_or_explain(tables_of(ROWS), ["bert"], AnalysisOptions(n_boot=100, k=3))
    found = results[0].table["cluster"].nunique()
    said = clusters_lowered(results, 5)
    assert said == [
        f"v9.9 bert: -k 5 lowered to {found} (only 3 systems, {found} distinct enough to cluster)"
    ]
    assert clusters_lowered(results, found) == [] and clusters_lowered(results, None) == []


def test_what_the_dataset_wrote_is_counted_from_its_tables() -> None:
    results = scores([*ROWS[:2], ("b8", "B200", 8, math.nan)])
    runs = runs_for(results.iloc[:1])
    sentence = written_sentence(results, runs, "out")
    assert sentence == (
        "3 results (2 scored) and 5 runs of v9.9 written to out/ (results and runs, CSV and "
        "Parquet)"
    )
    results.attrs["same_runs_left_out"] = 1
    assert written_sentence(results, runs, "out").endswith(
        "; 1 result repeating the runs of another under a second system name in the same "
        "round counted once (`gpuscale scores --duplicates` lists them)"
    )  # it said "the problems table names them", and the dataset writes none


def test_results_republished_in_a_later_round_are_said_from_the_table() -> None:
    """A result in two rounds' archives (the same runs) is a row of each; the sentence said
    1,010 results of five rounds and nothing of the 71 such rows trends counts once."""
    first = scores(ROWS).assign(first_round="v9.8", round="v9.8")
    again = scores(ROWS[:2]).assign(first_round="v9.8", round="v9.9")
    results = pd.concat([first, again], ignore_index=True)
    republished = int((results["round"] != results["first_round"]).sum())
    sentence = written_sentence(results, runs_for(results), "out")
    assert f"; {republished} of the results republish one of an earlier round" in sentence
    assert "republish" not in written_sentence(first, runs_for(first), "out")

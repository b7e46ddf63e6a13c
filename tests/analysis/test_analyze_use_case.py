"""What ``gpuscale analyze`` and ``gpuscale dataset`` ask of the library besides the numbers:
why nothing was analysed (a typed error), where ``-k`` was lowered, and what was written,
each said from the tables."""

from __future__ import annotations

import math
import re

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

from ..golden import Golden
from .tables import runs_for, scores

VIEW = "analysis/use_case_sentences"

ROWS = [("a4", "H100", 4, 100.0), ("a8", "H100", 8, 52.0), ("a16", "H100", 16, 28.0)]


def tables_of(rows: list[tuple[str, str, int, float]]) -> RoundTables:
    frame = scores(rows)
    return RoundTables(frame.iloc[:0], runs_for(frame), frame, frame.iloc[:0])


def test_nothing_analysed_says_why_per_round_and_workload(golden: Golden) -> None:
    """Each reason names the round and workload and counts its results."""
    unscored = tables_of([(s, f, n, math.nan) for s, f, n, _ in ROWS])
    scored = tables_of(ROWS)
    said = []
    for tables, options in (
        (unscored, AnalysisOptions(n_boot=100)),
        (scored, AnalysisOptions(n_boot=100, availability="cloud")),
        (scored, AnalysisOptions(n_boot=100, division="open")),
    ):
        with pytest.raises(NothingAnalysedError, match=r"v9\.9 bert\b") as raised:
            analyze_or_explain(tables, ["bert"], options)
        said.append(str(raised.value))
    assert "3 result" in said[0] and "3 scored" in said[2]  # each counted
    golden.check(VIEW, "nothing analysed: unscored, unavailable, another division", "\n".join(said))
    found = analyze_or_explain(scored, ["bert"], AnalysisOptions(n_boot=100))
    assert [(r.round, r.workload) for r in found] == [("v9.9", "bert")]


def test_nothing_left_out_by_an_option_is_not_said_of_the_options(golden: Golden) -> None:
    """Intel's v0.7 folder (CPU-only systems) said "no scored system matches these options
    (division 'closed')" though every option kept them: the data's reason leads, the
    options unnamed; where the division did leave some out, the options lead as before."""
    cpu = tables_of([(s, "Xeon", 0, t) for s, _, _, t in ROWS])
    with pytest.raises(NothingAnalysedError) as raised:
        analyze_or_explain(cpu, ["bert"], AnalysisOptions(n_boot=100, availability="cloud"))
    said = str(raised.value)
    assert "options (" not in said and "'closed'" not in said and "'cloud'" not in said, said
    assert "v9.9 bert: its 3 scored systems have no accelerator count" in said
    golden.check(VIEW, "nothing analysed: CPU-only systems", said)
    frame = pd.concat([cpu.scores, scores([("g8", "H100", 8, 50.0)])], ignore_index=True)
    frame.loc[frame["system_id"] == "g8", "division"] = "open"
    mixed = RoundTables(frame.iloc[:0], runs_for(frame), frame, frame.iloc[:0])
    with pytest.raises(NothingAnalysedError) as raised:
        analyze_or_explain(mixed, ["bert"], AnalysisOptions(n_boot=100))
    assert str(raised.value).startswith("no scored system matches these options (division ")


def test_an_availability_that_matches_nothing_is_offered_those_there(v41) -> None:
    """`--availability availble` (a typo) said no system matches, not what would: the
    availabilities of the systems asked for are listed, the closest offered."""
    with pytest.raises(NothingAnalysedError) as raised:
        analyze_or_explain(v41, ["bert"], AnalysisOptions(n_boot=100, availability="previw"))
    said = str(raised.value)
    assert said.endswith(
        "their availabilities (the text is looked for within each): Available cloud, "
        "Available on-premise, Preview (did you mean 'Preview'?)"
    ), said
    # the options that left no system said once, the workload they left empty in it
    assert said.startswith("no scored system of v4.1 bert matches these options (")
    assert said.count("matches") == 1 and said.count("'previw'") == 1, said


def test_analyze_refuses_an_availability_no_system_has_naming_those_there(v41) -> None:
    """``analyze(tables, ["bert"], availability="zzz")`` returned [] (the command said why):
    a ValueError listing the availabilities there, as the command's; one a system has keeps
    its answer, [] where the division alone leaves the workload empty."""
    with pytest.raises(ValueError, match=re.escape("availability 'zzz'")) as refused:
        analyze(v41, ["bert"], availability="zzz", n_boot=100)
    assert str(refused.value).endswith(
        "their availabilities (the text is looked for within each): Available cloud, "
        "Available on-premise, Preview"
    )
    (cloud,) = analyze(v41, ["bert"], availability="CLOUD", n_boot=100)
    assert set(cloud.table["availability"]) == {"Available cloud"}
    assert analyze(v41, ["bert"], availability="cloud", division="open", n_boot=100) == []


def test_families_and_divisions_are_read_as_the_command_reads_them(golden: Golden) -> None:
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
    (note,) = analysed.notes
    assert note.startswith("'h100' ") and note.endswith(" H100-SXM5-80GB")  # typed, read as
    golden.check(VIEW, "a family read from what was typed", note)
    with pytest.raises(UnknownNameError, match="B300") as refused:
        analyze(tables, ["bert"], AnalysisOptions(n_boot=100, families=("B300",)))
    assert str(refused.value).endswith("H100-SXM5-80GB")  # the families there, listed
    # scaling_table too, one family given as text or in a list
    for families in ("h100", ["H100"]):
        assert len(scaling_table(tables.scores, "bert", families=families, division="Closed")) == 3
    with pytest.raises(UnknownNameError, match="did you mean 'open'"):
        scaling_table(tables.scores, "bert", division="opn")
    with pytest.raises(UnknownNameError, match="closed") as refused:
        scaling_table(tables.scores, "bert", division="clo")  # read as closed in silence
    golden.check(VIEW, "an abbreviated division", str(refused.value))


def test_nothing_analysed_names_the_filters_and_says_each_reason_once(golden: Golden) -> None:
    """``--availability zzz`` over a round's seven workloads said "no scored system matches
    the options" seven times and not which option: each reason once, its pairs counted."""
    import pandas as pd

    frame = pd.concat([scores(ROWS, workload=w) for w in ("bert", "gpt3", "rgat", "ssd")])
    tables = RoundTables(frame.iloc[:0], runs_for(frame), frame, frame.iloc[:0])
    with pytest.raises(NothingAnalysedError) as raised:
        analyze_or_explain(tables, [], AnalysisOptions(n_boot=100, availability="zzz"))
    said = str(raised.value)
    # the division analysed by default is a filter too, and named
    assert "division 'closed'" in said and "availability 'zzz'" in said
    # said once, the workloads the options left empty in it (it was said again after them)
    assert said.count("no scored system") == 1 and said.count("matches") == 1
    assert said.startswith("no scored system of v9.9 bert, v9.9 gpt3, v9.9 rgat and 1 more ")
    golden.check(VIEW, "nothing analysed over four workloads", said)


def test_a_lowered_k_is_said_with_the_count_found(golden: Golden) -> None:
    results = analyze_or_explain(tables_of(ROWS), ["bert"], AnalysisOptions(n_boot=100, k=3))
    found = results[0].table["cluster"].nunique()
    (said,) = clusters_lowered(results, 5)
    assert said.startswith("v9.9 bert: -k 5") and f"lowered to {found} " in said
    golden.check(VIEW, "-k lowered", said)
    assert clusters_lowered(results, found) == [] and clusters_lowered(results, None) == []


def test_what_the_dataset_wrote_is_counted_from_its_tables(golden: Golden) -> None:
    results = scores([*ROWS[:2], ("b8", "B200", 8, math.nan)])
    runs = runs_for(results.iloc[:1])
    sentence = written_sentence(results, runs, "out")
    assert [int(n) for n in re.findall(r"\b\d+\b", sentence)[:3]] == [3, 2, 5]  # results, runs
    # a result's row says why analyses leave it out: the sentence counts those rows
    twins = written_sentence(results.assign(same_runs_as=["", "Org/a8", ""]), runs, "out")
    assert twins.startswith(sentence) and "1 result repeats" in twins
    assert "--duplicates" in twins  # what lists them (the dataset writes no problems table)
    golden.check(VIEW, "the dataset written, one result counted once", twins)
    flagged = written_sentence(results.assign(log_flag=["", "", "its logs"]), runs, "out")
    assert flagged.startswith(sentence) and "1 result has logs" in flagged


def test_one_result_written_is_said_in_the_singular() -> None:
    """A dataset of one result (a folder of one submission) reads "1 result (1 scored)
    and 5 runs", never "1 results"."""
    results = scores(ROWS[:1])
    sentence = written_sentence(results, runs_for(results), "out")
    assert sentence.startswith("1 result (1 scored) and 5 runs of v9.9 written to out/")


def test_results_republished_in_a_later_round_are_said_from_the_table() -> None:
    """A result in two rounds' archives (the same runs) is a row of each; the sentence said
    1,010 results of five rounds and nothing of the 71 such rows trends counts once."""
    first = scores(ROWS).assign(first_round="v9.8", round="v9.8")
    again = scores(ROWS[:2]).assign(first_round="v9.8", round="v9.9")
    results = pd.concat([first, again], ignore_index=True)
    republished = int((results["round"] != results["first_round"]).sum())
    sentence = written_sentence(results, runs_for(results), "out")
    counted = re.search(r"; (\d+) of the results republish", sentence)
    assert counted and int(counted[1]) == republished
    assert "republish" not in written_sentence(first, runs_for(first), "out")

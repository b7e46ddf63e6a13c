"""A round's results that republish earlier ones are said so in the report (v4.1 BERT's
fastest, NVIDIA eos_n434, was first published in v3.1), checked against the dataset of
every bundled round, which marks where each result was first published."""

from __future__ import annotations

import re
from html import unescape

import pandas as pd
import pytest

from gpuscale.analysis import AnalysisOptions, analyze
from gpuscale.mlperf.bundled import load_round
from gpuscale.report.html import build_report
from gpuscale.tables.republished import KEY


def _firsts_of(bundled, round_name: str) -> pd.DataFrame:
    """The round's rows of the dataset of every bundled round, with their first round."""
    scores = bundled.scores
    return scores[scores["round"] == round_name][[*KEY, "system_name", "first_round"]]


def test_a_round_alone_is_marked_against_the_bundled_rounds_before_it(v41, bundled) -> None:
    from gpuscale.mlperf.earlier import first_published

    mine = first_published(v41)
    assert mine.index.equals(v41.scores.index)
    both = mine[[*KEY, "first_round"]].merge(
        _firsts_of(bundled, "v4.1"), on=KEY, suffixes=("", "_all")
    )
    assert len(both) == len(v41.scores)
    assert (both["first_round"] == both["first_round_all"]).all()
    assert (both["first_round"] != "v4.1").any()


@pytest.fixture(scope="module")
def bert_report(tmp_path_factory) -> str:
    out = tmp_path_factory.mktemp("republished")
    path = build_report(load_round("v4.1"), ["bert"], out, AnalysisOptions(n_boot=100))
    return unescape(re.sub(r"<[^>]+>", " ", path.read_text()))


def test_the_report_says_which_results_it_names_were_first_published_earlier(
    bert_report, v41, bundled
) -> None:
    table = analyze(v41, ["bert"], AnalysisOptions(n_boot=100))[0].table
    rows = table.merge(_firsts_of(bundled, "v4.1"), on=[*KEY, "system_name"])
    assert len(rows) == len(table)
    earlier = rows[rows["first_round"] != "v4.1"]
    assert len(earlier) > 0
    fastest = rows.loc[rows["time_to_train_min"].idxmin()]
    assert fastest["first_round"] != "v4.1"  # eos_n434, first published in v3.1
    said = re.search(r"Fastest: [^;]*? trains in", bert_report).group(0)
    assert f"{fastest['system_name']} " in said
    assert f"first published in {fastest['first_round']}" in said
    # the answer table's cells naming it say so too
    cells = re.findall(rf"\({re.escape(fastest['submitter'])} [^()]*\)", bert_report)
    named = [c for c in cells if fastest["system_name"] in c]
    assert named and all(f"first published in {fastest['first_round']}" in c for c in named)
    # a system first published in this round is never said to be earlier
    for name in rows[rows["first_round"] == "v4.1"]["system_name"]:
        assert not re.search(rf"{re.escape(name)}[^()]*first published", bert_report), name
    # once per workload: how many, by the round first showing them
    once = re.search(r"Republished results: [^`]*`gpuscale trends`[^.]*\.", bert_report)
    assert once, "no sentence counts the republished results"
    assert f"{len(earlier)} of v4.1's {len(rows)} BERT results" in once.group(0)
    for first, count in earlier["first_round"].value_counts().items():
        assert f"{count} in {first}" in once.group(0)

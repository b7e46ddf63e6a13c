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
def bert_html(tmp_path_factory) -> str:
    out = tmp_path_factory.mktemp("republished")
    path = build_report(load_round("v4.1"), ["bert"], out, AnalysisOptions(n_boot=100))
    return path.read_text()


@pytest.fixture(scope="module")
def bert_report(bert_html) -> str:
    code = re.sub(r"</?code>", "`", bert_html)  # a command shown as code reads as typed
    return unescape(re.sub(r"<[^>]+>", " ", code))


def _systems_table(page: str) -> tuple[list[str], list[tuple[bool, dict[str, str]]]]:
    """The BERT section's systems table: its headers and its rows (whether the row is
    highlighted as the reference, its cells by header)."""
    section = page[page.index('<details class="systems">') :]  # collapsed (issue 57)
    table = section[: section.index("</table>")]
    headers = [unescape(h) for h in re.findall(r"<th>(.*?)</th>", table)]
    rows = []
    for attrs, body in re.findall(r"<tr([^>]*)>(.*?)</tr>", table.split("<tbody>")[1], re.S):
        cells = [unescape(c) for c in re.findall(r"<td>(.*?)</td>", body, re.S)]
        rows.append(('class="reference"' in attrs, dict(zip(headers, cells, strict=True))))
    return headers, rows


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


def test_the_systems_table_marks_the_results_first_published_earlier(
    bert_html, bert_report, v41, bundled
) -> None:
    """A walk: the overview said "10 of v4.1's 29 BERT results were first published in an
    earlier round" and the systems table marked none of them. Its First published column
    holds the round for exactly those rows: the dataset of every bundled round says which
    (its first_round), and the sentence counts as many."""
    table = analyze(v41, ["bert"], AnalysisOptions(n_boot=100))[0].table
    rows = table.merge(_firsts_of(bundled, "v4.1"), on=[*KEY, "system_name"])
    earlier = rows[rows["first_round"] != "v4.1"]
    headers, shown = _systems_table(bert_html)
    assert "First published" in headers and len(shown) == len(table)
    marked = [cells for _, cells in shown if cells["First published"]]
    expected = sorted(
        (r.submitter, f"{int(r.accelerators):,}", r.first_round) for r in earlier.itertuples()
    )
    assert sorted((c["Submitter"], c["N"], c["First published"]) for c in marked) == expected
    for cells in marked:  # each the system the dataset names, at its count
        names = earlier[
            (earlier["submitter"] == cells["Submitter"])
            & (earlier["accelerators"].map(lambda n: f"{int(n):,}") == cells["N"])
        ]["system_name"]
        assert any(cells["System"].startswith(str(name)) for name in names), cells
    said = re.search(r"Republished results: (\d+) of v4\.1's (\d+) BERT results", bert_report)
    assert said and int(said.group(1)) == len(marked) and int(said.group(2)) == len(shown)
    legend = re.search(r"First published: [^<]*", unescape(bert_html))
    assert legend and f"the {len(marked)} of v4.1's {len(shown)} results" in legend.group(0)


def test_the_reference_is_named_as_the_systems_table_shows_it(bert_html, bert_report, v41) -> None:
    """A walk: the BERT overview named its reference "Krai 7920T_2xA5000_hdd" (the system
    id), a row the table calls "Dell Precision 7920 Tower with 2x A5000 using HDD": the
    words name it by the table's Submitter and System cells of the highlighted row."""
    _, shown = _systems_table(bert_html)
    references = [cells for is_ref, cells in shown if is_ref]
    assert len(references) == 1
    ref = references[0]
    said = re.search(r"Reference \(study rule\): ([^.]*?) \(\d", bert_report)
    assert said and said.group(1) == f"{ref['Submitter']} {ref['System']}"
    result = analyze(v41, ["bert"], AnalysisOptions(n_boot=100))[0]
    (reference,) = result.references
    assert reference.system_id not in ref["System"]  # the walk's case: the id differs
    assert reference.system_id not in said.group(0)


def test_a_users_folder_is_said_to_hold_published_results_not_to_republish() -> None:
    """A user's folder read beside v4.1 (``mine (v4.1)``) holding a copy of a v4.1 result:
    the report said "1 of mine (v4.1)'s 2 BERT results was first published in an earlier
    round (1 in v4.1) ... analyses mine (v4.1) as MLCommons published it"; the folder is
    neither later than v4.1 nor published."""
    from gpuscale.report.page import FIRST_PUBLISHED, section_columns
    from gpuscale.report.republished_words import earlier_among, republished_sentence

    table = pd.DataFrame(
        {
            "round": ["mine (v4.1)"] * 2,
            "workload": ["bert"] * 2,
            "org": ["Fujitsu", "Acme"],
            "system_id": ["gx2560", "box"],
        }
    )
    firsts = {("Fujitsu", "gx2560"): "v4.1"}
    sentence = republished_sentence(table, firsts)
    assert sentence is not None
    assert sentence.startswith(
        "Published results: 1 of your folder mine (v4.1)'s 2 BERT results was published "
        "by MLCommons (1 in v4.1; the same runs)"
    )
    assert "earlier round" not in sentence and "as MLCommons published it" not in sentence
    assert earlier_among(table, firsts) == ", 1 of them published by MLCommons (the same runs)"
    rows = [{FIRST_PUBLISHED: "v4.1"}, {FIRST_PUBLISHED: ""}]
    columns, said = section_columns(rows, "mine (v4.1)")
    assert FIRST_PUBLISHED in columns
    assert said == (
        "First published: the round that published the result, for the 1 of your folder "
        "mine (v4.1)'s 2 results a round published (the same runs); empty for the others."
    )
    # a published round keeps its words
    _, published = section_columns(rows, "v4.1")
    assert published.endswith("empty for those first published in v4.1.")

"""The report's "your hardware" answer in `gpuscale advise`'s two views (issue 60): its
default lines and the predicted-scaling figure at the top, every other finding and the
advice's whole explanation in one collapsed section; the page's word budgets (issue 57)
hold with a bench file too."""

from __future__ import annotations

import re
from html import unescape
from pathlib import Path

import pytest

from gpuscale import load_round
from gpuscale.advice.explain import answer
from gpuscale.advice.request import AdviceRequest
from gpuscale.analysis import AnalysisOptions
from gpuscale.bench.results import bench_table, read_results
from gpuscale.report.bench_advice import advice_on_bench
from gpuscale.report.html import build_report
from gpuscale.tables import STUDY_WORKLOADS

from .visible_words import visible_words

HERE = Path(__file__).parent
BENCH = HERE / "h100_paths.jsonl"
REQUEST = AdviceRequest(interconnect="nvlink4")


@pytest.fixture(scope="module")
def bench():
    return bench_table(read_results(BENCH)[0])


@pytest.fixture(scope="module")
def page(bench, tmp_path_factory) -> str:
    out = tmp_path_factory.mktemp("two-views")
    return build_report(
        load_round("v4.1"),
        list(STUDY_WORKLOADS),
        out,
        AnalysisOptions(n_boot=200),
        bench=bench,
        advice=REQUEST,
    ).read_text()


def _text(html: str) -> str:
    code = re.sub(r"</?code>", "`", html)  # a command shown as code reads as typed
    return re.sub(r"\s+", " ", unescape(re.sub(r"<[^>]+>", " ", code)))


def test_word_budgets_hold_with_a_bench_file(page) -> None:
    words = visible_words(page)
    assert words.before_first_figure <= 250, words
    assert words.total <= 3000, words


def test_the_top_is_the_advise_commands_default_view_and_its_figure(page, bench) -> None:
    advice = advice_on_bench(bench, REQUEST).advice
    assert advice is not None
    top = page[page.index('id="own-answer"') : page.index('id="answer"')]
    for line in answer.lines(advice)[1:]:
        assert _text(line) in _text(top)
    assert answer.lines(advice)[0] in _text(top)
    # the first figure on the page is the advice's predicted scaling, beside its answer
    first_svg = page.index("<svg")
    assert page.index('id="own-figure"') < first_svg < page.index('id="answer"')


def test_every_explanation_line_is_on_the_page_behind_one_collapsed_section(page, bench) -> None:
    advice = advice_on_bench(bench, REQUEST).advice
    assert advice is not None
    start = page.index('<details class="bench-more">')
    collapsed = _text(page[start : page.index("</details>", start)])
    for line in advice.explanation:
        assert _text(line) in collapsed
    # and none of it is in the visible part of the section
    shown = _text(page[page.index('<section id="bench">') : start])
    assert not any(_text(line) in shown for line in advice.explanation if len(line) > 40)

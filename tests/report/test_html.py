"""The HTML report: structure, escaping, self-containment, files written."""

from __future__ import annotations

import re
from html import escape, unescape
from html.parser import HTMLParser

import pytest

from gpuscale import load_round
from gpuscale.analysis import AnalysisOptions
from gpuscale.quantities import article
from gpuscale.report.figures import FIGURES
from gpuscale.report.html import build_report
from gpuscale.report.workload_figures import FIGURE_NAMES, FIRST_FIGURES
from tests.builders import undated

from ..golden import Golden

EVIL = "<script>alert(1)</script>"
VIEW = "report/html_sentences"
REFERENCE_ROW = '<tr class="reference">'  # the reference system's row
CAPTION = "Systems of <b>v4.1</b>"  # a caption with the caller's own markup


class Collector(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[str] = []
        self.attrs: list[tuple[str, str | None]] = []
        self.scripts = 0

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        self.attrs.extend(attrs)
        if tag == "script":
            self.scripts += 1


def evil_tables():
    """The bundled v4.1 round with a system and a problem named like a script."""
    tables = load_round("v4.1")
    scores = tables.scores.copy()
    scores.loc[scores.system_id == "eos_n8_ngc23.04_pytorch", "system_name"] = EVIL
    problems = tables.problems.copy()
    problems.loc[len(problems)] = ["v4.1", EVIL, "parse error", EVIL]
    return type(tables)(systems=tables.systems, runs=tables.runs, scores=scores, problems=problems)


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    tables = evil_tables()
    out = tmp_path_factory.mktemp("report")
    path = build_report(
        tables,
        ["bert", "stable_diffusion"],
        out,
        AnalysisOptions(n_boot=200),
        workers=1,
        png=True,
        all_figures=True,
    )
    return out, path.read_text()


def test_structure(report) -> None:
    out, html = report
    parser = Collector()
    parser.feed(html)
    # per workload, the overview like with like and the study's across hardware (BERT and
    # Stable Diffusion mix families against one reference), the plan's figure per workload
    assert parser.tags.count("svg") == 2 * len(FIGURES) + 2 + 2
    # the recommendation, every criterion's, two workloads, problems; plans
    assert parser.tags.count("table") == 5 + 2
    assert parser.scripts == 1
    assert "Findings in words" in html and "Reference rule" in html
    # the answer first (one count per workload), then the evidence
    assert html.index('id="answer"') < html.index("<svg") < html.index('id="criteria"')
    for stem in ("v4.1_bert_efficiency", "v4.1_stable_diffusion_time_vs_cost"):
        assert (out / f"{stem}.png").stat().st_size > 10_000
        assert (out / f"{stem}.svg").exists()


def test_by_default_the_overviews_and_each_workloads_panels_are_drawn(tmp_path) -> None:
    """A first report draws what a reader needs first (issue 37: 68 figures took most of
    its 15 CPU-s; issue 57: the four like-with-like panels of each workload, in one
    figure); every other figure is named where it would be, with the option that
    draws it, and drawn with that option."""
    tables = load_round("v4.1")
    options = AnalysisOptions(n_boot=100)
    chosen = ["bert", "llama2_70b_lora"]  # Llama2 LoRA: v4.1's one energy result
    html = build_report(tables, chosen, tmp_path / "a", options).read_text()
    files = sorted(p.name for p in (tmp_path / "a").glob("*.svg"))
    # each workload's like-with-like panels; the overview, like with like, on the first
    # screen; the study's reading across hardware, further down
    first = ("bert_scaling", "llama2_70b_lora_scaling", "overview", "overview_efficiency")
    assert files == [f"v4.1_{stem}.svg" for stem in first]
    assert html.count("<svg") == len(files)
    left_out = [FIGURE_NAMES[n] for n in FIGURES if n not in FIRST_FIGURES]
    for section in ("v4.1-bert", "v4.1-llama2_70b_lora"):
        part = html[html.index(f'<section id="{section}">') :]
        said = unescape(part[: part.index("</section>")])
        for name in left_out:
            assert name in said, (section, name)
        assert "--all-figures" in said  # the option that draws them
    for section, figure in (("plan", "each plan's figure"), ("energy", "its figure")):
        part = html[html.index(f'<section id="{section}">') :]
        part = unescape(part[: part.index("</section>")])
        assert f": {figure}" in part and "Not drawn" in part
        # said beside the figures, not counted as a finding ("Findings in words (2)")
        if '<ul class="findings">' in part:
            findings = part[part.index('<ul class="findings">') :]
            assert "Not drawn" not in findings[: findings.index("</ul>")]
    every = build_report(tables, chosen, tmp_path / "b", options, all_figures=True)
    drawn = {p.stem for p in (tmp_path / "b").glob("*.svg")}
    assert {f"v4.1_bert_{name}" for name in FIGURES} | {"plan_bert", "v4.1_energy"} <= drawn
    assert "--all-figures" not in every.read_text()


def test_every_element_id_on_the_page_is_unique_and_every_reference_resolves(report) -> None:
    """Inline figures each number their groups from 1 (matplotlib's ``figure_1``,
    ``axes_1``, ...): the page repeated hundreds of ids. Each is now unique, and each
    ``href="#..."`` and ``url(#...)`` inside a figure names an id of that same figure."""
    _out, html = report
    parser = Collector()
    parser.feed(html)
    ids = [value for name, value in parser.attrs if name == "id"]
    assert len(ids) > 500
    assert len(ids) == len(set(ids)), sorted({i for i in ids if ids.count(i) > 1})[:5]
    for svg in re.findall(r"<svg\b.*?</svg>", html, flags=re.S):
        own = set(re.findall(r'\sid="([^"]+)"', svg))
        cited = re.findall(r'(?:href="#|url\(#)([^")]+)', svg)
        assert cited and set(cited) <= own, sorted(set(cited) - own)[:5]


def test_the_study_overview_says_its_clusters_are_each_panels_own(report) -> None:
    """The study's overview colours and shapes points by K-means cluster, numbered within
    each workload (BERT's cluster 0 is not Stable Diffusion's) and drawn without a legend:
    its caption says the colours belong to their panel."""
    _out, html = report
    figures = re.findall(r"<figure\b.*?</figure>", html, flags=re.S)
    study = [f for f in figures if "_overview_efficiency.svg" in f]
    assert len(study) == 1 and "Normalised efficiency of every workload" in study[0]
    caption = unescape(re.sub(r"<[^>]+>", "", study[0].split("<figcaption>")[1]))
    assert "cluster of behaviour, numbered within each panel" in caption
    assert "not one cluster" in caption


def test_untrusted_text_is_escaped(report) -> None:
    _, html = report
    assert EVIL not in html
    assert html.count(escape(EVIL, quote=False)) >= 3  # table, tooltip, problems


def test_no_external_resources(report) -> None:
    _, html = report
    parser = Collector()
    parser.feed(html)
    for name, value in parser.attrs:
        if name in ("src", "href", "xlink:href") and value:
            assert not re.match(r"^(https?:)?//", value), value
    assert "@import" not in html and "url(http" not in html


def test_pngs_are_at_least_150_dpi(report) -> None:
    from PIL import Image

    out, _ = report
    with Image.open(out / "v4.1_bert_speedup.png") as image:
        assert round(image.info["dpi"][0]) >= 150


def test_worker_processes_draw_the_same_report(report, tmp_path) -> None:
    """Figures drawn in forked workers (two phases, one task per figure) give the same
    page and files as drawing everything in this process."""
    out, html = report
    tables = evil_tables()
    path = build_report(
        tables,
        ["bert", "stable_diffusion"],
        tmp_path,
        AnalysisOptions(n_boot=200),
        workers=2,
        png=True,
        all_figures=True,
    )

    assert undated(path.read_text()) == undated(html)
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(p.name for p in out.iterdir())


def test_table_counts_are_written_in_full(report) -> None:
    _, html = report
    cells = [c.strip() for c in re.findall(r"<td[^>]*>([^<]*)</td>", html)]
    assert "1,024" in cells  # Stable Diffusion's 1024-accelerator systems
    assert not [c for c in cells if re.search(r"\de[+-]\d", c)]  # no 1.02e+03


def test_the_headline_figure_cautions_a_mixed_generation_reference(study_analysis) -> None:
    """The study's rule sets v4.1's BERT systems (H100, B200...) against an older, smaller
    reference: the overview's caption says so beside the figure; per family it need not."""
    from gpuscale.report.workload_figures import overview_caution

    study = overview_caution(study_analysis["study"])
    bert = next(r for r in study_analysis["study"] if r.workload == "bert")
    family = bert.references[0].accelerator_family
    assert family != "H100-SXM5-80GB"  # the premise: BERT's study reference is no H100
    said = f"BERT against {article(family)} {family} reference"  # "a RTX A5000" once
    assert study.startswith("; caution: ") and said in study
    assert "not scaling" in study
    assert overview_caution(study_analysis["family"]) == ""


def test_the_overview_caution_names_each_panels_round(golden: Golden) -> None:
    """A walk: a report of v4.0, v4.1 and v5.0 said "BERT against a RTX A5000 reference"
    twice, without the rounds."""
    from gpuscale.analysis import analyze
    from gpuscale.report.workload_figures import overview_caution

    results = analyze(load_round("v4.0", "v4.1"), ["bert"], AnalysisOptions(n_boot=100))
    said = overview_caution(results).removeprefix("; caution: ").split(": E'")[0].split("; ")
    mixed = [
        r
        for r in results
        if set(r.table["accelerator_family"]) != {r.references[0].accelerator_family}
    ]
    assert len(mixed) == 2  # the data: both rounds' BERT panels mix families
    assert len(said) == len(mixed)
    for r, panel in zip(sorted(mixed, key=lambda r: r.round), sorted(said), strict=True):
        family = r.references[0].accelerator_family
        assert panel.startswith(f"{r.round} ") and f" {article(family)} {family} " in panel
    golden.check(VIEW, "overview caution: v4.0 and v4.1 BERT", "\n".join(sorted(said)))


def test_the_sortable_table_macro_escapes_and_highlights_the_reference() -> None:
    from jinja2 import Environment, PackageLoader, select_autoescape

    env = Environment(
        loader=PackageLoader("gpuscale", "report/templates"), autoescape=select_autoescape()
    )
    page = env.from_string(
        '{% from "tables.html" import sortable %}'
        '{% call sortable(["system", "E\'"], rows) %}' + CAPTION + "{% endcall %}"
    ).render(rows=[{"system": EVIL, "E'": 1.0, "_reference": True}, {"system": "b", "E'": 0.5}])
    assert EVIL not in page and "&lt;script&gt;" in page
    assert page.count(REFERENCE_ROW) == 1
    assert page.count(CAPTION) == 1 and f"<caption>{CAPTION}<" in page  # its markup kept
    assert [c for c in re.findall(r"<th>(.*?)</th>", page)] == ["system", "E&#39;"]


def test_the_header_counts_results_and_runs_as_the_dataset_does() -> None:
    """A walk: the report's header said 1,309 runs and 153 scored results of v4.1 where
    `gpuscale dataset` said 1,299 runs and 152 scored (a result published under a second
    system name counted twice in the header)."""
    from gpuscale.analysis.dataset import dataset
    from gpuscale.report.page import render_html
    from gpuscale.tables.republished import (
        counted_in_analyses,
        is_same_runs_copy,
        runs_counted_once,
    )

    tables = load_round("v4.1")
    every, runs = dataset(tables)  # every result; the header counts what analyses count
    results, runs = counted_in_analyses(every), runs_counted_once(runs, every)
    html = render_html(tables, [], None, AnalysisOptions(), all_figures=False)
    said = re.search(
        r"\(([\d,]+) systems(?: and ([\d,]+) described without a result)?, ([\d,]+) runs,"
        r"\s+([\d,]+) scored results",
        html,
    )
    assert said is not None
    n_runs, n_scored = (int(said.group(i).replace(",", "")) for i in (3, 4))
    assert n_runs == len(runs) and n_scored == int(results["time_to_train_min"].notna().sum())
    # systems: those of the dataset's results (the header said 86, the descriptions, beside
    # the dataset's 83); the descriptions with no result said apart, as many as there are
    key = ["round", "org", "system_id"]
    assert int(said.group(1)) == len(results[key].drop_duplicates())
    described = set(map(tuple, tables.systems[key].values))
    bare = described - set(map(tuple, tables.scores[key].values))
    assert int(said.group(2) or 0) == len(bare) > 0
    twins = int(is_same_runs_copy(every).sum())
    said_twins = re.search(r"(\d+) published under a second system\s+name counted once", html)
    assert twins > 0 and said_twins and int(said_twins[1]) == twins


def test_where_both_answer_where_more_stop_paying_each_basis_is_named(
    report, golden: Golden
) -> None:
    """The answer table's E' threshold pick and each plan's "stops paying" mark (v4.1 BERT
    on H100: 8 and 16) are said with the basis of each beside the plan."""
    _, html = report
    text = unescape(re.sub(r"<[^>]+>", " ", html))
    for name in ("BERT on H100-SXM5-80GB", "Stable Diffusion on H100-SXM5-80GB"):
        said = re.search(re.escape(name) + r", where more accelerators stop paying: ([^\n]+)", text)
        assert said, name
        assert "counts it plans" in said[1] and "measured system" in said[1]  # both bases
        marks = said[1].split(". ")[0]  # the counts each marks; the bases' own numbers follow
        golden.check(VIEW, f"{name}: where more stop paying", marks)


def test_commands_in_the_pages_sentences_are_code_and_their_text_stays_escaped() -> None:
    """A walk saw the page's backticks raw (`gpuscale plan --round ...`): each span is a
    ``<code>``, the text around it and in it escaped as autoescape escapes it."""
    from markupsafe import Markup

    from gpuscale.report.page import code_spans

    said = code_spans(f"run `gpuscale plan -w bert` for {EVIL} and `{EVIL}`")
    assert isinstance(said, Markup)
    assert said.count("<code>") == 2 and "<script>" not in said and "`" not in said
    assert code_spans(7) == 7 and code_spans("no span") == "no span"


def test_a_report_lists_the_data_problems_of_its_benchmarks() -> None:
    """A one-benchmark report lists that benchmark's ingest problems, not the round's
    others (the page's heading says how many the rounds had); over every workload of
    the round, each problem is listed once."""
    from gpuscale.report.page import problems_shown, render_html

    tables = load_round("v4.1")
    workloads = sorted(tables.scores["workload"].unique())
    listed = [problems_shown(tables, [w]) for w in workloads]
    assert sum(len(p) for p in listed) == len(tables.problems) > 0
    bert = problems_shown(tables, ["bert"])
    assert 0 < len(bert) < len(tables.problems)
    assert bert["path"].str.split("/").str[3].eq("bert").all()
    html = render_html(tables, [], None, AnalysisOptions(), all_figures=False, workloads=["bert"])
    table = html[html.index('id="problems"') :]
    assert table.count("<tr><td>v4.1</td>") == len(bert)
    assert f"({len(bert)}, of the benchmarks reported; {len(tables.problems)} in" in table


def test_each_systems_table_says_whom_its_speedup_and_e_are_against(report) -> None:
    """The workload's figures set each family against its own smallest system; its table,
    by the study rule, against one reference across families (BERT's: 2 x RTX A5000, an
    H100 at E' 18 there): the table's summary says which, where the figures' differ."""
    from gpuscale.analysis import analyze
    from gpuscale.report.page import reference_said

    _, html = report
    said = [
        unescape(s)
        for s in re.findall(r'<details class="systems"><summary>(.*?)</summary>', html, re.S)
    ]
    assert len(said) == 2, said
    assert all("against the study rule's reference, not each family's own" in s for s in said)
    (bert,) = analyze(load_round("v4.1"), ["bert"], AnalysisOptions(n_boot=100, reference="family"))
    assert reference_said(bert.table).endswith("each family's own reference, as the figures")


def test_the_energy_result_reads_as_gpuscale_energy_shows_it(tmp_path) -> None:
    """v4.1's one power submission (Dell, 64 x H100, Llama2 70B LoRA: 16,384.27 kJ):
    `gpuscale energy` shows 16,380 kJ and its power scope, AC (as its logs state it); the
    report wrote 16,384 kJ and no scope."""
    from gpuscale.analysis.energy_per_result import energy_view
    from gpuscale.report.rounds_section import energy_section
    from gpuscale.report.svg import FigureFiles

    tables = load_round("v4.1")
    section = energy_section(tables, ["llama2_70b_lora"], FigureFiles(tmp_path))
    (said,) = [f for f in section.findings if "W per accelerator" in f]
    assert "16,380 kJ (4.6 kWh) in 5.05 min" in said and "power scope AC" in said
    (headline,) = energy_view(tables, ["llama2_70b_lora"]).headline  # the CLI's words
    assert "16,380 kJ" in headline and "power scope AC" in headline


def test_the_trends_say_each_rounds_time_is_at_its_own_most_common_count(tmp_path) -> None:
    """BERT's H100s from v4.1 to v5.0: 5.39 min on 8, then 0.887 min on 64 (the only
    v5.0 system); the sentence said no more, read as 6x faster, the counts told apart by
    nothing but 'on 8', 'on 64'. It names the basis: each round's most common count."""
    from gpuscale.report.rounds_section import trends_section
    from gpuscale.report.svg import FigureFiles

    section = trends_section(load_round("v4.1", "v5.0"), ["bert"], FigureFiles(tmp_path))
    assert section is not None
    (bert,) = section.findings
    assert bert.startswith(
        "BERT (each family's best time at its most common count in each round): "
    )
    assert "H100-SXM5-80GB: 5.39 min on 8 in v4.1, 0.887 min on 64 in v5.0" in bert


def test_the_header_names_each_rounds_ruleset() -> None:
    """A reader citing the scores needs the rules they were scored by: v0.7's 0.7.0 and
    v5.0's 5.0.0, a round mlperf-logging has no rules for the newest earlier, said so."""
    from gpuscale.report.page import rounds_said

    assert rounds_said(["v0.7", "v5.0"]) == "rounds v0.7 (ruleset 0.7.0) and v5.0 (ruleset 5.0.0)"
    later = rounds_said(["v9.9"])
    assert later.startswith("round v9.9 (ruleset ") and later.endswith(", the newest earlier one)")
    assert rounds_said(["my-results"]) == "round my-results"


def test_a_users_folder_is_not_called_official_scores() -> None:
    """Published rounds' scores are the official ones (they equal MLCommons' summarizer);
    a user's folder is scored by the same rule but its scores are no official result."""
    from gpuscale.report.page import scores_said

    published = scores_said(["v4.1"])
    assert (
        published == "Official MLPerf Training time-to-train scores of round v4.1 (ruleset 4.1.0)"
    )
    for rounds in (["my-results (v4.1)", "v4.1"], ["my-results"]):
        said = scores_said(rounds)
        assert "Official" not in said and said.startswith(
            "MLPerf Training time-to-train scores, by the official rule, of round"
        ), said
    assert "my-results (v4.1) (your folder, ruleset 4.1.0)" in scores_said(["my-results (v4.1)"])

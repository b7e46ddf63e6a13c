"""The report page: each workload's section and its table rows, the answer table at the
top, and the page itself rendered from the template (autoescaped: text from the logs can
never become markup). ``gpuscale.report.html`` computes what goes in it."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from itertools import zip_longest
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

import pandas as pd
from jinja2 import Environment, PackageLoader, select_autoescape
from markupsafe import Markup, escape

from gpuscale.analysis.analyze import AnalysisOptions, WorkloadAnalysis
from gpuscale.analysis.answers import answers, edge_words
from gpuscale.analysis.crossing import FEWEST, MOST
from gpuscale.mlperf.rules import ruleset_for
from gpuscale.quantities import (
    counted,
    filled,
    format_minutes,
    joined,
    named,
    noun_for,
    number_range,
    of_the,
    span,
)
from gpuscale.report.republished_words import AnswerRow, Firsts, answer_since, key_of
from gpuscale.report.rounds_section import ExtraSection
from gpuscale.report.system_names import is_reference, system_cells
from gpuscale.report.text_table import columns_text
from gpuscale.report.workload_figures import RenderedFigure
from gpuscale.tables import RoundTables, display_name
from gpuscale.tables.republished import counted_in_analyses, is_same_runs_copy, runs_counted_once
from gpuscale.tables.workloads import own_folder

if TYPE_CHECKING:
    from gpuscale.report.bench_section import BenchSection
    from gpuscale.report.recommend import Recommendation

TABLE_COLUMNS = {
    "submitter": "Submitter",
    "system_name": "System",
    "accelerator_family": "Accelerator",
    "accelerators": "N",
    "time_to_train_min": "Time (min)",
    "ci": "95% CI (min)",
    "speedup": "Speedup",
    "efficiency": "E",
    "normalized_efficiency": "E'",
    "superlinear": "E' > 1 because",
    "accelerator_hours": "Acc.-hours",
    "cluster": "Cluster",
    "pareto": "Pareto",
}


FIRST_PUBLISHED = "First published"


@dataclass(frozen=True, slots=True)
class Section:
    anchor: str
    title: str
    findings: list[str]
    figures: list[RenderedFigure]
    rows: list[dict[str, object]]
    reference_ids: set[str] = field(default_factory=set)
    not_drawn: list[str] = field(default_factory=list)  # FIGURE_NAMES of those left out
    # the table's columns where they differ from the page's (a First published column)
    columns: list[str] = field(default_factory=list)
    first_note: str = ""  # what the First published column says, where it is shown
    reference_said: str = ""  # whom the table's speedup, E and E' are against


_CODE_SPAN = re.compile(r"`([^`\n]+)`")
T = TypeVar("T")


def code_spans(value: T) -> T | Markup:
    """A text's `backtick` spans (a command to run: ``gpuscale plan --round ...``) as
    ``<code>``, the rest escaped as autoescape escapes it; anything else as it is. The
    page's every ``{{ }}`` passes here: its sentences name commands as the terminal's do,
    and a page showed their backticks raw."""
    if not isinstance(value, str) or isinstance(value, Markup) or "`" not in value:
        return value
    parts = _CODE_SPAN.split(value)
    return Markup("").join(
        Markup("<code>{}</code>").format(p) if k % 2 else escape(p) for k, p in enumerate(parts)
    )


def section_rows(table: pd.DataFrame, firsts: Firsts | None = None) -> list[dict[str, object]]:
    """A workload's systems table; ``firsts``: its results first published in an earlier
    round (``report.republished_words.earlier_firsts``), whose row says that round in the
    First published column (the rows the overview's "Republished results" counts)."""
    rows = []
    firsts = firsts or {}
    cells = system_cells(table)
    records = table.to_dict("records")
    numbers = columns_text(records, [c for c in TABLE_COLUMNS if c != "ci"])
    for r, said, cell, ref in zip(records, numbers, cells, is_reference(table), strict=True):
        row = {TABLE_COLUMNS[col]: text for col, text in said.items()}
        row["System"] = cell
        row["Submitter"] = r["submitter"]
        row["Accelerator"] = r["accelerator_family"]
        low, high = r["time_to_train_min_ci_low"], r["time_to_train_min_ci_high"]
        row["95% CI (min)"] = number_range(low, high)
        row["_reference"] = bool(ref)
        row[FIRST_PUBLISHED] = firsts.get(key_of(r), "")
        rows.append(row)
    return rows


def section_columns(rows: list[dict[str, object]], round_name: str) -> tuple[list[str], str]:
    """The columns of a workload's systems table (with First published after System
    where a row has it) and the line saying what that column holds ("" without it)."""
    marked = sum(bool(r.get(FIRST_PUBLISHED)) for r in rows)
    if not marked:
        return [], ""
    columns = list(TABLE_COLUMNS.values())
    columns.insert(columns.index("System") + 1, FIRST_PUBLISHED)
    results = counted(len(rows), "result")
    if own_folder(round_name) is not None:  # a user's folder publishes nothing
        said = (
            f"{FIRST_PUBLISHED}: the round that published the result, for the {marked} of "
            f"your folder {round_name}'s {results} a round published (the same runs); "
            "empty for the others."
        )
    else:
        said = (
            f"{FIRST_PUBLISHED}: the round that first published the result, for the "
            f"{marked} of {round_name}'s {results} published again "
            f"unchanged (the same runs); empty for those first published in {round_name}."
        )
    return columns, said


def reference_said(table: pd.DataFrame) -> str:
    """Whom a systems table's speedup, E and E' are against (its ``reference_rule``), and
    where that differs from the workload's figures (each family against its own)."""
    rules = list(dict.fromkeys(table["reference_rule"].dropna().astype(str)))
    if rules == ["family"]:
        return "speedup, E and E' against each family's own reference, as the figures"
    whom = "the study rule's reference" if rules == ["study"] else f"the reference {joined(rules)}"
    return (
        f"speedup, E and E' against {whom}, not each family's own as in the figures: "
        "across families E' measures hardware too"
    )


RECOMMEND_HEADERS = ("Workload", "Recommended", "95% range", "Why not more")


def recommendation_rows(recs: Sequence[Recommendation]) -> list[dict[str, str]]:
    """The first screen's table: per workload one recommended count within the family
    that ran the most counts (``gpuscale.report.recommend``), the range its 95% intervals allow,
    and the factor of E' that falls at the next count (the system in ``_title``)."""
    rows = []
    for rec in recs:
        row = {"Workload": f"{display_name(rec.workload)} ({rec.round})", "Family": rec.family}
        row["_title"] = f"within {rec.family}"
        if rec.accelerators is None:
            rows.append(row | {"Recommended": "none", "Why not more": rec.why_none})
            continue
        row["_count"] = f"{rec.accelerators:,}"
        # the most measured with none above: "why not more" says it (the largest count)
        said_there = rec.edge == MOST and rec.next_accelerators is None and not rec.passed_over
        row["_edge"] = "" if said_there else EDGE_WORDS.get(rec.edge, "")
        row["Recommended"] = row["_count"] + filled(", {}", row["_edge"])
        row["_title"] = (
            f"{named(rec.submitter, rec.system_name)}, {rec.accelerators:,} x {rec.family}, "
            f"{format_minutes(rec.time_min)}"
        )
        low, high = rec.count_low, rec.count_high
        row["_range"] = span(f"{low:,}", f"{high:,}")
        row["_range_edge"] = _range_edge_words(rec)
        row["95% range"] = row["_range"] + filled(", {}", row["_range_edge"])
        row["Why not more"] = _why_not_more(rec)
        rows.append(row)
    return rows


# A pick at an end of the counts its family ran: the answer may lie beyond the data
EDGE_WORDS = {FEWEST: "the fewest measured", MOST: "the most measured"}
# Where the 95% range (not the pick) reaches an end
RANGE_EDGE_WORDS = {FEWEST: "from the fewest measured", MOST: "to the most measured"}


def _range_edge_words(rec: Recommendation) -> str:
    """``to the most measured``: the ends of the family's counts the 95% range reaches
    beyond the pick (an end at the pick is said with the pick)."""
    return joined(RANGE_EDGE_WORDS[e] for e in rec.range_edges if e != rec.edge)


def outlier_lines(recs: Sequence[Recommendation]) -> list[str]:
    """Each recommended family's outliers (``gpuscale.analysis.outliers``), a line each:
    ``BERT (v4.1), B200: Acme sys: 2.49x the median of ...``."""
    return [
        f"{display_name(rec.workload)} ({rec.round}), {rec.family}: {line}"
        for rec in recs
        for line in rec.outliers
    ]


def report_headline(
    recs: Sequence[Recommendation], bench: BenchSection | None = None
) -> tuple[str, ...]:
    """What the report's first screen leads with, a line each: your hardware's answer
    (``bench.answer``) where the page has one, else the recommended count of each
    workload, from the rows the page's table shows (:func:`recommendation_rows`)."""
    if bench is not None and bench.answer:
        return tuple(bench.answer)
    lines = []
    for row in recommendation_rows(recs):
        if row["Recommended"] == "none":
            lines.append(f"{row['Workload']}: none within {row['Family']}: {row['Why not more']}")
        else:
            lines.append(
                f"{row['Workload']}: {row['_count']} accelerators within {row['Family']}"
                f"{filled(', {}', row['_edge'])} (95% range {row['95% range']}; "
                f"why not more: {row['Why not more']})"
            )
    return tuple(lines)


def _why_not_more(rec: Recommendation) -> str:
    """The factor of E' that falls most at the next count, first, then the other:
    ``throughput x0.82 at 16 (convergence x1.00)``; whose systems the ratios are between
    (``Dell's own 32 and 64``, or across submitters, which); the counts passed over (only
    outliers ran them), with why."""
    passed = _passed_over(rec)
    if rec.next_accelerators is None:
        if passed:
            return f"not decided: above {rec.accelerators:,} only outliers ran: {passed}"
        return "the largest count the family ran"
    said = _factors(rec)
    if rec.own_comparison:
        said += f"; {rec.own_comparison}'s own {rec.accelerators:,} and {rec.next_accelerators:,}"
    elif rec.crosses_submitters:
        first, then = rec.compared
        said += (
            f"; across submitters: {first} at {rec.accelerators:,}, "
            f"{then} at {rec.next_accelerators:,}"
        )
    return said + filled("; passed over, only outliers there: {}", passed)


def _passed_over(rec: Recommendation) -> str:
    """The counts passed over, by submitter and the outlier each rests on: ``Slow at 16
    and 32 (2.00x the median of B200's other submitters at 8)``."""
    by: dict[tuple[str, str], list[int]] = {}
    for n, submitter, why in rec.passed_over:
        by.setdefault((submitter, why), []).append(n)
    return "; ".join(
        f"{submitter} at {joined(f'{n:,}' for n in counts)} ({why})"
        for (submitter, why), counts in by.items()
    )


def _factors(rec: Recommendation) -> str:
    """The two factors of E' at the next count over the pick's, the deciding one first;
    where the two read alike at two decimals, both said to limit it (RetinaNet v4.1:
    convergence 0.866 against throughput 0.868 is no winner)."""
    ratios = {"throughput": rec.throughput_ratio, "convergence": rec.convergence_ratio}
    n = f"{rec.next_accelerators:,}"
    if len(rec.unread) == len(ratios):  # neither factor read: E' itself, and what is not
        return (
            f"E' x{rec.next_e_ratio:.2f} of the best at {n} ({joined(rec.unread)} factors "
            f"unread: {_why_unread(rec)})"
        )
    read = [name for name in ratios if name not in rec.unread]
    first = rec.decides or read[0]
    other = next(name for name in ratios if name != first)
    if other in rec.unread:
        return f"{first} x{ratios[first]:.2f} at {n} ({other} unread)"
    shown = f"{ratios[first]:.2f}", f"{ratios[other]:.2f}"
    if shown[0] == shown[1]:  # alike to the digits shown: neither decides alone
        limit = "both limit it: " if ratios[first] < 1 and shown[0] != "1.00" else ""
        return f"{limit}throughput and convergence each x{shown[0]} at {n}"
    return f"{first} x{shown[0]} at {n} ({other} x{shown[1]})"


def _why_unread(rec: Recommendation) -> str:
    """Why neither factor was read, from the compared systems' fields (``Recommendation``'s
    ``unread_*``): a count read but flagged as impossible (how many of the workload's
    results are; each flag's why is in the workload's table), what the logs lack, no
    expected count."""
    parts = []
    if rec.unread_flag:
        flagged, results = rec.flagged_results
        parts.append(
            f"the logged samples to converge are flagged as impossible for "
            f"{of_the(flagged, results, 'result')}"
        )
    if rec.unread_lacking:
        parts.append(f"no {joined(rec.unread_lacking, 'or')} in the logs of the systems compared")
    if rec.no_expected and parts:  # the expected count needs the batch and the round's RCPs
        batch = "global batch" in rec.unread_lacking
        parts.append(f"no expected count{'' if batch else ' at their global batch'} either")
    return "; ".join(parts) or "no samples to converge for the systems compared"


ANSWER_HEADERS = ("Workload", "Within", "Fastest", "Knee", "Speed x efficiency", "E' threshold")


def answer_rows(
    results: list[WorkloadAnalysis], firsts: Sequence[Firsts] = ()
) -> list[dict[str, str]]:
    """The report's first table: per workload and scope, the count each criterion picks
    (``gpuscale.analysis.answers``), with the system on hover; ``firsts``: each result's
    systems first published in an earlier round (``report.republished_words``)."""
    rows = []
    for result, earlier in zip_longest(results, firsts[: len(results)], fillvalue={}):
        frame = answers(result)
        for scope, part in frame.groupby("scope", sort=False):
            row = {"Workload": f"{display_name(result.workload)} ({result.round})"}
            row["Within"] = str(scope)
            for header, pick in zip(ANSWER_HEADERS[2:], part.itertuples(), strict=True):
                row[header] = _answer_cell(pick, answer_since(result.table, earlier, pick))
            rows.append(row)
    return rows


def _answer_cell(pick: AnswerRow, since: str = "") -> str:
    """One criterion's answer: the count and the system (``since``: where it was first
    published, if in an earlier round), or why there is none; a pick that compares
    hardware rather than scaling says so in the same cell."""
    if pd.isna(pick.accelerators):
        return f"n/a ({pick.note})" if pick.note else "none"
    text = (
        f"{int(pick.accelerators):,} ({named(pick.submitter, pick.system_name)}, "
        f"{format_minutes(pick.time_to_train_min)}{since})"
    )
    return text + filled("; caution: {}", pick.note) + filled("; {}", edge_words(pick))


def problems_shown(tables: RoundTables, workloads: Sequence[str] | None) -> pd.DataFrame:
    """The ingest problems of ``workloads`` (None: all): a problem under a round's
    ``Org/results/system/benchmark`` of a benchmark folder that holds them there, or in
    ``Org/systems/system.json`` of a system that ran them, in the round's RCP file of a
    benchmark folder of them (``rcp_checker/training_4.1.0/rcps_gpt3.json``); one of no
    such path is kept."""
    problems = tables.problems
    if workloads is None or problems.empty:
        return problems
    scores = tables.scores[tables.scores["workload"].isin(list(workloads))]
    folders = set(zip(scores["round"], scores["benchmark"], strict=True))
    systems = set(zip(scores["round"], scores["org"], scores["system_id"], strict=True))
    named = set(zip(scores["round"], scores["workload"], strict=True))

    def kept(round_name: str, path: str) -> bool:
        parts = path.split("/")
        if len(parts) >= 4 and parts[1] == "results":
            return (round_name, parts[3]) in folders
        if len(parts) == 3 and parts[1] == "systems":
            return (round_name, parts[0], Path(parts[2]).stem) in systems
        if len(parts) == 3 and parts[0] == "rcp_checker":
            name = Path(parts[2]).stem.removeprefix("rcps_")  # a folder's or workload's
            return (round_name, name) in folders or (round_name, name) in named
        return True

    keep = [kept(str(r), str(p)) for r, p in zip(problems["round"], problems["path"], strict=True)]
    return problems[keep]


def rounds_said(rounds: Sequence[str]) -> str:
    """``round v4.1 (ruleset 4.1.0)``: the rounds and the mlperf-logging ruleset each is
    scored by (``ruleset_for``: the newest earlier one where the round's own is unknown,
    said so), a user's folder said to be theirs; a name that is no round's, alone."""

    def one(name: str) -> str:
        ruleset, other = ruleset_for(name)
        if ruleset is None:
            return name
        yours = "your folder, " if own_folder(name) else ""  # not the published round
        return f"{name} ({yours}ruleset {ruleset}{', the newest earlier one' if other else ''})"

    return f"{noun_for(len(rounds), 'round')} {joined(one(r) for r in rounds)}"


def scores_said(rounds: Sequence[str]) -> str:
    """What the header's scores are: ``Official MLPerf Training time-to-train scores of
    round v4.1 (ruleset 4.1.0)`` where every round is one MLCommons published; a user's
    folder (or a name that is no round's) is scored by the official rule but is no official
    score, so then ``MLPerf Training time-to-train scores, by the official rule, of ...``."""
    published = all(not own_folder(r) and ruleset_for(r)[0] is not None for r in rounds)
    what = (
        "Official MLPerf Training time-to-train scores"
        if published
        else ("MLPerf Training time-to-train scores, by the official rule,")
    )
    return f"{what} of {rounds_said(rounds)}"


def render_html(
    tables: RoundTables,
    sections: list[Section],
    overview_figure: RenderedFigure | None,
    options: AnalysisOptions,
    bench: BenchSection | None = None,
    extras: list[ExtraSection] | None = None,
    answers: list[dict[str, str]] | None = None,
    notes: Sequence[str] = (),
    all_figures: bool = True,
    recommendations: Sequence[Recommendation] = (),
    study_overview: RenderedFigure | None = None,
    workloads: Sequence[str] | None = None,
) -> str:
    """The report page (autoescaped: text from the logs can never become markup).
    ``all_figures``: whether every figure was drawn (else the page says how to);
    ``workloads``: those reported, whose data problems it lists (None: every one)."""
    env = Environment(
        loader=PackageLoader("gpuscale", "report/templates"),
        autoescape=select_autoescape(default=True),
        finalize=code_spans,
    )
    here = Path(__file__).parent / "templates"
    rounds = sorted(tables.scores["round"].unique()) or ["(none)"]
    shown = problems_shown(tables, workloads)
    problems = shown.sort_values(["round", "kind", "path"]).to_dict("records")
    return env.get_template("report.html").render(
        title=f"gpuscale report: MLPerf Training {', '.join(rounds)}"
        if len(tables.scores)
        else "gpuscale report: your hardware",
        generated=datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        scores_said=scores_said(rounds),
        sections=sections,
        overview=overview_figure,
        bench=bench,
        extras=extras or [],
        answers=answers or [],
        recommended=recommendation_rows(recommendations),
        outliers=outlier_lines(recommendations),
        recommend_headers=RECOMMEND_HEADERS,
        threshold=next((r.threshold for r in recommendations), options.threshold),
        study_overview=study_overview,
        answer_headers=ANSWER_HEADERS,
        columns=[c for c in TABLE_COLUMNS.values()],
        options=options,
        problems=problems,
        problems_read=len(tables.problems),
        n_systems=_systems_said(tables),
        # each result and its runs once, as `gpuscale dataset` counts them, so that the
        # report's counts and the dataset's agree
        n_runs=f"{len(runs_counted_once(tables.runs, tables.scores)):,}",
        n_scored=f"{int(counted_in_analyses(tables.scores)['time_to_train_min'].notna().sum()):,}",
        n_twins=int(is_same_runs_copy(tables.scores).sum()),
        notes=list(notes),
        all_figures=all_figures,
        css=(here / "report.css").read_text(),
        script=(here / "report.js").read_text(),
    )


def _systems_said(tables: RoundTables) -> str:
    """``83 systems``: those with a result counted once, as `gpuscale dataset` counts them
    (not every system description: some have no result), and the descriptions with no
    result at all said apart (v4.1: Oracle's three)."""
    key = ["round", "org", "system_id"]
    results = counted_in_analyses(tables.scores)[key].drop_duplicates()
    described = {tuple(k) for k in tables.systems[key].itertuples(index=False)}
    bare = len(described - {tuple(k) for k in tables.scores[key].itertuples(index=False)})
    more = filled(" and {:,} described without a result", bare)
    return f"{counted(len(results), 'system')}{more}"

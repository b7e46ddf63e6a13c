"""The self-contained HTML report: one file, no external resources, every log string escaped.

``build_report`` runs the analysis, draws the figures (also written as SVG, and PNG on
request, beside the HTML, named ``<round>_<benchmark>_<figure>``), writes the findings in
words and renders ``index.html`` (``gpuscale.report.page``) with the figures inline (hover
a point for the system's name), sortable tables and the data problems found at ingest. By
default it draws the figures that carry the answer (:data:`FIRST_FIGURES` per workload, the
like-with-like overview of the first screen and, where a workload mixes accelerator
families against one reference, the study's overview across hardware); the others,
~0.15 CPU-s each, with ``all_figures`` (each section names those it leaves out).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from concurrent.futures import Future
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

import pandas as pd

from gpuscale.analysis.analyze import (
    AnalysisOptions,
    NothingAnalysedError,
    WorkloadAnalysis,
    nothing_analysed,
    workload_pairs,
)
from gpuscale.analysis.divisions import left_out, open_analysed, uncounted
from gpuscale.mlperf.earlier import first_published
from gpuscale.names import resolve_workloads, workloads_in
from gpuscale.quantities import agreeing, of_the
from gpuscale.report.analysed import analyse, any_to_draw, cached
from gpuscale.report.findings import workload_findings
from gpuscale.report.gc_tuning import fewer_collections
from gpuscale.report.page import (
    Section,
    answer_rows,
    reference_said,
    render_html,
    report_headline,
    section_columns,
    section_rows,
)
from gpuscale.report.plan_bases import with_bases
from gpuscale.report.plan_section import PlanSection, plan_data, plan_section
from gpuscale.report.pool import Later, figure_executor
from gpuscale.report.recommend import recommend
from gpuscale.report.republished_words import earlier_firsts
from gpuscale.report.rounds_section import ExtraSection, energy_section, trends_section
from gpuscale.report.study_section import study_section
from gpuscale.report.svg import FigureFiles
from gpuscale.report.workload_figures import (
    FIGURE_NAMES,
    FIRST_FIGURES,
    overview_caution,
    overview_task,
    prepare_drawing,
    study_overview_task,
)
from gpuscale.sizes import number_or_none
from gpuscale.sources import check_owner, write_atomically
from gpuscale.sources.disk_cache import Cache
from gpuscale.tables import BENCH_COLUMNS, RoundTables, display_name
from gpuscale.tables.bench_schema import BENCH_LATER_COLUMNS
from gpuscale.tables.checks import check_columns, check_frame, check_round_tables
from gpuscale.tables.commands import suggested_command
from gpuscale.tables.views import rejected_notes

if TYPE_CHECKING:
    from gpuscale.advice.request import AdviceRequest
    from gpuscale.report.bench_section import BenchSection


def build_report(
    tables: RoundTables,
    workloads: list[str],
    out_dir: Path,
    options: AnalysisOptions | None = None,
    *,
    workers: int = 1,
    bench: pd.DataFrame | None = None,
    bench_path: Path | None = None,
    bench_skipped: Sequence[str] = (),
    advice: AdviceRequest | None = None,
    notes: Sequence[str] = (),
    png: bool = False,
    cache: Path | None = None,
    on_missing: Callable[[str], None] | None = None,
    all_figures: bool = False,
    on_headline: Callable[[tuple[str, ...]], None] | None = None,
    sources: Sequence[str] = (),
) -> Path:
    """Analyse, draw and write the report into ``out_dir``; return the HTML file's path.

    The folder is written whole or not at all (``gpuscale.sources.write_atomically``; raises
    ``OutputError``); figures of an earlier report there are replaced, not left stale, as
    is a report of other rounds (a view they redraw); another command's folder is refused,
    before any work.

    ``bench``: a ``gpuscale bench`` results table, or its records as
    ``pd.read_json(path, lines=True)`` reads them (as ``gpuscale.advise`` takes them), for
    the "your hardware" section
    (``bench_path``: the file it was read from, named where no run of it succeeded;
    ``bench_skipped``: its lines the loader skipped, with why, ``BenchFile.skipped``,
    listed in the section);
    ``advice``: an advice request whose advice on ``bench`` is added to it (computed
    before the section is drawn: ``report.bench_advice``).
    ``workers``: processes in all; with more than one, ``workers - 1`` forked processes
    draw the figures (and the energy, trends and plan sections) while this one analyses,
    each figure as soon as its data exists (the CLI uses every core). ``notes``: sentences for the
    top of the page (e.g. the rounds lacking a workload asked for). ``png``: write each
    figure as PNG too (SVG only by default: a PNG costs more than the SVG to draw).
    ``cache``: a folder where drawn figures, analyses and their words are kept for the
    next report made from the same data, options and code (``gpuscale.sources.disk_cache``);
    none by default.
    ``on_missing`` is called with a sentence for each part asked for that the report
    could not give (the advice, with why: what ``gpuscale advise --bench`` says; nothing
    measured, the advice's absence said with it, once).
    ``all_figures``: every figure of every section; by default each workload's
    :data:`FIRST_FIGURES` and the overview (each section says which it leaves out).
    ``on_headline`` is called with what the page leads with, a line each
    (``page.report_headline``, from the data its first screen shows), less the lines
    whose reason ``on_missing`` said: a refusal is said once.
    ``sources``: the data arguments ``tables`` was read from, as a command line gives
    them (raw round paths, ``--round NAME``), so that each ``gpuscale plan`` command the
    report names reads the same data; empty: the rounds of ``tables`` by name.
    Its arguments are checked as ``analyze`` checks them (a wrong type is a TypeError
    naming it; a workload none of the tables' is an ``UnknownNameError``); ``out_dir`` a
    path or its text. A report with no workload section and no ``bench`` would hold
    nothing: :class:`NothingToReportError` says why, and ``out_dir`` is left as it was.
    """
    check_round_tables(tables)
    if isinstance(workloads, str) or not all(isinstance(w, str) for w in workloads or []):
        raise TypeError(
            f"workloads must be a list of workload names (e.g. [{workloads!r}]), not {workloads!r}"
        )
    if not isinstance(out_dir, str | os.PathLike):
        raise TypeError(f"out_dir must be a path (a folder), not {type(out_dir).__name__}")
    if options is not None and not isinstance(options, AnalysisOptions):
        raise TypeError(
            f"options must be a gpuscale.analysis.AnalysisOptions, not {type(options).__name__}"
        )
    if bench is not None:  # a results table: read_results' records through bench_table
        check_frame(bench, "bench", "bench")
        # lazy: the bench reader, only for a bench given
        from gpuscale.bench.results import holds_records, records_bench

        if holds_records(bench):  # the file's records, as advise takes them
            loaded = records_bench(bench)
            bench, bench_skipped = loaded.table, (*bench_skipped, *loaded.skipped)
        required = [c for c in BENCH_COLUMNS if c not in BENCH_LATER_COLUMNS]
        check_columns(bench, required, "bench", "bench")  # not a KeyError in the section
    if number_or_none(workers, whole=True) is None:
        raise TypeError(f"workers must be a whole number of processes >= 1, not {workers!r}")
    if workers < 1:  # a count of the right type, out of range
        raise ValueError(f"workers must be a whole number of processes >= 1, not {workers!r}")
    out_dir = Path(out_dir)
    if workloads:  # as `--benchmark` reads them: `BERT`, a typo refused with the closest
        workloads = resolve_workloads(
            workloads, workloads_in(tables.scores), call="build_report({round}, ...)"
        )
    options = options or AnalysisOptions()
    # before the work: refused, not after it (another command's folder; a report of other
    # rounds is replaced, said by ``write_report``)
    check_owner(out_dir, "report", tables.rounds, replaces=True)
    warned: list[str] = []  # the reasons ``on_missing`` says: not said again by on_headline

    def write(folder: Path) -> None:
        out = FigureFiles(folder, png=png, cache=Cache(cache), every=all_figures)
        section = bench_section if bench is not None else None
        html, headline = _draw(tables, workloads, out, options, workers, section, notes, sources)
        (folder / "index.html").write_text(html, encoding="utf-8")
        if on_headline is not None:
            on_headline(tuple(line for line in headline if not any(w in line for w in warned)))

    def bench_section(out: FigureFiles) -> BenchSection | None:
        if bench is None:
            return None
        # lazy: the bench section loads the advice model (~0.3 s), only for --bench
        from gpuscale.report.bench_advice import advice_on_bench
        from gpuscale.report.bench_section import build_bench_section

        computed = None if advice is None else advice_on_bench(bench, advice)
        section = build_bench_section(bench, out, advice=computed, skipped=bench_skipped)
        if section is None or on_missing is None:
            return section
        if not section.rows:  # nothing measured: no advice either, for that one reason
            nor = ", nor the advice asked for" if section.advice_refused else ""
            analyze = suggested_command("analyze", "--bench", bench_path or "FILE")
            n = len(section.failed)
            on_missing(
                f"the report has no measurement of your hardware{nor}: {of_the(n, n, 'run')} "
                f"failed ({analyze} says why {agreeing(n, 'it', 'each')} did)"
            )
        elif section.advice_refused:
            warned.append(section.advice_refused)
            on_missing(f"the report has no advice on your hardware: {section.advice_refused}")
        return section

    with fewer_collections():
        write_atomically(out_dir, write, command="report", sources=tables.rounds, replaces=True)
    return out_dir / "index.html"


def _families_drawn(tables: RoundTables, pairs: list[tuple[str, str]]) -> tuple[str, ...]:
    """The accelerator families of the (round, workload) pairs a report draws: each is
    styled among all of them, so it keeps one colour and marker in every figure."""
    scores = tables.scores
    if scores.empty or "accelerator_family" not in scores:
        return ()
    rows = pd.Series(list(zip(scores["round"], scores["workload"], strict=True))).isin(pairs)
    return tuple(
        sorted(scores.loc[rows.to_numpy(bool), "accelerator_family"].dropna().astype(str).unique())
    )


def _draw(
    tables: RoundTables,
    workloads: list[str],
    out: FigureFiles,
    options: AnalysisOptions,
    workers: int,
    bench_section: Callable[[FigureFiles], BenchSection | None] | None,
    notes: Sequence[str] = (),
    sources: Sequence[str] = (),
) -> tuple[str, tuple[str, ...]]:
    """Draw the figures into ``out.out_dir`` (every one with ``out.every``) and return
    the page and what it leads with (``page.report_headline``); with no workload
    analysed and no ``bench_section``, :class:`NothingToReportError` instead."""
    has_scores = len(tables.scores) > 0
    names = list(FIGURE_NAMES) if out.every else list(FIRST_FIGURES)
    pairs = workload_pairs(tables, workloads)
    out = replace(out, families=_families_drawn(tables, pairs))
    rounds = sorted(tables.scores["round"].unique())
    source = out.cache.key("tables", tables)  # ~5 ms, once
    with figure_executor(workers) as pool:
        # Work for the worker at once (forking it: it inherits the tables): matplotlib
        # imported while this process analyses, where a figure will be drawn; then each
        # workload's figures as soon as its analysis is done: both cores busy from here.
        if any_to_draw(out, source, pairs, names, options):
            pool.submit(prepare_drawing)
        extra_work = (
            [
                (energy_section, (tables, workloads, out)),
                (trends_section, (tables, workloads, out)),
                (_plans, (tables.scores, workloads, out, rounds, options.threshold, sources)),
            ]
            if has_scores
            else []
        )
        # the energy, trends and plan sections draw only with every figure: the worker's
        # then; else words and tables, written here (later) while the worker draws
        start = pool.submit if out.every else Later
        extras = [start(fn, *args) for fn, args in extra_work]
        analysed = analyse(tables, pairs, options, out, pool, names, source)
        results, bases = analysed.results, analysed.bases
        if not results and bench_section is None:  # a page of nothing: refused, as analyze
            why = nothing_analysed(tables, workloads, options)
            raise NothingToReportError(f"nothing to report, so no report was written: {why}")
        recs = [recommend(r) for r in results]  # the first screen's answer, and its figure's
        overview_future = (
            pool.submit(overview_task, (results, out, bases, recs)) if results else None
        )
        # the study's reading across hardware, further down: where a panel mixes families
        cross = bool(results) and bool(overview_caution(results))
        study_future = pool.submit(study_overview_task, (results, out, bases)) if cross else None
        bench = bench_section(out) if bench_section is not None else None
        # this process's words (and the study's section) while the worker draws; its
        # figures waited for last
        firsts = _firsts(tables, results)
        said = [
            cached(out.cache, "findings", (basis, f), workload_findings, r, *_said_by(options), f)
            for r, basis, f in zip(results, bases, firsts, strict=True)
        ]
        answers = cached(out.cache, "answers", (bases, firsts), answer_rows, results, firsts)
        study = (
            cached(out.cache, "study", bases, study_section, tables, results, options)
            if results
            else None
        )
        made = [f.result() for f in extras]
        drawn = analysed.drawn
        sections = [
            _section(r, drawn, f, names, first)
            for r, f, first in zip(results, said, firsts, strict=True)
        ]
        overview_figure = overview_future.result() if overview_future else None
        if study_future:  # in the study's section; in its own without the study's workloads
            across = study_future.result()
            figure = (across.title, across.svg, across.files)
            study = (
                replace(study, figures=[figure])
                if study
                else ExtraSection("across", "Across hardware (the study's reading)", [], [figure])
            )
        # a plan's "stops paying" beside the answer table's, each basis said
        made = [with_bases(e, results) if isinstance(e, PlanSection) else e for e in made]
        extra_sections = [e for e in (study, *made) if e]
    done = [(r.round, r.workload) for r in results]
    page = render_html(
        tables,
        sections,
        overview_figure,
        options,
        bench,
        extra_sections,
        answers,
        # a workload with no section says its division in its own note (``skipped``)
        notes=[
            *rejected_notes(tables.scores, workloads),  # most of a benchmark unscored today
            *notes,
            *analysed.skipped,
            *left_out(tables.scores, done, options.division, HOW),
            *uncounted(tables.scores, done, options.division),
            *open_analysed((r.round, r.workload, r.table) for r in results),
        ],
        all_figures=out.every,
        recommendations=recs,
        workloads=workloads or None,  # none named: every one
    )
    return page, report_headline(recs, bench)


HOW = "--division {other} or all draws them"


class NothingToReportError(NothingAnalysedError):
    """A report with no workload section and no bench section: not written (the folder
    it was to go to is left as it was), the reasons said as ``analyze`` says them."""


def _firsts(tables: RoundTables, results: list[WorkloadAnalysis]) -> list[dict]:
    """Each workload's results first published in an earlier round (the bundled rounds
    looked at too: ``mlperf.earlier``), for its words."""
    if not results:
        return []
    marked = first_published(tables)
    return [earlier_firsts(r.table, marked) for r in results]  # another division, in the report


def _said_by(options: AnalysisOptions) -> tuple[str, str]:
    """The options the findings in words depend on (``workload_findings``' last two)."""
    return options.reference, options.convergence_basis


def _plans(
    scores: pd.DataFrame,
    workloads: list[str],
    out: FigureFiles,
    rounds: list[str],
    threshold: float,
    sources: Sequence[str] = (),
) -> PlanSection | None:
    """The plan section (``plan_data`` from the cache where an earlier report left it),
    its E' threshold pick at the report's ``threshold``, as the answer table's."""
    basis = (scores, workloads, threshold)
    planned = cached(out.cache, "plans", basis, plan_data, *basis)
    return plan_section(planned, out, basis, rounds, sources)


def _section(
    result: WorkloadAnalysis,
    drawn: dict[tuple[str, str, str], Future],
    findings: list[str],
    names: list[str],
    firsts: dict,
) -> Section:
    """A workload's section of the page (its ``findings`` in words), once its figures
    ``names`` (``drawn``) are done; ``firsts``: its results first published earlier."""
    rows = section_rows(result.table, firsts)
    columns, first_note = section_columns(rows, result.round)
    return Section(
        anchor=f"{result.round}-{result.workload}",
        title=f"{display_name(result.workload)} ({result.round})",
        findings=findings,
        figures=[drawn[result.round, result.workload, name].result() for name in names],
        rows=rows,
        not_drawn=[text for name, text in FIGURE_NAMES.items() if name not in names],
        columns=columns,
        first_note=first_note,
        reference_said=reference_said(result.table) if "reference_rule" in result.table else "",
    )

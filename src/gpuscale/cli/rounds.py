"""Commands over MLPerf rounds: ingest, scores, analyze, energy, trends, report."""

from __future__ import annotations

import webbrowser
from pathlib import Path
from typing import Annotated

import typer

from gpuscale.cli.common import (
    Columns,
    Explain,
    FormatOption,
    app,
    load_tables,
    read_bench,
    read_paths,
    workloads_of,
)
from gpuscale.cli.options import command, option_names
from gpuscale.cli.output import (
    Format,
    err,
    fail,
    fail_on,
    note,
    out,
    print_frame,
    print_json,
    say,
    show,
)
from gpuscale.report.request import ReportRequest
from gpuscale.sources import OutputError
from gpuscale.tables.analysis_request import AnalysisOptions, unused_without_rounds
from gpuscale.tables.commands import quoted_path
from gpuscale.tables.round_requests import DatasetOut, IngestOut, RoundSelection, ScoresOptions


@command(app, "ingest")
def ingest(
    where: IngestOut,
    paths: Annotated[
        list[str] | None,  # text: an empty one refused, not read as `.`
        typer.Argument(
            help="Round folders or archives (.tar .tar.gz .tar.xz .zip).", show_default=False
        ),
    ] = None,
    round_name: Annotated[
        str | None,
        typer.Option(
            "--round-name", "--round", help="Round name when the path does not say it (e.g. v4.1)."
        ),
    ] = None,
) -> None:
    """Read MLPerf Training rounds; write systems, runs, scores and problems tables."""
    from gpuscale.mlperf.bundled import ingest_refused, write_ingested  # lazy: pandas
    from gpuscale.tables.views import ingest_summary

    if refused := ingest_refused(paths, round_name, where.out):  # --round, --out checked
        fail(refused)
    tables = read_paths(list(map(Path, paths or ())), [round_name] if round_name else None)
    with fail_on(OutputError):
        said = write_ingested(tables, where.out)
    lines, problems = ingest_summary(tables)
    say([*lines, said], stderr=True)
    if problems is not None:
        print_frame(err, problems.frame, Format.table, title=problems.title)


@command(app, "dataset", skip=("benchmark",))
def dataset(selection: RoundSelection, where: DatasetOut) -> None:
    """Every bundled round's results and runs as one tidy dataset (CSV and Parquet)."""
    from gpuscale.analysis.dataset import write_dataset  # lazy: pandas, not for --help
    from gpuscale.mlperf.earlier import published

    tables = published(load_tables(selection))  # first_round as the report says it
    with fail_on(OutputError):
        said = write_dataset(tables, where.out)
    say([said], stderr=True)


@command(app, "scores")
def scores(
    *,
    selection: RoundSelection,
    fmt: FormatOption = Format.table,
    options: ScoresOptions,
    columns_asked: Columns = None,
) -> None:
    """Official time-to-train scores (olympic average, minutes), one row per result."""
    from gpuscale.mlperf.earlier import first_published  # lazy: pandas, not for --help
    from gpuscale.tables.views import scores_view

    if options.all_columns and columns_asked is not None:  # never one silently ignored
        fail("--all-columns and --columns each choose the columns: give one of them")
    tables, benchmark = load_tables(selection), selection.benchmark
    workloads = workloads_of(tables, benchmark)[0] if benchmark else None
    show(scores_view(first_published(tables), workloads, options), fmt, columns_asked, nothing=2)


@command(app, "analyze")
def analyze(
    selection: RoundSelection,
    options: AnalysisOptions,
    fmt: FormatOption = Format.table,
    decompose_columns: Annotated[
        bool,
        typer.Option("--decompose", help="Show speedup = throughput factor x convergence factor."),
    ] = False,
    columns_asked: Columns = None,
    explain: Explain = False,
    bench_file: Annotated[
        Path | None,
        typer.Option(
            "--bench",
            help="Analyse `gpuscale bench` results (JSONL) instead of MLPerf rounds "
            "(both when --round or paths are given too).",
        ),
    ] = None,
) -> None:
    """Speedup, efficiency, E', clusters, equilibrium and 95% intervals per benchmark."""
    both = bench_file is not None and selection.asked
    if both and fmt is Format.csv:
        fail("-f csv writes one table: analyse --bench and the rounds in two commands")
    if columns_asked is not None and fmt is Format.json:  # never silently ignored
        fail("--columns chooses a table's columns: for -f table or -f csv, not -f json")
    bench_doc = None  # the rounds read first (a missing path said with a missing bench)
    tables = load_tables(selection, True, bench_file) if both or bench_file is None else None
    if bench_file is not None:
        bench_doc = _analyze_bench(bench_file, fmt, not both, columns_asked, explain)
        if not both:
            if unused := unused_without_rounds(selection, options, decompose_columns):
                note(unused)
            return
    from gpuscale.analysis import terminal as views  # lazy: the analysis stack, pandas
    from gpuscale.analysis.analyze import analyze_asked
    from gpuscale.analysis.document import analysed_json  # lazy: as above
    from gpuscale.mlperf.earlier import first_published

    workloads, _ = workloads_of(tables, selection.benchmark)
    answer = not (explain or decompose_columns or columns_asked)
    # a name that is none, no reference, nothing analysed: one line saying why
    with fail_on(ValueError, options=option_names(AnalysisOptions)):
        analysed = analyze_asked(tables, workloads, options, held=fmt is Format.json or not answer)
    request, results = analysed.options, analysed.results
    note(*analysed.notes)
    scores = first_published(tables)  # first_round as the report says it (shown, not analysed)
    if fmt is Format.json:
        print_json(out, analysed_json(analysed, scores, bench_doc))
    elif fmt is Format.csv:
        show(views.every_result_view(results, scores), fmt, columns_asked)
    else:  # the answer (the count each criterion picks, per workload), or every system's
        # row and finding (--explain, --decompose, --columns)
        shown, said = views.terminal_views(
            results,
            request,
            scores,
            answer=answer,
            decompose=decompose_columns,
            explain=explain and not columns_asked,
        )
        for view in shown:
            show(view, Format.table, columns_asked, rest="--explain or -f csv" if answer else "")
        say(said, wrap=answer or None)  # a short answer's lines folded at the width


def _analyze_bench(
    path: Path, fmt: Format, alone: bool, columns: str | None, whole: bool
) -> dict | None:
    """``analyze --bench``: the bench answer (its break-even first, a short table; ``whole``
    (--explain), ``columns`` or ``-f csv``: the whole table, every note) alone or before the
    rounds', or with ``-f json`` its part of the document (written now when ``alone``, else
    returned); alone, a file of failed runs alone exits 1 after saying why, as bench does."""
    from gpuscale.analysis.bench_answer import analyze_bench  # lazy: the analysis stack, pandas

    answer = fmt is Format.table and not (whole or columns)
    analysed = analyze_bench(read_bench(path).table, answer=answer, document=fmt is Format.json)
    if alone or fmt is not Format.json:
        show(analysed.view, fmt, columns, rest="--explain or -f csv" if answer else "")
    if alone and not analysed.measured:  # every run failed: said, exit 1
        raise typer.Exit(1)
    return analysed.document


@command(app, "report")
def report(
    *,
    selection: RoundSelection,
    bench_file: Annotated[  # before the options that need it (--advise ...)
        Path | None,
        typer.Option(
            "--bench", help="Add a 'your hardware' section from `gpuscale bench` results."
        ),
    ] = None,
    request: ReportRequest,
    open_browser: Annotated[bool, typer.Option("--open", help="Open it in a browser.")] = False,
) -> None:
    """Write the HTML report and figures (default: bundled v4.1, the study's four workloads).

    Exit status: 0 written with all that was asked; 1 written without the advice --advise
    asked for (stderr says why; `advise --bench` exits 2 on that file), with no run of
    --bench measured (`analyze --bench` exits 1) or of a round not read whole; 2 nothing
    (nor with no workload section and no --bench: a report already in --out is kept)."""
    from gpuscale.report.request import refusals, write_report  # lazy: pandas, matplotlib

    tables = load_tables(selection, study=True, bench=bench_file)
    workloads, notes = workloads_of(tables, selection.benchmark, default="study")
    bench = read_bench(bench_file) if bench_file else None
    with fail_on(*refusals()):
        written = write_report(
            request,
            tables,
            workloads,
            bench=bench,
            notes=notes,
            bench_path=bench_file,
            sources=selection.data_arguments(),
        )
    say(written.said)
    say(written.warned, stderr=True)  # what was asked for and could not be given: exit 1
    if open_browser and not webbrowser.open(written.path.resolve().as_uri()):
        note(f"no browser found to open it; open {quoted_path(written.path)} yourself")
    if written.missing:
        raise typer.Exit(1)

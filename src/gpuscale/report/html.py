"""The self-contained HTML report: one file, no external resources, every log string escaped.

``build_report`` runs the analysis, draws the figures (also written as PNG and SVG beside
the HTML, named ``<round>_<benchmark>_<figure>``), writes the findings in words and
renders ``index.html`` with the figures inline (hover a point for the system's name),
sortable tables and the data problems found at ingest.
"""

from __future__ import annotations

import multiprocessing
import os
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

import pandas as pd
from jinja2 import Environment, PackageLoader, select_autoescape

from gpuscale.advise.model import Link
from gpuscale.analysis.analyze import AnalysisOptions, WorkloadAnalysis, analyze
from gpuscale.mlperf.benchmarks import display_name
from gpuscale.mlperf.ingest import RoundTables
from gpuscale.report.bench_section import BenchSection, build_bench_section
from gpuscale.report.figures import FIGURES, overview
from gpuscale.report.findings import workload_findings
from gpuscale.report.rounds_section import ExtraSection, energy_section, trends_section
from gpuscale.report.svg import save_chart

FIGURE_TITLES = {
    "systems": "Systems by accelerator type and count (size: systems sharing a "
    "configuration; colour: cluster)",
    "efficiency": "Normalised efficiency E' against accelerators, equilibrium picks marked",
    "efficiency_ci": "E' with 95% bootstrap intervals",
    "speedup": "Speedup against accelerators, with the ideal line",
    "time_vs_cost": "Time to train against accelerator-hours, Pareto front and equilibrium",
    "decomposition": "Why E' falls: throughput efficiency x convergence factor (larger global "
    "batches needing more samples)",
}
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
    "gpu_hours": "Acc.-hours",
    "cluster": "Cluster",
    "pareto": "Pareto",
}


@dataclass(frozen=True, slots=True)
class RenderedFigure:
    name: str
    title: str
    svg: str
    files: list[str]


@dataclass(frozen=True, slots=True)
class Section:
    anchor: str
    title: str
    findings: list[str]
    figures: list[RenderedFigure]
    rows: list[dict[str, object]]
    reference_ids: set[str] = field(default_factory=set)


def _number(value: object, digits: int = 3) -> str:
    if value is None or (isinstance(value, float) and value != value):
        return ""
    if isinstance(value, bool):
        return "yes" if value else ""
    if isinstance(value, int | float):
        return f"{value:.{digits}g}" if abs(value) < 1e4 else f"{value:,.0f}"
    return str(value)


def _rows(table: pd.DataFrame) -> list[dict[str, object]]:
    rows = []
    for r in table.to_dict("records"):
        row = {
            label: _number(r[col]) if col != "ci" else ""
            for col, label in TABLE_COLUMNS.items()
            if col != "ci"
        }
        row["System"] = r["system_name"]
        row["Submitter"] = r["submitter"]
        row["Accelerator"] = r["accelerator_family"]
        low, high = r["time_to_train_min_ci_low"], r["time_to_train_min_ci_high"]
        row["95% CI (min)"] = f"{low:.3g}-{high:.3g}" if low == low else ""
        row["_reference"] = r["system_id"] == r["reference_system_id"]
        rows.append(row)
    return rows


def _figures(result: WorkloadAnalysis, out_dir: Path) -> list[RenderedFigure]:
    rendered = []
    for name, make in FIGURES.items():
        svg, files = save_chart(make(result), out_dir, f"{result.round}_{result.workload}_{name}")
        rendered.append(RenderedFigure(name, FIGURE_TITLES[name], svg, [f.name for f in files]))
    return rendered


def _section(task: tuple[WorkloadAnalysis, Path, str]) -> Section:
    result, out_dir, rule = task
    return Section(
        anchor=f"{result.round}-{result.workload}",
        title=f"{display_name(result.workload)} ({result.round})",
        findings=workload_findings(result, rule),
        figures=_figures(result, out_dir),
        rows=_rows(result.table),
    )


def _overview(task: tuple[list[WorkloadAnalysis], Path]) -> RenderedFigure:
    results, out_dir = task
    stem = f"{'_'.join(sorted({r.round for r in results}))}_overview_efficiency"
    svg, files = save_chart(overview(results), out_dir, stem)
    return RenderedFigure(
        "overview", "Normalised efficiency of every workload", svg, [f.name for f in files]
    )


def _draw(
    results: list[WorkloadAnalysis], out_dir: Path, rule: str, workers: int
) -> tuple[list[Section], RenderedFigure | None]:
    """Draw every workload's figures and the overview, in ``workers`` processes when
    there is more than one task (drawing is most of a report's time)."""
    tasks = [(r, out_dir, rule) for r in results]
    if not results:
        return [], None
    if workers <= 1 or "fork" not in multiprocessing.get_all_start_methods():
        return [_section(t) for t in tasks], _overview((results, out_dir))
    context = multiprocessing.get_context("fork")
    with ProcessPoolExecutor(max_workers=workers, mp_context=context) as pool:
        overview_future = pool.submit(_overview, (results, out_dir))
        sections = list(pool.map(_section, tasks))
        return sections, overview_future.result()


def build_report(
    tables: RoundTables,
    workloads: list[str],
    out_dir: Path,
    options: AnalysisOptions | None = None,
    *,
    workers: int | None = None,
    bench: pd.DataFrame | None = None,
    advice_link: Link | None = None,
    max_devices: int = 8,
) -> Path:
    """Analyse, draw and write the report into ``out_dir``; return the HTML file's path.

    ``bench``: a ``gpuscale bench`` results table, for the "your hardware" section;
    ``advice_link`` adds the predicted scaling of ``gpuscale advise`` to it.
    """
    options = options or AnalysisOptions()
    out_dir.mkdir(parents=True, exist_ok=True)
    results = analyze(tables, workloads, options) if len(tables.scores) else []
    sections, overview_figure = _draw(
        results,
        out_dir,
        options.reference,
        workers if workers is not None else (os.cpu_count() or 1),
    )
    bench_section = (
        build_bench_section(bench, out_dir, advice_link=advice_link, max_devices=max_devices)
        if bench is not None
        else None
    )
    extras = [energy_section(tables, workloads, out_dir)] if len(tables.scores) else []
    trend = trends_section(tables, workloads, out_dir) if len(tables.scores) else None
    extras += [trend] if trend else []
    html = render_html(tables, sections, overview_figure, options, bench_section, extras)
    path = out_dir / "index.html"
    path.write_text(html, encoding="utf-8")
    return path


def render_html(
    tables: RoundTables,
    sections: list[Section],
    overview_figure: RenderedFigure | None,
    options: AnalysisOptions,
    bench: BenchSection | None = None,
    extras: list[ExtraSection] | None = None,
) -> str:
    """The report page (autoescaped: text from the logs can never become markup)."""
    env = Environment(
        loader=PackageLoader("gpuscale", "report/templates"),
        autoescape=select_autoescape(default=True),
    )
    here = Path(__file__).parent / "templates"
    rounds = sorted(tables.scores["round"].unique()) or ["(none)"]
    problems = tables.problems.sort_values(["round", "kind", "path"]).to_dict("records")
    return env.get_template("report.html").render(
        title=f"gpuscale report: MLPerf Training {', '.join(rounds)}"
        if len(tables.scores)
        else "gpuscale report: your hardware",
        generated=datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        rounds=rounds,
        sections=sections,
        overview=overview_figure,
        bench=bench,
        extras=extras or [],
        columns=[c for c in TABLE_COLUMNS.values()],
        options=options,
        problems=problems,
        n_systems=len(tables.systems),
        n_runs=len(tables.runs),
        n_scored=int(tables.scores["time_to_train_min"].notna().sum()),
        css=(here / "report.css").read_text(),
        script=(here / "report.js").read_text(),
    )

"""The self-contained HTML report: one file, no external resources, every log string escaped.

This first version renders the official scores per workload and the data-quality
problems found at ingest; the scaling analysis and figures plug into the same template.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

import pandas as pd
from jinja2 import Environment, PackageLoader, select_autoescape

from gpuscale.mlperf.benchmarks import display_name
from gpuscale.mlperf.ingest import RoundTables

_COLUMNS = {
    "submitter": "Submitter",
    "system_name": "System",
    "accelerator_family": "Accelerator",
    "accelerators": "Accelerators",
    "runs_converged": "Runs counted",
    "time_to_train_min": "Time to train (min)",
}


@dataclass(frozen=True, slots=True)
class WorkloadSection:
    """One workload's part of the report."""

    workload: str
    title: str
    fastest: str
    rows: list[dict[str, object]]


def _sections(scores: pd.DataFrame, workloads: list[str]) -> list[WorkloadSection]:
    sections = []
    for workload in workloads:
        frame = scores[(scores["workload"] == workload) & scores["time_to_train_min"].notna()]
        if frame.empty:
            continue
        frame = frame.sort_values(["accelerators", "time_to_train_min"])
        best = frame.loc[frame["time_to_train_min"].idxmin()]
        fastest = (
            f"Fastest: {best['submitter']} {best['system_name']} with "
            f"{int(best['accelerators'])} x {best['accelerator_family']} in "
            f"{best['time_to_train_min']:.2f} min; {len(frame)} systems scored."
        )
        rows = [
            {label: _fmt(r[col]) for col, label in _COLUMNS.items()}
            for r in frame.to_dict("records")
        ]
        sections.append(WorkloadSection(workload, display_name(workload), fastest, rows))
    return sections


def _fmt(value: object) -> object:
    if isinstance(value, float):
        return f"{value:.3f}"
    return value


def render_report(tables: RoundTables, workloads: list[str], *, title: str) -> str:
    """The report as one HTML string (autoescaped: log text can never become markup)."""
    env = Environment(
        loader=PackageLoader("gpuscale", "report/templates"),
        autoescape=select_autoescape(default=True),
    )
    template = env.get_template("report.html")
    problems = tables.problems.sort_values(["round", "kind", "path"]).to_dict("records")
    return template.render(
        title=title,
        generated=datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        rounds=sorted(tables.scores["round"].unique()),
        columns=list(_COLUMNS.values()),
        sections=_sections(tables.scores, workloads),
        problems=problems,
        css=(Path(__file__).parent / "templates" / "report.css").read_text(),
    )


def write_report(html: str, out_dir: Path) -> Path:
    """Write ``index.html`` into ``out_dir`` and return its path."""
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / "index.html"
    path.write_text(html, encoding="utf-8")
    return path

"""The report's "your hardware" section, from ``gpuscale bench`` results."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from gpuscale.analysis.bench_scaling import bench_scaling, break_even_params
from gpuscale.report.bench_figures import speedup_by_size, step_breakdown
from gpuscale.report.svg import save_chart

COLUMNS = {
    "model": "Model",
    "params": "Parameters",
    "world_size": "Devices",
    "step_ms_mean": "Step (ms)",
    "samples_per_s": "Samples/s",
    "exposed_comm_ms": "Exposed comm. (ms)",
    "comm_fraction": "Comm. share",
    "speedup": "Speedup",
    "efficiency": "Efficiency",
}


@dataclass(frozen=True, slots=True)
class BenchSection:
    findings: list[str]
    figures: list[tuple[str, str, list[str]]]  # (title, inline svg, file names)
    columns: list[str]
    rows: list[dict[str, str]]


def _fmt(value: object) -> str:
    if isinstance(value, float):
        return "" if value != value else f"{value:.3g}"
    return f"{value:,}" if isinstance(value, int) else str(value)


def bench_findings(scaling: pd.DataFrame) -> list[str]:
    """Sentences: break-even size, best and worst scaling, communication share."""
    out = []
    hosts = ", ".join(sorted({str(h) for h in scaling["hostname"].dropna()})) or "this machine"
    out.append(
        f"{scaling['model'].nunique()} models from {scaling['params'].min() / 1e6:.2g}M "
        f"to {scaling['params'].max() / 1e6:.3g}M parameters on "
        f"{', '.join(map(str, sorted(scaling['world_size'].unique())))} devices "
        f"({hosts}, {', '.join(sorted(scaling['backend'].unique()))})."
    )
    for world in sorted(set(scaling["world_size"]) - {1}):
        at = scaling[(scaling["world_size"] == world) & scaling["speedup"].notna()]
        if at.empty:
            continue
        size = break_even_params(scaling, world)
        slower = at[at["speedup"] < 1]
        if size:
            text = (
                f"On {world} devices the break-even model size is {size / 1e6:.3g}M "
                "parameters: smaller models train slower than on one device."
            )
        elif len(slower) == len(at):
            text = f"On {world} devices every model trains slower than on one device."
        elif slower.empty:
            text = f"On {world} devices every model trains faster than on one device."
        else:
            text = (
                f"On {world} devices {', '.join(slower['model'])} train slower than on "
                f"one device and {', '.join(at[at['speedup'] >= 1]['model'])} faster "
                "(no crossing within one model family to interpolate a break-even size)."
            )
        out.append(text)
        best = at.loc[at["speedup"].idxmax()]
        out.append(
            f"Best scaling on {world}: {best['model']} at {best['speedup']:.2f}x "
            f"(efficiency {best['efficiency']:.0%}); exposed communication is "
            f"{at['comm_fraction'].min():.0%}-{at['comm_fraction'].max():.0%} of the step."
        )
    return out


def build_bench_section(table: pd.DataFrame, out_dir: Path) -> BenchSection | None:
    """Findings, figures (written beside the report) and the table; None without ok runs."""
    scaling = bench_scaling(table)
    if scaling.empty:
        return None
    figures = []
    for make, stem, title in (
        (step_breakdown, "bench_step_breakdown", "Where step time goes, by model size"),
        (speedup_by_size, "bench_speedup_by_size", "Speedup over one device by model size"),
    ):
        if make is speedup_by_size and scaling["world_size"].max() == 1:
            continue
        svg, files = save_chart(make(scaling), out_dir, stem)
        figures.append((title, svg, [f.name for f in files]))
    rows = [
        {label: _fmt(r[col]) for col, label in COLUMNS.items()} for r in scaling.to_dict("records")
    ]
    return BenchSection(bench_findings(scaling), figures, list(COLUMNS.values()), rows)

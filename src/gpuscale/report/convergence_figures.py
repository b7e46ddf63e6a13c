"""Why E' falls, drawn: the decomposition into throughput efficiency x convergence factor,
and samples to converge against the global batch beside what the reference convergence
points predict."""

from __future__ import annotations

import numpy as np
from matplotlib.ticker import FuncFormatter, LogLocator, NullLocator

from gpuscale.analysis.analyze import WorkloadAnalysis, WorkloadTable
from gpuscale.analysis.answers import scaling_family
from gpuscale.analysis.decompose import round_rcp_model, table_basis, within_family
from gpuscale.analysis.metrics import plausible_samples
from gpuscale.mlperf.rcp import rcp_points
from gpuscale.mlperf.rules import ruleset_for
from gpuscale.quantities import format_count, number
from gpuscale.report.figures_common import NothingToDraw, point_labels, title
from gpuscale.report.style import (
    OKABE_ITO,
    REFERENCE_LINE,
    Chart,
    finish,
    log_log,
    new_axes,
    plain_log,
    styled,
)


def missing_convergence(table) -> str:  # type: ignore[no-untyped-def]
    """Why no system of ``table`` has a usable samples-to-converge count beside a global
    batch (none logged, or every one flagged as impossible)."""
    if table["global_batch_size"].isna().all():
        return "the logs give no global batch"
    if table["samples_to_converge"].isna().all():
        return "no system has a samples-to-converge count"
    if plausible_samples(table).isna().all():
        return (
            "every system's samples to converge is flagged as impossible (see the data "
            "problems: another unit, or a logging error)"
        )
    return "no system has both a global batch and a usable samples-to-converge count"


def unit_of(table) -> str:  # type: ignore[no-untyped-def]
    """What the table's samples to converge count (samples, epochs, steps or tokens)."""
    units = (u for u in table.get("convergence_unit", []) if isinstance(u, str) and u)
    return next(units, "samples (or epochs)")


@styled
def decomposition(result: WorkloadTable | WorkloadAnalysis) -> Chart:
    """E' split into throughput efficiency x convergence factor, against accelerators,
    within the family that ran the most counts against its own reference: the systems and the
    reference of the section's sentence on why efficiency falls."""
    family = scaling_family(result.table)
    table = within_family(result.table, family, table_basis(result.table))
    table = table.dropna(subset=["throughput_efficiency", "convergence_factor"])
    if table.empty:
        raise NothingToDraw(
            f"no system of {family} has both factors: {missing_convergence(result.table)}"
        )
    unit = unit_of(table)
    fig, ax = new_axes()
    labels: dict[str, list[str]] = {}
    series = (
        # Two-line labels: one line would run past the figure's right edge.
        ("throughput_efficiency", "throughput efficiency\n(X/X_ref x N_ref/N)", "o"),
        ("convergence_factor", f"convergence factor\n({unit}_ref/{unit})", "s"),
        ("normalized_efficiency", "E'\n(their product)", "D"),
    )
    for k, (column, name, marker) in enumerate(series):
        # E' hollow and larger: where the convergence factor is 1 it equals the
        # throughput efficiency, and a filled marker would hide that point under it
        product = column == "normalized_efficiency"
        sc = ax.scatter(
            table["accelerators"],
            table[column],
            marker=marker,
            s=46 if product else 22,
            alpha=0.85,
            label=name,
            facecolors="none" if product else OKABE_ITO[k],
            edgecolors=OKABE_ITO[k] if product else "white",
            linewidths=1.1 if product else 0.4,
        )
        sc.set_gid(f"points-{k}")
        short = name.partition("\n")[0]
        labels[f"points-{k}"] = [
            # a system lacking this factor has no point here: its tooltip says none
            f"{short} {v:.2f}: {text}" if np.isfinite(v) else f"no {short}: {text}"
            for v, text in zip(table[column].to_numpy(float), point_labels(table), strict=True)
        ]
    ax.axhline(1.0, **REFERENCE_LINE)
    log_log(ax, "factor (log scale)")
    ax.set_title(title(result, f"why E' falls within {family}"))
    return finish(fig, ax, labels)


@styled
def convergence(result: WorkloadTable | WorkloadAnalysis) -> Chart:
    """Samples to converge against the global batch: each system as measured, and what the
    round's reference convergence points (RCPs) predict, E(B) = E_min (1 + B / B_noise)."""
    table = result.table.assign(samples_to_converge=plausible_samples(result.table))
    table = table.dropna(subset=["samples_to_converge", "global_batch_size"])
    if table.empty:
        raise NothingToDraw(missing_convergence(result.table))
    unit = unit_of(table)
    fig, ax = new_axes()
    labels: dict[str, list[str]] = {}
    sc = ax.scatter(
        table["global_batch_size"],
        table["samples_to_converge"],
        color=OKABE_ITO[0],
        s=22,
        alpha=0.85,
        edgecolors="white",
        linewidths=0.4,
        label="systems",
    )
    sc.set_gid("points-0")
    labels["points-0"] = [
        f"{text}, batch {number(b)}"
        for text, b in zip(
            point_labels(table, ("samples_to_converge", f"{{}} {unit} to converge")),
            table["global_batch_size"],
            strict=True,
        )
    ]
    benchmark = next((str(b) for b in table["benchmark"]), result.workload)
    model = round_rcp_model(result.round, benchmark)
    ruleset, _ = ruleset_for(result.round)
    points = rcp_points(ruleset, benchmark) if ruleset else ()
    if model is not None:
        batches = [b for b, _ in points] + table["global_batch_size"].tolist()
        grid = np.geomspace(min(batches) / 1.5, max(batches) * 1.5, 100)
        ax.plot(
            grid,
            [model.samples(b) for b in grid],
            color=OKABE_ITO[1],
            linewidth=1.3,
            label=f"E(B) of RCPs,\nB_noise {number(model.b_noise)}",
        )
    if points:
        ax.scatter(
            [b for b, _ in points],
            [e for _, e in points],
            facecolors="none",
            edgecolors=OKABE_ITO[2],
            marker="s",
            s=28,
            label="RCP means",
        )
    ax.set_xscale("log", base=2)
    # at most 5 powers of 2: a batch is written whole ("131,072"), and seven of them
    # across R-GAT's 4,096-262,144 wrote over each other
    ax.xaxis.set_major_locator(LogLocator(base=2, numticks=5))
    ax.xaxis.set_minor_locator(NullLocator())
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _pos: f"{v:,.0f}"))
    ax.set_xlabel("global batch (log scale)")
    ax.set_yscale("log")
    plain_log(ax.yaxis)
    ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _pos: format_count(v)))
    ax.set_ylabel(f"{unit} to converge (log scale)")
    ax.set_title(title(result, "convergence vs batch"))
    return finish(fig, ax, labels)

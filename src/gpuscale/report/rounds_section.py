"""The report's energy and trends sections (rendered when the data has them)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from gpuscale.analysis.energy_per_result import (
    energy_scale_sentences,
    energy_table,
    plausible_energy,
)
from gpuscale.analysis.software import with_framework
from gpuscale.analysis.trend_words import family_trends, grouped_notes
from gpuscale.analysis.trends import trends
from gpuscale.mlperf.benchmarks import first_rounds, last_rounds
from gpuscale.quantities import (
    TABLE_DIGITS,
    counted,
    devices,
    format_minutes,
    joined,
    named,
    number,
)
from gpuscale.report.svg import FigureFiles
from gpuscale.tables import RoundTables, display_name

if TYPE_CHECKING:  # its type alone: matplotlib only in the process that draws
    from gpuscale.report.style import Chart

# A section's sentence for the figures a report leaves out by default (FigureFiles.every).
NOT_DRAWN = "Not drawn in this report"
HOW = "`gpuscale report --all-figures` draws it"


def _chart(name: str, *args: object) -> Chart:
    """``gpuscale.report.rounds_figures.<name>(*args)``."""
    # lazy: matplotlib, only in the process that draws (a report's figure worker)
    from gpuscale.report import rounds_figures

    return getattr(rounds_figures, name)(*args)


@dataclass(frozen=True, slots=True)
class ExtraSection:
    anchor: str
    title: str
    findings: list[str]
    figures: list[tuple[str, str, list[str]]]  # (caption, inline svg, files)
    not_drawn: str = ""  # the figures left out and how to draw them (no finding)


def energy_section(tables: RoundTables, workloads: list[str], out: FigureFiles) -> ExtraSection:
    """Energy results of the workloads, or a sentence saying the rounds have none."""
    energy = energy_table(tables)
    energy = energy[energy["workload"].isin(workloads)]
    rounds = ", ".join(sorted(tables.scores["round"].unique()))
    if energy.empty:
        return ExtraSection(
            "energy",
            "Energy to train",
            [f"No power logs for these workloads in {rounds}: no energy results (none guessed)."],
            [],
        )
    findings = energy_scale_sentences(energy)
    # a workload of the report without a power log, beside those with: said, not dropped
    metered = set(tables.runs.dropna(subset=["energy_kj"])["workload"])
    if unlogged := [display_name(w) for w in workloads if w not in metered]:
        findings.append(
            f"No power logs for {joined(unlogged)} in {rounds}: no energy results for "
            f"{'it' if len(unlogged) == 1 else 'them'} (none guessed)."
        )
    known = energy[["accelerators", "time_to_train_min"]].notna().all(axis=1).to_numpy(bool)
    if not known.all():
        findings.append(
            f"{counted(int((~known).sum()), 'energy result')} without an accelerator count or "
            "a time to train in the logs: not shown (`gpuscale energy` lists them)."
        )
    for row in energy[known].itertuples(index=False):
        findings.append(
            f"{display_name(row.workload)} ({row.round}): {named(row.submitter, row.system_name)}, "
            # the energy as `gpuscale energy` shows it (16,380 kJ, not 16,384), and where
            # the power was measured (AC, DC or unstated), as it says beside it
            f"{devices(row.accelerators, row.accelerator_family)}: "
            f"{number(row.energy_kj, TABLE_DIGITS)} kJ "
            f"({row.energy_kj / 3600:,.1f} kWh) in {format_minutes(row.time_to_train_min)}, "
            f"{row.energy_per_accelerator_hour_kj / 3.6:,.0f} W per accelerator including the "
            f"host, power scope {row.power_scope}"
            # an energy no accelerator can draw: said, and kept out of the figure
            + (f"; it {row.energy_flag}: not drawn." if row.energy_flag else ".")
        )
    title = "Energy to train (official rule, power submissions)"
    caption = "Energy against accelerators; time against energy with the Pareto front"
    if not out.every:
        return ExtraSection(
            "energy", title, findings, [], not_drawn(out, f"its figure ({caption.lower()})")
        )
    drawn = plausible_energy(energy)
    if drawn.empty:
        return ExtraSection("energy", title, findings, [])
    svg, files = out.save(
        lambda: _chart("energy_chart", drawn), f"{rounds.replace(', ', '_')}_energy", drawn
    )
    return ExtraSection("energy", title, findings, [(caption, svg, files)])


def not_drawn(out: FigureFiles, what: str) -> str:
    """``Not drawn in this report: WHAT; HOW`` where the report draws only each workload's
    first figures, else ""."""
    if out.every:
        return ""
    return f"{NOT_DRAWN}: {what}; {HOW}."


def trends_section(
    tables: RoundTables, workloads: list[str], out: FigureFiles
) -> ExtraSection | None:
    """One figure per workload across the rounds loaded; None with a single round."""
    if tables.scores["round"].nunique() < 2:
        return None
    rows = trends(
        with_framework(tables.scores, tables.systems),
        workloads,
        first_rounds=first_rounds(),
        last_rounds=last_rounds(),
    )
    figures, findings = [], []
    left_out = not_drawn(out, "each workload's best time by round")
    for workload, group in rows.groupby("workload", sort=False):
        if out.every:
            svg, files = out.save(
                lambda g=group, w=workload: _chart("trend_chart", g, w), f"trends_{workload}", group
            )
            figures.append((f"{display_name(workload)}: best time by round", svg, files))
        families = family_trends(group)
        said = [*families, *grouped_notes(group)]
        # each round's time is at its own most common count: 8 in one, 64 in the next
        basis = " (each family's best time at its most common count in each round)"
        if said:
            findings.append(
                f"{display_name(workload)}{basis if families else ''}: {'; '.join(said)}."
            )
    return ExtraSection("trends", "Trends across rounds", findings, figures, left_out)

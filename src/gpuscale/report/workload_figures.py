"""A workload's figures in a report: what each is called, which are drawn by default, and
the tasks that draw them (in the figure worker: matplotlib is imported there, by
``gpuscale.report.figures``, never by the report's main process)."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from gpuscale.analysis.analyze import AnalysisOptions, WorkloadAnalysis, WorkloadTable
from gpuscale.quantities import article
from gpuscale.report.figures_common import NothingToDraw, against
from gpuscale.report.svg import FigureFiles
from gpuscale.tables import display_name

if TYPE_CHECKING:  # its type alone: matplotlib only in the process that draws
    from gpuscale.report.style import Chart

# What the like-with-like figures' bars are: each system's intervals of S and E' against its
# own family's reference, that reference's runs and choice resampled too
# (``score_intervals.family_intervals``: ``analyze -r family``'s intervals)
BARS = "95% bootstrap intervals of S and E' against the family's reference, its runs resampled too"

FIGURE_TITLES = {
    "scaling": "Like with like (each system against its own family's smallest): speedup with "
    "the linear (ideal) line, E' with the threshold, time against accelerator-hours (Pareto front) "
    f"and why E' falls (throughput efficiency x convergence factor); bars: {BARS}; "
    "ring: the recommended count",
    "systems": "Systems by accelerator type and count (size: systems sharing a "
    "configuration and cluster; colour and shape: cluster)",
    "efficiency": "Normalised efficiency E' against accelerators, equilibrium picks marked",
    "efficiency_ci": "E' with 95% bootstrap intervals",
    "speedup": "Speedup against accelerators, with the linear (ideal) line",
    "time_vs_cost": "Time to train against accelerator-hours, Pareto front and equilibrium",
    "decomposition": "Why E' falls within the family that ran the most counts, against its "
    "own reference (as the summary's sentence): throughput efficiency (evaluation, "
    "per-device batch, software, communication) x convergence factor (larger global "
    "batches needing more samples)",
    "convergence": "Samples to converge against the global batch: measured per system and "
    "expected from the round's reference convergence points",
}
# Each workload figure (``gpuscale.report.figures.FIGURES``, in its order) as a section's
# sentence calls it when it leaves it out.
FIGURE_NAMES = {
    "scaling": "speedup, E', time against accelerator-hours and why E' falls, like with like",
    "systems": "systems by accelerator type and count",
    "efficiency": "E' against accelerators",
    "efficiency_ci": "E' with 95% bootstrap intervals",
    "speedup": "speedup against accelerators",
    "time_vs_cost": "time to train against accelerator-hours (Pareto front)",
    "decomposition": "why E' falls (throughput efficiency x convergence factor)",
    "convergence": "samples to converge against the global batch",
}
# Drawn by default: each workload's four panels like with like (the answer's evidence);
# with the overview, what a reader needs first.
FIRST_FIGURES = ("scaling",)


@dataclass(frozen=True, slots=True)
class RenderedFigure:
    name: str
    title: str
    svg: str
    files: list[str]
    note: str = ""  # why it is not drawn (then no svg, no files)


# Drawn from the first half of the analysis (the table alone), while the second half
# (clusters, equilibrium) still runs.
TABLE_ONLY_FIGURES = ("efficiency_ci", "speedup", "decomposition", "convergence")


# A figure's cache key is what its data was made from (the digest of the tables, the
# round, the workload and the options: ``gpuscale.report.html``), never the data itself:
# a result read back from the cache pickles to other bytes than the one computed.
Basis = tuple[str, str, str, AnalysisOptions]


def _figures() -> dict[str, Callable[..., Chart]]:
    """The figure functions by name, the overview's included: imported on the first figure
    actually drawn, so a report whose figures all come from the cache never imports
    matplotlib (~0.6 CPU-s)."""
    # lazy: matplotlib, only in the process that draws (the figure worker), only to draw
    from gpuscale.report.answer_figures import overview_like
    from gpuscale.report.figures import FIGURES, overview

    return {**FIGURES, "overview": overview, "overview_like": overview_like}


def prepare_drawing() -> None:
    """Import what draws (matplotlib and its font list, ~0.5 CPU-s): a figure worker's
    first task where figures will be drawn, done while the main process analyses."""
    _figures()


def _stem(round_name: str, workload: str, name: str) -> str:
    return f"{file_part(round_name)}_{workload}_{name}"


def file_part(round_name: str) -> str:
    """A round's name as part of a figure's file name: a user's folder's label
    (``my results (v4.1)``) with no space, bracket or other sign a link would have to
    escape (``my-results-v4.1``); a round's own name (``v4.1``) as it is."""
    return re.sub(r"[^A-Za-z0-9._-]+", "-", round_name).strip("-") or "round"


def figure_key(out: FigureFiles, basis: Basis, name: str) -> str:
    """The cache key of a workload's figure ``name`` made from ``basis``."""
    return out.key(_stem(basis[1], basis[2], name), name, basis)


def figure_task(
    task: tuple[WorkloadTable | WorkloadAnalysis, FigureFiles, str, Basis],
) -> RenderedFigure:
    result, out, name, basis = task
    stem = _stem(result.round, result.workload, name)
    try:
        svg, files = out.save(lambda: _figures()[name](result), stem, name, basis)
    except NothingToDraw as why:
        return RenderedFigure(name, caption(name, result), "", [], note=str(why))
    return RenderedFigure(name, caption(name, result), svg, files)


# The figures whose values are against a reference, and what: their caption names it
AGAINST = {"efficiency": "E'", "efficiency_ci": "E'", "speedup": "speedup"}


def caption(name: str, result: WorkloadTable | WorkloadAnalysis) -> str:
    """A workload figure's caption: its title, and for speedup and E' whom they are
    against (``...; E' against 2 x RTX A5000 (Krai)``)."""
    if name not in AGAINST:
        return FIGURE_TITLES[name]
    return f"{FIGURE_TITLES[name]}; {AGAINST[name]} {against(result.table)}"


def overview_task(
    task: tuple[list[WorkloadAnalysis], FigureFiles, list[Basis], list],
) -> RenderedFigure:
    """The first screen's figure: E' of every workload like with like (each system
    against its own family's smallest), the recommended count ringed (the last item:
    each result's ``report.recommend.recommend``)."""
    results, out, bases, recs = task
    stem = f"{'_'.join(sorted({file_part(r.round) for r in results}))}_overview"
    svg, files = out.save(lambda: _figures()["overview_like"](results, recs), stem, bases)
    title = (
        "E' against accelerators, like with like: each system against the smallest, slowest "
        f"system of its own family (bars: {BARS}; "
        "dotted: the threshold; "
        "ring: the recommended count)"
    )
    return RenderedFigure("overview_like", title, svg, files)


def study_overview_task(
    task: tuple[list[WorkloadAnalysis], FigureFiles, list[Basis]],
) -> RenderedFigure:
    """The study's reading: E' of every workload against the report's reference (the
    study's rule: one per workload, across hardware), captioned as such."""
    results, out, bases = task
    stem = f"{'_'.join(sorted({file_part(r.round) for r in results}))}_overview_efficiency"
    svg, files = out.save(lambda: _figures()["overview"](results), stem, bases)
    title = (
        "The study's reading, across hardware: E' of every workload against one reference "
        "per workload, not scaling where a panel mixes families; colour and shape: the K-means "
        "cluster of behaviour, numbered within each panel (one colour in two panels is not one "
        "cluster)" + overview_caution(results)
    )
    return RenderedFigure("overview", title, svg, files)


def overview_caution(results: list[WorkloadAnalysis]) -> str:
    """The overview's caption caution, in the same sentence as the figure it cautions:
    the workloads whose panel sets systems of other accelerator families against one
    reference (E' there mixes hardware generations), each with its reference's family;
    empty when every panel compares like with like."""
    mixed = []
    several = len({r.round for r in results}) > 1  # say each panel's round (once twice)
    for result in results:
        if len(result.references) != 1:
            continue  # per family: each system against its own family's reference
        family = result.references[0].accelerator_family
        others = set(result.table["accelerator_family"]) - {family}
        if others:
            which = f"{result.round} " * several + display_name(result.workload)
            mixed.append(f"{which} against {article(family)} {family} reference")
    if not mixed:
        return ""
    return (
        f"; caution: {'; '.join(mixed)}: E' of the other accelerator families there compares "
        "hardware generations, not scaling (like with like: the answer's family rows, or "
        "--reference family)"
    )

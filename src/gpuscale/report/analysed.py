"""The workloads a report analyses, each from the cache where an earlier report of the
same tables, options and code left it (:func:`cached`), its figures handed to the
drawing pool as soon as their data exists (:func:`analyse`)."""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import Executor, Future
from dataclasses import dataclass
from typing import TypeVar

from gpuscale.analysis.analyze import (
    AnalysisOptions,
    WorkloadAnalysis,
    finish_workload,
    not_analysed,
    workload_table,
)
from gpuscale.report.svg import FigureFiles
from gpuscale.report.workload_figures import TABLE_ONLY_FIGURES, Basis, figure_key, figure_task
from gpuscale.sources.disk_cache import Cache
from gpuscale.tables import RoundTables, display_name

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class AnalysedWorkloads:
    """The workloads analysed (each with its cache basis), their figures being drawn,
    and a sentence for each workload that got no section."""

    results: list[WorkloadAnalysis]
    bases: list[Basis]
    drawn: dict[tuple[str, str, str], Future]
    skipped: list[str]


def analyse(
    tables: RoundTables,
    pairs: list[tuple[str, str]],
    options: AnalysisOptions,
    out: FigureFiles,
    pool: Executor,
    names: list[str],
    source: str,
) -> AnalysedWorkloads:
    """Each workload's analysis (from the cache where an earlier report of the same tables,
    options and code left it), its figures handed to ``pool`` as soon as their data
    exists. Every cache entry of a workload is keyed by its :data:`Basis`: the digest of
    the tables (``source``), the round, the workload and the options (what it is made
    from)."""
    firsts, drawn, skipped = [], {}, []
    for round_name, workload in pairs:
        basis: Basis = (source, round_name, workload, options)
        first = cached(
            out.cache, "first", basis, workload_table, tables, round_name, workload, options
        )
        if first is None:
            why = not_analysed(tables, round_name, workload, options.division)
            if why:
                skipped.append(f"{display_name(workload)} ({round_name}) has no section: {why}")
            continue
        firsts.append((first, basis))
        for name in [n for n in names if n in TABLE_ONLY_FIGURES]:
            drawn[round_name, workload, name] = pool.submit(figure_task, (first, out, name, basis))
    results = []
    for first, basis in firsts:  # each workload's figures as soon as it is analysed
        result = cached(out.cache, "finish", basis, finish_workload, first, options)
        results.append(result)
        for name in [n for n in names if n not in TABLE_ONLY_FIGURES]:
            drawn[result.round, result.workload, name] = pool.submit(
                figure_task, (result, out, name, basis)
            )
    return AnalysedWorkloads(results, [basis for _, basis in firsts], drawn, skipped)


def any_to_draw(
    out: FigureFiles,
    source: str,
    pairs: list[tuple[str, str]],
    names: list[str],
    options: AnalysisOptions,
) -> bool:
    """Whether any of the workloads' figures ``names`` is missing from the cache (none
    kept: every one; a report all from the cache never imports matplotlib)."""
    return any(
        not out.cache.has(figure_key(out, (source, round_name, workload, options), name))
        for round_name, workload in pairs
        for name in names
    )


def cached(cache: Cache, what: str, basis: object, fn: Callable[..., T], *args: object) -> T:
    """``fn(*args)`` (``what``, made from ``basis``: picklable, the inputs or what they
    were made from): from ``cache`` where an earlier report stored it, else computed now
    and stored (a None result is never stored)."""
    key = cache.key(what, basis)
    hit = cache.get(key)
    if hit is not None:
        return hit
    value = fn(*args)
    if key:
        cache.put(key, value)
    return value

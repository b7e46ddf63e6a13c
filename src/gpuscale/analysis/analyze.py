"""One call that runs the whole scaling analysis of a round's workloads.

For each (round, workload): the scaling table against the chosen reference, K-means
clusters, the Pareto flag, bootstrap intervals and the equilibrium criteria (overall and
per accelerator family). ``gpuscale.analysis.document`` turns the results into the
documented JSON shape.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import pandas as pd

from gpuscale.analysis.clusters import Clustering, cluster_systems, leave_one_out
from gpuscale.analysis.decompose import decompose
from gpuscale.analysis.divisions import (
    contradicted,
    in_division,
    left_out,
    of_other_divisions,
    open_analysed,
    uncounted,
)
from gpuscale.analysis.equilibrium import (
    Equilibrium,
    equilibrium,
    equilibrium_by_family,
    pareto_mask,
)
from gpuscale.analysis.metrics import (
    Reference,
    read_filters,
    references,
    workload_scaling_table,
)
from gpuscale.analysis.score_intervals import bootstrap_intervals, family_intervals
from gpuscale.analysis.software import with_framework
from gpuscale.analysis.study import StudyStatement, compare_with_study
from gpuscale.names import UnknownNameError, resolve_workloads, workloads_in
from gpuscale.quantities import agreeing, counted, filled
from gpuscale.tables import (
    CLUSTER_COLUMN,
    PARETO_COLUMN,
    SCALING_COLUMNS,
    RoundTables,
)
from gpuscale.tables.analysis_request import AnalysisOptions
from gpuscale.tables.checks import check_round_tables
from gpuscale.tables.repeated_runs import repeated_notes
from gpuscale.tables.republished import is_log_flagged
from gpuscale.tables.requests import check_keywords, keyword_doc, keyword_signature
from gpuscale.tables.result_repr import result_repr
from gpuscale.tables.spelling import did_you_mean


@dataclass(frozen=True, slots=True)
class WorkloadTable:
    """The first half of a workload's analysis: its scaling table with bootstrap
    intervals and the decomposition (see ``workload_table``)."""

    round: str
    workload: str
    table: pd.DataFrame


@dataclass(frozen=True, slots=True)
class WorkloadAnalysis:
    """Everything gpuscale says about one workload of one round."""

    round: str
    workload: str
    references: list[Reference]
    table: pd.DataFrame
    clustering: Clustering
    equilibrium: Equilibrium
    by_family: list[Equilibrium] = field(default_factory=list)

    def __repr__(self) -> str:
        """The picks over all systems in a line each, then the fields that hold the rest."""
        return result_repr(
            f"WorkloadAnalysis ({self.round} {self.workload})",
            [p.line for p in overall_equilibrium(self).picks],
            (".table", ".equilibrium", ".by_family", ".clustering", ".references"),
        )


CROSS_FAMILY = "not across families: each family's E' is against its own reference"


def per_family_reference(result: WorkloadAnalysis) -> bool:
    """Whether E' of this analysis is per family (references of several families)."""
    return len({r.accelerator_family for r in result.references}) > 1


def overall_equilibrium(result: WorkloadAnalysis) -> Equilibrium:
    """The picks over all systems that mean something: every criterion under one
    reference; under a per-family reference only the knee (T against N), as speed x
    efficiency and the E' threshold would compare E' of different references."""
    eq = result.equilibrium
    if per_family_reference(result):
        return replace(eq, max_speed_x_efficiency=None, efficiency_threshold=None)
    return eq


def workload_table(
    tables: RoundTables,
    round_name: str,
    workload: str,
    options: AnalysisOptions = AnalysisOptions(),
) -> WorkloadTable | None:
    """The first, cheap half of a workload's analysis: the scaling table with bootstrap
    intervals and the decomposition of E' (no clusters, no equilibrium); None when no
    system of the workload is scored. A report draws its first figures from it while
    ``finish_workload`` still runs."""
    scores = with_framework(tables.scores[tables.scores["round"] == round_name], tables.systems)
    table = workload_scaling_table(
        scores,
        workload,
        reference=options.reference,
        division=options.division,
        availability=options.availability,
        families=list(options.families or ()) or None,
    )
    if table.empty:
        return None
    ci = bootstrap_intervals(
        table, tables.runs, scores=scores, n_boot=options.n_boot, seed=options.seed
    )
    # each system's S and E' intervals against its own family's reference too: the
    # report's like-with-like figures draw them
    family = family_intervals(
        table, tables.runs, ci, scores=scores, n_boot=options.n_boot, seed=options.seed
    )
    # the scaling table carries each system's ``framework`` from these scores
    table = pd.concat([table, ci, family], axis=1)
    return WorkloadTable(round_name, workload, decompose(table, options.convergence_basis))


def not_analysed(
    tables: RoundTables, round_name: str, workload: str, division: str | None = None
) -> str | None:
    """Why a workload the round has gets no analysis (``workload_table`` is None), in
    words; None when the round has no result of it at all (nothing to say). ``division``:
    the one analysed (:mod:`gpuscale.analysis.divisions`)."""
    scores = tables.scores[
        (tables.scores["round"] == round_name) & (tables.scores["workload"] == workload)
    ]
    if scores.empty:
        return None
    scored = scores[scores["time_to_train_min"].notna()]
    if scored.empty:
        return f"none of its {counted(len(scores), 'result')} has an official score"
    flagged = is_log_flagged(scored).to_numpy(bool)
    if flagged.all():
        return (
            f"its {counted(len(scored), 'scored result')} "
            f"{agreeing(len(scored), 'is', 'are')} left out: logs that contradict their "
            "folder (log_flag; `gpuscale scores` lists them)"
        )
    with_count = scored[~flagged & (scored["accelerators"].fillna(0) > 0).to_numpy(bool)]
    if with_count.empty:
        return (
            f"its {counted(len(scored), 'scored system')} {agreeing(len(scored), 'has', 'have')} "
            "no accelerator count (CPU-only, or a "
            "system description without one; see the data problems)"
        )
    if not in_division(with_count, division).any():
        unscored = scores[scores["time_to_train_min"].isna()]
        asked = int(in_division(unscored, division).sum())
        return of_other_divisions(with_count, division, unscored=asked)
    return NO_MATCH


# why a workload with scored systems is not analysed: the options left none
NO_MATCH = "no scored system matches the options"


def finish_workload(
    first: WorkloadTable, options: AnalysisOptions = AnalysisOptions(), *, held: bool = True
) -> WorkloadAnalysis:
    """The second half: K-means clusters (with ``held``, how they hold with each system
    left out: a clustering per system, for where it is said), the Pareto flag and the
    equilibrium criteria (``cluster`` and ``pareto`` are placed right after the scaling
    columns)."""
    table = first.table
    clustering = cluster_systems(table, options.k, seed=options.seed)
    if held:
        stability = leave_one_out(table, clustering, options.k, seed=options.seed)
        clustering = replace(clustering, stability=stability)
    flags = {
        CLUSTER_COLUMN: clustering.labels,
        PARETO_COLUMN: pareto_mask(
            table["time_to_train_min"].to_numpy(), table["accelerator_hours"].to_numpy()
        ),
    }
    scaling = [c for c in table.columns if c in SCALING_COLUMNS]
    rest = [c for c in table.columns if c not in SCALING_COLUMNS]
    table = table.assign(**flags)[[*scaling, *flags, *rest]]
    return WorkloadAnalysis(
        round=first.round,
        workload=first.workload,
        references=references(table),
        table=table,
        clustering=clustering,
        equilibrium=equilibrium(table, threshold=options.threshold),
        by_family=equilibrium_by_family(table, threshold=options.threshold),
    )


def analyze_workload(
    tables: RoundTables,
    round_name: str,
    workload: str,
    options: AnalysisOptions = AnalysisOptions(),
    *,
    held: bool = True,
) -> WorkloadAnalysis | None:
    """The analysis of one workload (``held``: see :func:`finish_workload`), or None when
    no system of it is scored."""
    table = workload_table(tables, round_name, workload, options)
    if table is None:
        return None
    return finish_workload(table, options, held=held)


def workload_pairs(tables: RoundTables, workloads: list[str]) -> list[tuple[str, str]]:
    """(round, workload) for every round in the tables and every workload asked for (all
    workloads with scores when the list is empty)."""
    pairs = []
    for round_name in sorted(tables.scores["round"].unique()):
        scores = tables.scores[tables.scores["round"] == round_name]
        pairs += [(round_name, w) for w in workloads or sorted(scores["workload"].unique())]
    return pairs


def analyze(
    tables: RoundTables,
    workloads: list[str],
    options: AnalysisOptions = AnalysisOptions(),
    **fields: object,
) -> list[WorkloadAnalysis]:
    """A :class:`WorkloadAnalysis` for each round of ``tables`` and each workload asked for
    (``[]``: every workload with scores), round by round, leaving out a pair with no
    scored system (so possibly ``[]``): ``analyze_workload`` of each ``workload_pairs``
    pair. ``workloads`` are read as every command reads ``--benchmark``
    (``gpuscale.names``: ``BERT``, ``dlrm``) against the workloads of the tables (none:
    every one), and ``options``' division and families likewise (:func:`read_against`:
    ``H100`` is H100-SXM5-80GB). Raises TypeError for a ``tables``, ``workloads`` or
    ``options`` of the wrong type, ValueError for scores lacking a column or with a time
    to train <= 0 (``gpuscale.tables.checks``), :class:`~gpuscale.names.UnknownNameError` (a
    ValueError) for a name that is none of the tables' workloads, families or divisions
    and :class:`NothingAnalysedError` (a ValueError) for an ``availability`` found in no
    scored system's of the workloads asked (it lists those of the division).
    The keywords after ``options`` are its fields, replaced (``n_boot=500``, the CLI's
    ``--bootstrap``); one that is none is a TypeError naming the closest."""
    return _analyze(tables, workloads, options, fields)


def _analyze(
    tables: RoundTables,
    workloads: list[str],
    options: AnalysisOptions,
    fields: dict[str, object],
    *,
    held: bool = True,
) -> list[WorkloadAnalysis]:
    """:func:`analyze` (``held``: see :func:`finish_workload`)."""
    check_keywords(AnalysisOptions, fields, "analyze", "options")
    check_round_tables(tables)
    if isinstance(workloads, str) or not all(isinstance(w, str) for w in workloads or []):
        raise TypeError(
            f"workloads must be a list of workload names (e.g. [{workloads!r}]), not {workloads!r}"
        )
    _check_options(options)
    options = replace(options, **fields) if fields else options
    if workloads:  # none: every workload with scores
        workloads = resolve_workloads(
            workloads, workloads_in(tables.scores), call="analyze({round}, ...)"
        )
    options = read_against(options, tables.scores)[0]  # `H100`, `clo`: as the CLI reads them
    results = [
        analyze_workload(tables, r, w, options, held=held)
        for r, w in workload_pairs(tables, workloads)
    ]
    found = [r for r in results if r is not None]
    if not found and options.availability and not _availability_found(tables, workloads, options):
        raise nothing_analysed(tables, workloads, options)  # a typo: what would match
    return found


# help(gpuscale.analyze) lists the options' fields, each a keyword with its default
# help() says what each keyword means, from the request's fields (their options' help)
analyze.__doc__ = keyword_doc(analyze, AnalysisOptions)
analyze.__signature__ = keyword_signature(analyze, AnalysisOptions)  # type: ignore[attr-defined]


def _check_options(options: object) -> None:
    if not isinstance(options, AnalysisOptions):
        raise TypeError(
            "options must be a gpuscale.analysis.AnalysisOptions (e.g. "
            f"AnalysisOptions(reference='family')), not {type(options).__name__}"
        )


@dataclass(frozen=True, slots=True)
class Analysed:
    """What ``gpuscale analyze`` shows: the results, the options as read against the
    tables (names resolved) and what to tell the reader (a family read as another name,
    an asked ``-k`` lowered)."""

    results: list[WorkloadAnalysis]
    options: AnalysisOptions
    notes: list[str]


def analyze_asked(
    tables: RoundTables,
    workloads: list[str],
    options: AnalysisOptions = AnalysisOptions(),
    *,
    held: bool = True,
) -> Analysed:
    """``gpuscale analyze``'s use case: ``options`` read against the tables
    (:func:`read_against`, its notes kept), :func:`analyze_or_explain` (ValueErrors: a
    name that is none, no reference, nothing analysed, each saying why) and
    :func:`clusters_lowered`. ``held``: how the clusters hold with each system left out
    (:func:`finish_workload`), for the views that say it."""
    check_round_tables(tables)
    _check_options(options)
    options, read_as = read_against(options, tables.scores)
    results = analyze_or_explain(tables, workloads, options, held=held)
    # every pair asked: a workload of open results alone (v1.1 BERT) is said too
    pairs = workload_pairs(tables, workloads)
    other = left_out(tables.scores, pairs, options.division, DIVISION_HOW)
    other += contradicted(tables.scores, pairs)
    other += uncounted(tables.scores, pairs, options.division)
    other += open_analysed((r.round, r.workload, r.table) for r in results)
    other += repeated_analysed(tables.scores, results)
    return Analysed(results, options, [*read_as, *other, *clusters_lowered(results, options.k)])


def repeated_analysed(scores: pd.DataFrame, results: list[WorkloadAnalysis]) -> list[str]:
    """A note per result analysed whose score averages a run published twice
    (``repeated_runs``: kept in the analysis, like a result scored from fewer result
    files; :mod:`gpuscale.tables.repeated_runs`)."""
    if "repeated_runs" not in scores or not results:
        return []
    key = ["round", "org", "system_id", "benchmark"]
    analysed = pd.concat([r.table[key] for r in results]).drop_duplicates()
    rows = scores.merge(analysed.astype(object), on=key) if len(analysed) else scores.iloc[:0]
    return repeated_notes(
        rows, then="; analysed all the same, like a result scored from fewer result files"
    )


# how the analysis is asked for another division (``left_out``'s ``how``)
DIVISION_HOW = "--division {other} or all analyses them"


class NothingAnalysedError(ValueError):
    """No scored system of the workloads asked matches the options; the message says why,
    per (round, workload)."""


def analyze_or_explain(
    tables: RoundTables,
    workloads: list[str],
    options: AnalysisOptions = AnalysisOptions(),
    *,
    held: bool = True,
) -> list[WorkloadAnalysis]:
    """:func:`analyze`, raising :class:`NothingAnalysedError` where it analyses nothing:
    the filters given, and each reason (:func:`not_analysed`) once, with the (round,
    workload) pairs it holds for (``v4.1 bert, gpt3 and 5 more: no scored system ...``)."""
    results = _analyze(tables, workloads, options, {}, held=held)
    if not results:
        raise nothing_analysed(tables, workloads, options)
    return results


def nothing_analysed(
    tables: RoundTables, workloads: list[str], options: AnalysisOptions
) -> NothingAnalysedError:
    """Why no workload of ``workloads`` in ``tables`` is analysed with ``options``, as
    :func:`analyze_or_explain` raises it (a report with no workload section says it too)."""
    pairs: dict[str, list[str]] = {}
    by_options = False  # whether an option left a system out (else the data alone did)
    for r, w in workload_pairs(tables, workloads):
        if why := not_analysed(tables, r, w, options.division):
            pairs.setdefault(why, []).append(f"{r} {w}")
            # the division's reason is one the data has only under that division
            by_options |= why == NO_MATCH or why != not_analysed(tables, r, w, None)
    filters = {
        "division": options.division,
        "availability": options.availability,
        "families": ", ".join(options.families or ()) or None,
    }
    given = ", ".join(f"{k} {v!r}" for k, v in filters.items() if v is not None)
    # the workloads the options alone left empty named in the lead, never said again
    matched = filled(" of {}", _first(pairs.pop(NO_MATCH, [])))
    said = [f"{_first(keys)}: {why}" for why, keys in pairs.items()]
    lead = f"no scored system{matched} matches these options{filled(' ({})', given)}"
    if not by_options and pairs:  # the data left every system out, whatever the options
        lead = "nothing to analyse (no option left a system out)"
    elif options.availability is not None:  # a typo matches nothing: what would match
        said.append(_availabilities(tables, workloads, options))
    return NothingAnalysedError(lead + "".join(f"; {x}" for x in said))


def _availability_kinds(
    tables: RoundTables, workloads: list[str], division: str | None
) -> list[str]:
    """The availabilities of the scored systems asked for (``division``'s), sorted."""
    scores = tables.scores
    asked = set(workload_pairs(tables, workloads))
    mine = [(r, w) in asked for r, w in zip(scores["round"], scores["workload"], strict=True)]
    scored = scores[pd.Series(mine, index=scores.index) & scores["time_to_train_min"].notna()]
    scored = scored[in_division(scored, division).to_numpy(bool)]
    return sorted({str(a) for a in scored["availability"].dropna()})


def _availability_found(
    tables: RoundTables, workloads: list[str], options: AnalysisOptions
) -> bool:
    """Whether ``options.availability`` is within the availability of a scored system
    asked for, of any division (case ignored, as ``metrics.scored_systems`` looks for it):
    where not, it is a typo, not a filter that left these workloads empty."""
    given = str(options.availability).lower()
    return any(given in kind.lower() for kind in _availability_kinds(tables, workloads, None))


def _availabilities(tables: RoundTables, workloads: list[str], options: AnalysisOptions) -> str:
    """The availabilities of the scored systems asked for (the division's), as the text
    --availability is looked for in, and the closest to the one given."""
    kinds = _availability_kinds(tables, workloads, options.division)
    given = str(options.availability)
    return (
        "their availabilities (the text is looked for within each): "
        f"{', '.join(kinds) or 'none'}"
        f"{did_you_mean(given, kinds)}"
    )


def _first(items: list[str], most: int = 3) -> str:
    """``a, b, c and 4 more``."""
    return ", ".join(items[:most]) + filled(" and {} more", max(len(items) - most, 0))


def clusters_lowered(results: list[WorkloadAnalysis], k: int | None) -> list[str]:
    """Where an asked ``-k`` was lowered, in words: fewer systems, or fewer distinct ones,
    than clusters."""
    out = []
    for result in results:
        if not k or "cluster" not in result.table:
            continue
        found = result.table["cluster"].nunique()
        if found < k:
            out.append(
                f"{result.round} {result.workload}: -k {k} lowered to {found} "
                f"(only {counted(len(result.table), 'system')}, {found} distinct enough to cluster)"
            )
    return out


def study_statements(
    results: list[WorkloadAnalysis], options: AnalysisOptions = AnalysisOptions()
) -> list[StudyStatement]:
    """The study's findings against the data, per round analysed
    (``gpuscale.analysis.study``; none for rounds without the study's workloads)."""
    out = []
    for round_name in sorted({r.round for r in results}):
        tables = {r.workload: r.table for r in results if r.round == round_name}
        out += compare_with_study(tables, options.convergence_basis)
    return out


def read_against(
    options: AnalysisOptions, scores: pd.DataFrame
) -> tuple[AnalysisOptions, list[str]]:
    """``options`` with ``division`` and ``families`` as typed read against ``scores``
    (``gpuscale.analysis.metrics.read_filters``: ``H100`` is H100-SXM5-80GB, ``clo``
    closed; ``UnknownNameError`` naming the closest), and a note for each family read so."""
    try:
        division, families, notes = read_filters(scores, options.division, options.families)
    except UnknownNameError as exc:  # a family (the division was settled when asked)
        raise exc.as_field("families") from None
    return replace(options, families=tuple(families or ()) or None, division=division), notes

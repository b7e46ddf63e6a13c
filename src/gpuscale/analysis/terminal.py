"""``analyze``'s terminal views: each workload's answer (the count each criterion picks:
:func:`answer_view`, the default) or its whole table (its picks and flagged counts in
words under it: ``--explain``: :func:`equilibrium_sentences`, :func:`references_text`),
and the study compared, as
:class:`~gpuscale.tables.views.TableView` and lines the CLI draws."""

from __future__ import annotations

import numpy as np
import pandas as pd

from gpuscale.analysis.analyze import (
    CROSS_FAMILY,
    AnalysisOptions,
    WorkloadAnalysis,
    overall_equilibrium,
    per_family_reference,
    study_statements,
)
from gpuscale.analysis.answers import answers, edge_words
from gpuscale.analysis.crossing import scaling_family
from gpuscale.analysis.document import SUMMARY_FIELDS, with_family_columns, with_first_rounds
from gpuscale.analysis.equilibrium import families_alone
from gpuscale.analysis.outliers import outlier_column
from gpuscale.analysis.score_intervals import convergence_spread
from gpuscale.analysis.software import against_reference_software, reference_framework
from gpuscale.analysis.study_findings import CITATION
from gpuscale.analysis.study_table import table_i_texts
from gpuscale.quantities import (
    agreeing,
    counted,
    devices,
    filled,
    format_minutes,
    joined,
    named,
    number_range,
    span,
)
from gpuscale.tables import display_name
from gpuscale.tables.views import TableView

DECOMPOSE_COLUMNS = (
    "global_batch_size",
    "throughput_factor",
    "convergence_factor",
    "throughput_efficiency",
    "samples_to_converge",
    "expected_samples_to_converge",
    "convergence_unit",
)

# the counts to converge, in the unit of ``convergence_unit`` (samples, epochs, ...)
CONVERGE_COUNTS = ("samples_to_converge", "expected_samples_to_converge")

# What a narrow terminal drops first from analyze's table (the asked-for --decompose
# columns late); CSV and JSON always carry every column.
ANALYZE_DROP_ORDER = (
    "cluster",
    "pareto",
    "accelerator_hours",
    "efficiency",
    "submitter",
    "expected_samples_to_converge",
    "samples_to_converge",
    "global_batch_size",
    "superlinear",
    "speedup",
    "system_id",
)


# --explain's column of each system's 95% interval of its time to train (text, minutes)
INTERVAL = "95% interval"

# Where the rest of `analyze` is, under its answers
EXPLAIN_ANALYZE = (
    "Each system's speedup, E', interval and cluster, each caution and the study "
    "compared: --explain; every column: -f csv or -f json."
)


def references_text(result: WorkloadAnalysis) -> str:
    """The reference systems of an analysis in words: ``ORG/ID (N x FAMILY, T min)``,
    comma-separated (one per family under a per-family reference), each with why its
    score is less certain where it is."""
    return ", ".join(
        f"{r.submitter}/{r.system_id} ({devices(r.accelerators, r.accelerator_family)}, "
        f"{format_minutes(r.time_to_train_min)}{filled('; {}', r.score_reason)})"
        for r in result.references
    )


def own_reference_text(result: WorkloadAnalysis) -> str:
    """``; within B200, against its own: ORG/ID (8 x B200, 22.9 min), best E' 1.035
    (ORG/ID at 8)``: the reference the picks within the family that ran the most counts
    are against (``equilibrium_by_family``), and the best E' of its measured systems the
    threshold's floor is a share of (a faster system at the reference's count puts it
    above 1: v4.1 BERT on H100, 1.035, so 16 at 0.802 falls below 0.8 x best), where the
    reference is not one of the table's; "" where it is."""
    family = scaling_family(result.table)
    own = next((e for e in result.by_family if e.scope == family), None)
    # no reference of its own: one accelerator count (no E')
    if own is None or own.reference in {"", *(f"{r.org}/{r.system_id}" for r in result.references)}:
        return ""
    table = result.table
    (row,) = table[(table["org"] + "/" + table["system_id"]) == own.reference].itertuples()
    # the threshold's best E' among the family's measured systems (no outliers), which a
    # faster system at the reference's own count can put above 1
    marked = with_family_columns(result)
    mine = marked[(marked["accelerator_family"] == family) & (outlier_column(marked) == "")]
    e_prime = mine["family_normalized_efficiency"].astype(float).dropna()
    said = (
        f"; within {family}, against its own: {row.submitter}/{row.system_id} "
        f"({devices(row.accelerators, row.accelerator_family)}, "
        f"{format_minutes(row.time_to_train_min)})"
    )
    if e_prime.empty:
        return said
    best = mine.loc[e_prime.idxmax()]
    return (
        f"{said}, best E' {e_prime.max():.3f} ({best['submitter']}/{best['system_id']} "
        f"at {int(best['accelerators']):,})"
    )


def equilibrium_sentences(result: WorkloadAnalysis, *, answered: bool = False) -> list[str]:
    """The equilibrium of an analysis in plain sentences, as ``analyze`` prints them under
    the table, like with like first: each family's picks (``within FAMILY: knee 8, ...``,
    or why none: one accelerator count; the family that ran the most counts first), then each pick
    over all systems (under a per-family reference, first why only the knee picks across
    families), a pick that compares hardware rather than scaling with its caution in the
    same line, and the criteria's agreement with the Pareto front's size. ``answered``: the
    answer's table (:func:`answer_view`) is shown above, its picks (the family that ran
    the most counts, and over all systems) not said again."""
    eq = overall_equilibrium(result)
    first = scaling_family(result.table)
    lines = []
    for family in sorted(result.by_family, key=lambda e: e.scope != first):
        if answered and family.scope == first:  # its row of the answer's table says them
            continue
        # no pick: why (one accelerator count: no E')
        picks = ", ".join(f"{p.label} {p.accelerators:,}" for p in family.picks)
        picks = picks or family.why_none
        if picks:
            lines.append(
                f"within {family.scope}{' (most counts)' * (family.scope == first)}: {picks}"
            )
    # a family of one system (outliers aside) has none to compare: said, never silent
    if alone := families_alone(result.table):
        each = " each" if len(alone) > 1 else ""
        lines.append(f"within {joined(alone)}: one system{each} (outliers aside): no pick")
    if per_family_reference(result) and not answered:
        lines.append(
            f"over all systems: knee only; speed x efficiency and E' threshold "
            f"{CROSS_FAMILY} (see within each family above)"
        )
    lines.extend(f"over all systems, {pick.line}" for pick in eq.picks if not answered)
    lines.append(
        f"agreement over all systems: {eq.agreement}; Pareto front: "
        f"{counted(len(eq.pareto), 'system')}"
    )
    return lines


def told_apart(table: pd.DataFrame) -> list[str]:
    """Each row's system as said (submitter and system name), with its system id where
    another system of ``table`` has the same name (v0.7's Google ``TPU v3-8192`` is two
    systems, ``tpu-v3-8192-TF`` and ``-JAX``): no two lines read alike for two systems."""
    names = [named(r.submitter, r.system_name) for r in table.itertuples(index=False)]
    ids = list(table["system_id"])
    systems: dict[str, set[str]] = {}
    for name, system_id in zip(names, ids, strict=True):
        systems.setdefault(name, set()).add(system_id)
    return [
        f"{name} ({system_id})" if len(systems[name]) > 1 else name
        for name, system_id in zip(names, ids, strict=True)
    ]


def flagged_sentences(table: pd.DataFrame) -> list[str]:
    """One line per system whose samples to converge is flagged as impossible, then one
    for their 95% intervals: from their own runs alone, those pooled in no convergence
    law (``gpuscale.analysis.score_intervals``), and how many have none (too few runs)."""
    if "samples_to_converge_flag" not in table:
        return []
    flagged = table[table["samples_to_converge_flag"].fillna("") != ""]
    lines = [
        f"samples to converge of {label} not used: {r.samples_to_converge_flag}"
        for r, label in zip(flagged.itertuples(index=False), told_apart(flagged), strict=True)
    ]
    if flagged.empty or "time_to_train_min_ci_low" not in flagged:
        return lines
    none = int(flagged["time_to_train_min_ci_low"].isna().sum())
    lines.append(
        f"95% intervals of {counted(len(flagged), 'result')} above: from their own runs' "
        "times alone, no samples to converge pooled into any convergence law"
        + (f" ({counted(none, 'result')} with too few runs: none)" if none else "")
    )
    return lines


def software_sentences(table: pd.DataFrame) -> list[str]:
    """A line per system faster than the reference at the reference's own count on its
    accelerators (``superlinear``: ``faster at N_ref``) whose framework is another: its E'
    above 1 is software, the two frameworks named (``analysis.software``)."""
    if "superlinear" not in table or "framework" not in table:
        return []
    faster = table["superlinear"].fillna("").astype(str) == "faster at N_ref"
    references = reference_framework(table)
    lines = []
    for (index, r), label in zip(table[faster].iterrows(), told_apart(table[faster]), strict=True):
        software = against_reference_software(r["framework"], references[index])
        if software:
            lines.append(
                f"{label}: E' {r['normalized_efficiency']:.2f} at the reference's own "
                f"{devices(int(r['accelerators']), r['accelerator_family'])}: software, "
                f"not scaling ({software})"
            )
    return lines


def kept_apart_sentences(table: pd.DataFrame) -> list[str]:
    """One line where some result's interval was not pooled with results whose samples to
    converge at its batch differ beyond one law (``ci_kept_apart``), none otherwise."""
    if "ci_kept_apart" not in table:
        return []
    apart = table[table["ci_kept_apart"].fillna(0) > 0]
    if apart.empty:
        return []
    ratios = apart["ci_kept_apart_ratio"].astype(float)
    far = np.maximum(ratios, 1.0 / ratios)
    bound = convergence_spread()
    units = apart.get("convergence_unit", pd.Series(dtype=str)).fillna("").astype(str)
    unit = units.iloc[0] if units.nunique() == 1 and units.iloc[0] else "samples"
    names = joined([named(r.submitter, r.system_name) for r in apart.itertuples(index=False)])
    if len(apart) > 3:  # the rows say which (ci_kept_apart): a line, not a paragraph
        names = counted(len(apart), "result")
    return [
        f"95% intervals of {names}: not pooled with the results at the same batch whose "
        f"{unit} to converge differ {span(f'{far.min():.3g}', f'{far.max():.3g}')}x "
        f"(one law cannot hold both: one result's runs span at most {bound.ratio:.2f}x in "
        f"{bound.quantile:.0%} of {bound.results:,} results)"
    ]


def untimed_sentences(table: pd.DataFrame) -> list[str]:
    """One line per result with a run whose logged time cannot be true
    (``ci_untimed_runs``, the runs' ``time_flag``): its score stands, its interval draws
    none of those times."""
    if "ci_untimed_runs" not in table:
        return []
    off = table[table["ci_untimed_runs"].fillna(0) > 0]
    return [
        f"{label}: {counted(int(r.ci_untimed_runs), 'run')} logged a time that cannot be "
        "true (run_start before its own initialisation, which ended before run_stop): "
        "scored as MLCommons scores it, its 95% interval draws none of "
        f"{agreeing(int(r.ci_untimed_runs), 'that time', 'those times')} "
        "(the runs' time_flag says which)"
        for r, label in zip(off.itertuples(index=False), told_apart(off), strict=True)
    ]


def decomposition_sentences(table: pd.DataFrame) -> list[str]:
    """One line per system whose throughput and convergence factors cannot be true
    (``decomposition_flag``, ``gpuscale.analysis.decompose``): why they are not given."""
    if "decomposition_flag" not in table:
        return []
    off = table[table["decomposition_flag"].fillna("").astype(str) != ""]
    return [
        f"decomposition of {label} not given: {r.decomposition_flag}"
        for r, label in zip(off.itertuples(index=False), told_apart(off), strict=True)
    ]


def cluster_lines(result: WorkloadAnalysis) -> list[str]:
    """``clusters: K-means k 5 (silhouette 0.77); leaving one system out: ...``
    (:func:`stability_clause`), or none for one cluster."""
    clustering = result.clustering
    if clustering.k <= 1:
        return []
    score = clustering.silhouette  # NaN where k was given
    said = f"clusters: K-means k {clustering.k}"
    said += f" (silhouette {score:.2f})" if score == score else ""
    return [f"{said}{filled('; {}', stability_clause(result))}"]


def stability_clause(result: WorkloadAnalysis) -> str | None:
    """How the clusters hold with each system left out (``clusters.leave_one_out``), as
    analyze --explain and the report say it: ``leaving one system out: agreement
    0.59-1.00, median 1.00; k 2-6 (another in 1 of 26); least without NVIDIA Eos_n316
    (2,528 x H100-SXM5-80GB)``; None for one cluster. An agreement short of 1 never reads
    1.00."""
    stability = result.clustering.stability
    if stability is None:
        return None
    ks = [*stability.k_seen, stability.full_k]
    k_said = span(str(min(ks)), str(max(ks)))
    if stability.k_changed:
        k_said += f" (another in {stability.k_changed} of {len(stability.k)})"
    else:
        k_said += " each time"
    least = _share(stability.least)
    said = (
        f"leaving one system out: agreement {span(least, _share(stability.most))}, "
        f"median {_share(stability.median)}; k {k_said}"
    )
    if stability.least == 1.0:
        return said
    rows = result.table.iloc[stability.moved_most]
    if len(rows) > 3:
        return f"{said}; least without any of {len(rows)} systems"
    names = [
        f"{named(r.submitter, r.system_name)} ({devices(r.accelerators, r.accelerator_family)})"
        for r in rows.itertuples(index=False)
    ]
    return f"{said}; least without {joined(names, 'or')}"


def _share(value: float) -> str:
    """A share to two decimals where only 1 reads 1.00 (0.997: 0.99)."""
    return f"{min(value, 0.99) if value < 1 else value:.2f}"


def outlier_sentences(table: pd.DataFrame) -> list[str]:
    """One line per outlier (``gpuscale.analysis.outliers``): its time is its software's,
    not its family's, so it sets no family's reference nor picks."""
    if "outlier" not in table:
        return []
    off = table[table["outlier"].fillna("").astype(str) != ""]
    return [
        f"outlier, left out of its family's reference and picks: "
        f"{named(r.submitter, r.system_name)} ({devices(r.accelerators, r.accelerator_family)}, "
        f"{format_minutes(r.time_to_train_min)}): {r.outlier}"
        for r in off.itertuples(index=False)
    ]


def workload_view(
    result: WorkloadAnalysis, options: AnalysisOptions, *, decompose: bool, answered: bool = False
) -> TableView:
    """A workload's table (its summary columns, ``--decompose``'s too), its picks and
    flagged counts in words under it; ``answered``: under the answer (--explain), what the
    answer says (its picks, untimed results, outliers, results kept apart) not said again."""
    # the time's 95% interval beside it: the answer points here for "each system's interval"
    table = with_family_columns(result)
    table = table.assign(**{INTERVAL: table.apply(interval_text, axis=1)})
    columns = list(SUMMARY_FIELDS)
    columns.insert(columns.index("time_to_train_min") + 1, INTERVAL)
    drop, renamed = ANALYZE_DROP_ORDER, {}
    if decompose:
        columns += DECOMPOSE_COLUMNS
        table, columns, drop, renamed = in_own_unit(table, columns, drop)
    if result.table.duplicated(["submitter", "system_name", "accelerators"]).any():
        columns = [*columns[:2], "system_id", *columns[2:]]  # else two rows look alike
    said_above = () if answered else (untimed_sentences, outlier_sentences, kept_apart_sentences)
    said = [
        *equilibrium_sentences(result, answered=answered),
        *cluster_lines(result),
        *flagged_sentences(result.table),
        *(line for sentences in said_above for line in sentences(result.table)),
        *software_sentences(result.table),
        *(decomposition_sentences(result.table) if decompose else ()),
    ]
    return TableView(
        table,
        columns,
        f"{result.round} {result.workload}: reference ({options.reference}) "
        f"{references_text(result)}",
        drop,
        said=(*(f"  {line}" for line in said), ""),
        renamed=renamed,
    )


def in_own_unit(
    table: pd.DataFrame, columns: list[str], drop: tuple[str, ...]
) -> tuple[pd.DataFrame, list[str], tuple[str, ...], dict[str, str]]:
    """The counts to converge under their unit's name where the table has one unit and
    it is not samples (``epochs_to_converge`` for v0.7 DLRM, whose logs count epochs),
    the unit column then left out: a narrow terminal drops a column of one value first,
    and ``samples to converge`` stood alone over epochs. The renamed columns replace the
    others (``--columns samples_to_converge`` is refused there, offering its new name: the
    renames returned); a table of several units keeps the names beside its unit column."""
    units = table.get("convergence_unit", pd.Series(dtype=str)).fillna("").astype(str)
    unit = units.iloc[0] if units.nunique() == 1 else ""
    if unit in ("", "samples"):
        return table, columns, drop, {}
    renamed = {c: c.replace("samples", unit) for c in CONVERGE_COUNTS}
    names = renamed | {"convergence_unit": ""}  # said by the names
    columns = [names.get(c, c) for c in columns if names.get(c) != ""]
    drop = tuple(names.get(c, c) for c in drop if names.get(c) != "")
    return table.rename(columns=names).drop(columns=""), columns, drop, renamed


def study_lines(
    results: list[WorkloadAnalysis], options: AnalysisOptions, scores: pd.DataFrame | None
) -> list[str]:
    """The study compared with the data, and (for v4.1 ``scores``) its Table I, for the
    workloads analysed."""
    statements = study_statements(results, options)
    if not statements:
        return []
    lines = [f"Compared with the study ({CITATION}):"]
    lines += [f"  {st.workload}, {st.verdict}: {st.text}" for st in statements]
    texts = table_i_texts(scores)
    lines += [f"  Table I, {texts[r.workload]}" for r in results if r.workload in texts]
    return lines


def every_result_view(
    results: list[WorkloadAnalysis], scores: pd.DataFrame | None = None
) -> TableView:
    """Every workload's scaling table stacked, every column (``analyze -f csv``), each row
    with what its family's picks say of it (:func:`with_family_columns`) and, with
    ``scores`` (``mlperf.earlier.first_published``'s), where it was first published."""
    frame = pd.concat([with_first_rounds(with_family_columns(r), scores) for r in results])
    return TableView(frame=frame, shown=list(frame.columns))


def _interval(table: pd.DataFrame, row: pd.Series) -> str:
    """The picked system's 95% interval of its time to train, minutes, 3 significant
    digits (``5.12-5.74``: 4 made the column too wide for 100 columns)."""
    same = table[
        (table["submitter"] == row["submitter"])
        & (table["system_name"] == row["system_name"])
        & (table["accelerators"] == row["accelerators"])
    ]
    return "" if same.empty else interval_text(same.iloc[0])


def interval_text(row: pd.Series) -> str:
    """A system's 95% interval of its time to train, minutes, each end to 3 significant
    digits with its trailing zeros (``5.12-5.74``, ``4.90-5.46``, never ``4.9-5.46``), as
    every interval the package prints reads (``quantities.number_range``), or to the
    decimals that tell its ends apart where 3 write them alike (``33.95-34.01``, never
    ``34.0-34.0``), as the answer and --explain's table show it; "" where none."""
    low, high = row["time_to_train_min_ci_low"], row["time_to_train_min_ci_high"]
    if pd.isna(low) or pd.isna(high):
        return ""
    return number_range(float(low), float(high))  # 1,010-1,050, never 1.01e+03-1.05e+03


def answer_view(result: WorkloadAnalysis, options: AnalysisOptions) -> TableView:
    """``analyze``'s answer for a workload: the count each criterion picks within the
    family that ran the most counts (like with like) and over all systems, the system, its time and
    interval; each caution numbered under the table, the reference E' is against."""
    picks = answers(result)
    marks: dict[str, str] = {}  # {caution: its number, [1]}
    rows = []
    for _, row in picks.iterrows():
        picked = not pd.isna(row["accelerators"])
        # a caution, numbered once however many picks carry it; the pick at an end of
        # the counts measured said with it
        note = "; ".join(filter(None, (row["note"], edge_words(row))))
        if note:
            marks.setdefault(note, f"[{len(marks) + 1}]")
        # "none" where the count is shown, which stays when the width drops system
        shown = {"accelerators": "none", "system": "", "minutes": None, "95% interval": ""}
        if picked:
            shown = {
                "accelerators": int(row["accelerators"]),
                "system": named(row["submitter"], row["system_name"]),
                "minutes": float(row["time_to_train_min"]),
                "95% interval": _interval(result.table, row),
            }
        first = not rows or rows[-1]["scope"] != row["scope"]
        rows.append(
            {
                "scope": row["scope"],
                "among": row["scope"] if first else "",  # each scope named once
                "criterion": row["criterion"],
                **shown,
                "caution": marks.get(note, ""),
            }
        )
    table = result.table
    least, most = (f"{table['accelerators'].agg(end):,}" for end in ("min", "max"))
    title = (
        f"{result.round} {display_name(result.workload)}: the accelerators each criterion "
        f"picks ({counted(len(table), 'system')}, {span(least, most)} accelerators)"
    )
    said = [f"{mark} {note}" for note, mark in marks.items()]
    said += untimed_sentences(table)
    said += outlier_sentences(table)
    said += kept_apart_sentences(table)
    said.append(
        f"E' against the reference ({options.reference}): {references_text(result)}"
        + own_reference_text(result)
    )
    frame = pd.DataFrame(rows)
    drop = ("95% interval", "minutes", "system")
    return TableView(frame, list(frame.columns[1:]), title, drop, said=(*said, ""))


VERDICT_WORDS = {"agrees": "agree", "disagrees": "disagree"}  # a count of findings that ...


def study_counts(results: list[WorkloadAnalysis], options: AnalysisOptions) -> list[str]:
    """One line per workload the study speaks of: how many of its findings the data
    agrees with (``The study's 4 findings on BERT: 2 agree, 2 partly``)."""
    by_workload: dict[str, list[str]] = {}
    for statement in study_statements(results, options):
        by_workload.setdefault(statement.workload, []).append(statement.verdict)
    return [
        f"The study's {len(verdicts)} findings on {display_name(workload)}: "
        + ", ".join(
            f"{verdicts.count(v)} {VERDICT_WORDS.get(v, v)}" for v in dict.fromkeys(verdicts)
        )
        for workload, verdicts in by_workload.items()
    ]


def terminal_views(
    results: list[WorkloadAnalysis],
    options: AnalysisOptions,
    scores: pd.DataFrame | None,
    *,
    answer: bool,
    decompose: bool,
    explain: bool = False,
) -> tuple[list[TableView], list[str]]:
    """``analyze``'s terminal tables of the rounds and the lines under them: with
    ``answer``, each workload's answer (:func:`answer_view`), the study's findings counted
    and where the rest is (``EXPLAIN_ANALYZE``); else each workload's every system and
    finding (:func:`workload_view`; ``decompose``: --decompose's columns too), after its
    answer where ``explain`` (the answer first, --explain's detail under it), and the study
    compared (:func:`study_lines`)."""
    if answer:
        said = [*study_counts(results, options), EXPLAIN_ANALYZE]
        return [answer_view(r, options) for r in results], said
    shown = [
        view
        for r in results
        for view in (
            *([answer_view(r, options)] if explain else []),
            workload_view(r, options, decompose=decompose, answered=explain),
        )
    ]
    return shown, study_lines(results, options, scores)

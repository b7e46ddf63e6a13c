"""The documented JSON shape of an analysis (``analyze -f json``): one object per (round,
benchmark) with its reference, clusters, systems, equilibria and the study's findings."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict

import numpy as np
import pandas as pd

from gpuscale.analysis.analyze import (
    Analysed,
    AnalysisOptions,
    WorkloadAnalysis,
    overall_equilibrium,
    study_statements,
)
from gpuscale.analysis.crossing import measured_edge, scaling_family
from gpuscale.analysis.equilibrium import Equilibrium, Pick, families_alone
from gpuscale.analysis.metrics import Reference, within_own_family
from gpuscale.analysis.study_table import STUDY_ROUND, table_i_texts
from gpuscale.tables import (
    CI_COLUMNS,
    CI_POOL_COLUMNS,
    CLUSTER_COLUMN,
    CLUSTER_FEATURES,
    DECOMPOSITION_COLUMNS,
    PARETO_COLUMN,
)
from gpuscale.tables.written import with_whole_counts

# Each system's fields in ``as_json``.
SYSTEM_FIELDS: tuple[str, ...] = (
    "submitter",
    "system_id",
    "system_name",
    "accelerator_family",
    "accelerators",
    "nodes",
    "time_to_train_min",
    "speedup",
    "efficiency",
    "normalized_efficiency",
    "superlinear",
    "outlier",
    "accelerator_hours",
    "samples_per_s_per_accelerator",
    "global_batch_size",
    "samples_to_converge",
    "convergence_unit",
    "samples_to_converge_flag",
    CLUSTER_COLUMN,
    PARETO_COLUMN,
    "framework",
    *CI_COLUMNS,
    *CI_POOL_COLUMNS,
    "reference_system_id",
    *DECOMPOSITION_COLUMNS,
)
# What ``analyze`` shows of each system on a terminal: its fields but the details (ids,
# rates, batch sizes, intervals, the decomposition): who, how many, how fast, how well.
# (an outlier is said in words under the table, ``terminal.outlier_sentences``)
_DETAILS = {"system_id", "nodes", "samples_per_s_per_accelerator", "reference_system_id"}
_DETAILS |= {"outlier", "framework"}
_DETAILS |= {"global_batch_size", "samples_to_converge", "convergence_unit"}
_DETAILS |= {"samples_to_converge_flag", *CI_COLUMNS, *CI_POOL_COLUMNS, *DECOMPOSITION_COLUMNS}
SUMMARY_FIELDS: tuple[str, ...] = tuple(c for c in SYSTEM_FIELDS if c not in _DETAILS)


# A pick's 95% interval of its time to train, minutes (the answer's "95% interval").
PICK_INTERVAL: tuple[str, ...] = ("time_to_train_min_ci_low", "time_to_train_min_ci_high")


def _pick_json(
    pick: Pick | None, table: pd.DataFrame | None = None, scope: str = "all"
) -> dict[str, object] | None:
    """A pick's fields, and from ``table`` (the analysis' rows) its system's 95% interval
    of the time to train (``PICK_INTERVAL``: null where the row has none) and ``edge``:
    whether it is the fewest or most accelerators its ``scope`` (``all`` or a family) ran
    (``crossing.measured_edge``)."""
    if pick is None:
        return None
    fields = asdict(pick)
    fields["criterion"] = fields.pop("label")  # the JSON names the criterion as people read it
    if table is not None:
        part = table if scope == "all" else table[table["accelerator_family"] == scope]
        fields["edge"] = measured_edge(part, pick.accelerators)
        same = table[
            (table["org"] == pick.org)
            & (table["system_id"] == pick.system_id)
            & (table["accelerators"] == pick.accelerators)
        ]
        for column in PICK_INTERVAL:
            fields[column] = same[column].iloc[0] if len(same) else None
    return fields


def equilibrium_json(eq: Equilibrium, table: pd.DataFrame | None = None) -> dict[str, object]:
    """An equilibrium's picks, each with its interval where ``table`` is given."""
    return {
        "scope": eq.scope,
        "reference": eq.reference or None,
        "threshold": eq.threshold,
        "pareto": eq.pareto,
        "knee": _pick_json(eq.knee, table, eq.scope),
        "max_speed_x_efficiency": _pick_json(eq.max_speed_x_efficiency, table, eq.scope),
        "efficiency_threshold": _pick_json(eq.efficiency_threshold, table, eq.scope),
        "agreement": eq.agreement,
        # each criterion that picked nothing, by its id as its pick: its label beside why
        "unpicked": {
            c: {"criterion": eq.label_of(c), "why": why} for c, why in eq.unpicked.items()
        },
        # how a scope typed was read (``Equilibrium.notes``: 'H100' as H100-SXM5-80GB)
        "notes": eq.notes,
    }


def _reference_json(result: WorkloadAnalysis, rule: str) -> dict[str, object]:
    def one(ref: Reference) -> dict[str, object]:
        return {
            "submitter": ref.submitter,
            "system_id": ref.system_id,
            "accelerator_family": ref.accelerator_family,
            "accelerators": ref.accelerators,
            "time_to_train_min": ref.time_to_train_min,
        }

    if rule == "family":
        return {
            "rule": rule,
            "by_family": {r.accelerator_family: one(r) for r in result.references},
        }
    return {"rule": rule, **one(result.references[0])}


# What each row's family picks say of it (``WorkloadAnalysis.by_family``, the JSON's
# ``equilibrium_by_family``): ``-f csv``'s last columns, and any table's with --columns.
FAMILY_COLUMNS = ("family_reference", "family_normalized_efficiency", "family_picks")


def with_family_columns(result: WorkloadAnalysis) -> pd.DataFrame:
    """``result.table`` with :data:`FAMILY_COLUMNS`: for a row of a family with picks of
    its own, the ``org/system_id`` those picks' E' is against (the family's reference,
    ``metrics.within_own_family``), the row's E' against it, and the criteria that pick
    the row within its family, "; "-joined ("" none); all three empty for a row of a
    family with no picks (fewer than two systems that are no outliers, or all at one
    accelerator count: no E', ``equilibrium_by_family``)."""
    table = result.table
    reference = np.full(len(table), None, dtype=object)
    efficiency = np.full(len(table), np.nan)
    picks = np.full(len(table), None, dtype=object)
    family = table["accelerator_family"].astype(str).to_numpy()
    key = list(zip(table["org"], table["system_id"], table["accelerators"], strict=True))
    for eq in result.by_family:
        if not eq.reference:  # one accelerator count: no E', no picks
            continue
        mine = family == eq.scope
        reference[mine] = eq.reference or None
        own = within_own_family(table[mine])
        efficiency[mine] = own["normalized_efficiency"].astype(float).to_numpy()
        picked: dict[tuple, list[str]] = {}
        for p in eq.picks:
            picked.setdefault((p.org, p.system_id, p.accelerators), []).append(p.label)
        for at in np.flatnonzero(mine):
            picks[at] = "; ".join(picked.get(key[at], []))
    columns = {"family_reference": reference, "family_normalized_efficiency": efficiency}
    return table.assign(**columns, family_picks=picks)


# Where each result was first published, as the report says it (the scores marked over
# the loaded rounds and the bundled ones before the newest: ``mlperf.earlier``): -f csv
# and -f json carry them after the system's availability. The analysis never reads them.
FIRST_COLUMNS = ("first_round", "republished_in")
_RESULT_KEY = ["round", "org", "system_id", "benchmark"]


def with_first_rounds(frame: pd.DataFrame, scores: pd.DataFrame | None) -> pd.DataFrame:
    """``frame`` (rows of analysed results) with :data:`FIRST_COLUMNS` from ``scores``
    (one row per result), after ``availability``; ``frame`` itself where ``scores`` is
    None or lacks them."""
    if scores is None or not set(FIRST_COLUMNS) <= set(scores.columns):
        return frame
    marked = scores[[*_RESULT_KEY, *FIRST_COLUMNS]].fillna("").astype(str)
    marked = marked.drop_duplicates(_RESULT_KEY)
    keys = frame[_RESULT_KEY].astype(str)
    found = keys.merge(marked, on=_RESULT_KEY, how="left")[list(FIRST_COLUMNS)]
    found = found.set_axis(frame.index).fillna("")
    columns = [c for c in frame.columns if c not in FIRST_COLUMNS]
    at = columns.index("availability") + 1 if "availability" in columns else len(columns)
    out = frame[columns].copy()
    for offset, column in enumerate(FIRST_COLUMNS):
        out.insert(at + offset, column, found[column].to_numpy(object))
    return out


def analyze_document(rounds: list | None, bench: dict | None, notes: Sequence[str] = ()) -> dict:
    """``analyze -f json``: one shape whatever was analysed, ``{"rounds": [one object per
    (round, benchmark)], "bench": {...} or null, "notes": [lines]}`` (``notes``: what
    qualifies the analysis, as stderr says it)."""
    return {"rounds": rounds or [], "bench": bench, "notes": list(notes)}


def analysed_json(analysed: Analysed, scores: pd.DataFrame, bench: dict | None) -> dict:
    """``analyze -f json`` of the rounds (:func:`as_json`), ``bench`` beside them, with the
    analysis' notes."""
    rounds = as_json(analysed.results, analysed.options, scores)
    return analyze_document(rounds, bench, analysed.notes)


def stability_json(result: WorkloadAnalysis) -> dict[str, object] | None:
    """How the clusters hold with each system left out (``clusters.leave_one_out``), every
    number of it: each system's agreement (Rand index) and the k chosen without it, and
    their median, least and most, the systems of the least, the k's chosen and how often
    k changed; None for one cluster."""
    stability = result.clustering.stability
    if stability is None:
        return None
    keys = result.table[["org", "system_id", "accelerators"]].to_dict("records")
    each = [
        {**key, "agreement": float(a), "k": int(k)}
        for key, a, k in zip(keys, stability.agreement, stability.k, strict=True)
    ]
    return {
        "agreement_median": stability.median,
        "agreement_least": stability.least,
        "agreement_most": stability.most,
        "least_without": [each[row] for row in stability.moved_most],
        "k_seen": stability.k_seen,
        "k_changed": stability.k_changed,
        "systems": each,
    }


def as_json(
    results: list[WorkloadAnalysis], options: AnalysisOptions, scores: pd.DataFrame | None = None
) -> list[dict[str, object]]:
    """The documented JSON shape: one object per (round, benchmark); with ``scores``
    (the rounds' scores table), ``study_table_i``: the study's Table I set against them
    (``analysis.study_table``), else null."""
    study = study_statements(results, options)
    # the study's Table I is of its round only
    table_i = {(STUDY_ROUND, w): text for w, text in table_i_texts(scores).items()}
    out = []
    for result in results:
        # every column -f csv writes, in its order, its counts whole (448, never 448.0):
        # the JSON loses none of them
        systems = with_whole_counts(with_first_rounds(with_family_columns(result), scores))
        systems = systems.to_dict("records")
        out.append(
            {
                "round": result.round,
                "benchmark": result.workload,
                "benchmark_folders": sorted(result.table["benchmark"].unique()),
                "reference": _reference_json(result, options.reference),
                "clusters": {
                    "k": result.clustering.k,
                    "silhouette": result.clustering.silhouette,
                    "features": list(CLUSTER_FEATURES),
                    "leave_one_out": stability_json(result),
                },
                "systems": systems,
                # under a per-family reference: no pick by S or E' across families
                "equilibrium": equilibrium_json(overall_equilibrium(result), result.table),
                "equilibrium_by_family": [
                    equilibrium_json(e, result.table) for e in result.by_family
                ],
                # the family the answer leads with (the text's "(most counts)")
                "answer_family": scaling_family(result.table) or None,
                # the families of one system (outliers aside): no equilibrium of their own
                "families_alone": families_alone(result.table),
                "study": [
                    {"finding": st.finding, "verdict": st.verdict, "text": st.text}
                    for st in study
                    if (st.round, st.workload) == (result.round, result.workload)
                ],
                "study_table_i": table_i.get((result.round, result.workload)),
            }
        )
    return out

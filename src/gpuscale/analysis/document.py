"""The documented JSON shape of an analysis (``analyze -f json``): one object per (round,
benchmark) with its reference, clusters, systems, equilibria and the study's findings."""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from gpuscale.analysis.analyze import (
    AnalysisOptions,
    WorkloadAnalysis,
    overall_equilibrium,
    study_statements,
)
from gpuscale.analysis.equilibrium import Equilibrium, Pick
from gpuscale.analysis.metrics import Reference
from gpuscale.analysis.study_table import STUDY_ROUND, table_i_texts
from gpuscale.tables import (
    CI_COLUMNS,
    CI_POOL_COLUMNS,
    CLUSTER_COLUMN,
    CLUSTER_FEATURES,
    DECOMPOSITION_COLUMNS,
    PARETO_COLUMN,
)

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
    "gpu_hours",
    "samples_per_s_per_accelerator",
    "global_batch_size",
    "samples_to_converge",
    "convergence_unit",
    "samples_to_converge_flag",
    CLUSTER_COLUMN,
    PARETO_COLUMN,
    *CI_COLUMNS,
    *CI_POOL_COLUMNS,
    "reference_system_id",
    *DECOMPOSITION_COLUMNS,
)
# What ``analyze`` shows of each system on a terminal: its fields but the details (ids,
# rates, batch sizes, intervals, the decomposition): who, how many, how fast, how well.
# (an outlier is said in words under the table, ``terminal.outlier_sentences``)
_DETAILS = {"system_id", "nodes", "samples_per_s_per_accelerator", "reference_system_id"}
_DETAILS |= {"outlier"}
_DETAILS |= {"global_batch_size", "samples_to_converge", "convergence_unit"}
_DETAILS |= {"samples_to_converge_flag", *CI_COLUMNS, *CI_POOL_COLUMNS, *DECOMPOSITION_COLUMNS}
SUMMARY_FIELDS: tuple[str, ...] = tuple(c for c in SYSTEM_FIELDS if c not in _DETAILS)


def _pick_json(pick: Pick | None) -> dict[str, Any] | None:
    if pick is None:
        return None
    fields = asdict(pick)
    fields["criterion"] = fields.pop("label")  # the JSON names the criterion as people read it
    return fields


def equilibrium_json(eq: Equilibrium) -> dict[str, Any]:
    return {
        "scope": eq.scope,
        "reference": eq.reference or None,
        "threshold": eq.threshold,
        "pareto": eq.pareto,
        "knee": _pick_json(eq.knee),
        "max_speed_x_efficiency": _pick_json(eq.max_speed_x_efficiency),
        "efficiency_threshold": _pick_json(eq.efficiency_threshold),
        "agreement": eq.agreement,
        "unpicked": eq.unpicked,
    }


def _reference_json(result: WorkloadAnalysis, rule: str) -> dict[str, Any]:
    def one(ref: Reference) -> dict[str, Any]:
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


def analyze_document(rounds: list | None, bench: dict | None) -> dict:
    """``analyze -f json``: one shape whatever was analysed, ``{"rounds": [one object per
    (round, benchmark)], "bench": {...} or null}``."""
    return {"rounds": rounds or [], "bench": bench}


def as_json(
    results: list[WorkloadAnalysis], options: AnalysisOptions, scores: Any = None
) -> list[dict[str, Any]]:
    """The documented JSON shape: one object per (round, benchmark); with ``scores``
    (the rounds' scores table), ``study_table_i``: the study's Table I set against them
    (``analysis.study_table``), else null."""
    study = study_statements(results, options)
    # the study's Table I is of its round only
    table_i = {(STUDY_ROUND, w): text for w, text in table_i_texts(scores).items()}
    out = []
    for result in results:
        systems = result.table[list(SYSTEM_FIELDS)].to_dict("records")
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
                },
                "systems": systems,
                # under a per-family reference: no pick by S or E' across families
                "equilibrium": equilibrium_json(overall_equilibrium(result)),
                "equilibrium_by_family": [equilibrium_json(e) for e in result.by_family],
                "study": [
                    {"finding": st.finding, "verdict": st.verdict, "text": st.text}
                    for st in study
                    if (st.round, st.workload) == (result.round, result.workload)
                ],
                "study_table_i": table_i.get((result.round, result.workload)),
            }
        )
    return out

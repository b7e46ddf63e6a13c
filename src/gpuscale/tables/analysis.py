"""The columns of the analysis' outputs (scaling tables, intervals, decomposition, trends)
and the equilibrium criteria."""

from __future__ import annotations

from gpuscale.tables.codes import Code

# One row per scored system of a benchmark (``gpuscale.analysis.scaling_table``).
SCALING_COLUMNS: tuple[str, ...] = (
    "round",
    "benchmark",
    "workload",
    "org",
    "submitter",
    "system_id",
    "system_name",
    "division",
    "availability",
    "accelerator_family",
    "nodes",
    "accelerators",
    "time_to_train_min",
    "runs_converged",
    "score_reason",  # why the score is less certain ("" when not; e.g. fewer result files)
    "scaling_factor",
    "global_batch_size",
    "samples_to_converge",
    "convergence_unit",  # what samples_to_converge counts: samples, epochs, steps, tokens
    "samples_to_converge_flag",  # why it cannot be true ("": plausible); flagged: unused
    "reference_rule",
    "reference_org",
    "reference_submitter",
    "reference_system_id",
    "reference_accelerators",
    "reference_time_to_train_min",
    "speedup",
    "efficiency",
    "normalized_efficiency",
    "superlinear",  # why E' is above 1 ("" when not; gpuscale.analysis.superlinear)
    "outlier",  # why its time is off its family's at its count ("": not; analysis.outliers)
    "accelerator_hours",
    "samples_per_s_per_accelerator",
)
# Columns of a scores table that its scaling table keeps, after ``SCALING_COLUMNS``, where
# the scores carry them: ``framework``, each result's system's field, joined from the
# systems table by ``gpuscale.analysis.software.with_framework``
CARRIED_COLUMNS: tuple[str, ...] = ("framework",)

# An ``outlier`` cell of a system alone at its count: where it is alone, this, and the
# outlier of its submitter it rests on (``analysis.outliers``)
ELSEWHERE = "; elsewhere "


def root_reason(reason: str) -> str:
    """The outlier an ``outlier`` cell rests on: for a system alone at its count, its
    submitter's outlier elsewhere; else the reason itself."""
    return reason.split(ELSEWHERE, 1)[-1]


# A scored system of a scaling table as every reader names it: who, which system, its
# family and count, and its official time to train.
SYSTEM_COLUMNS: tuple[str, ...] = (
    "org",
    "submitter",
    "system_id",
    "system_name",
    "accelerator_family",
    "accelerators",
    "time_to_train_min",
)

# The answer first: per workload and scope, the count each equilibrium criterion picks and
# the system it picks (``gpuscale.analysis.answers``); ``accelerators`` empty where a
# criterion picks nothing, ``note`` why.
ANSWER_SCHEMA: dict[str, str] = {
    "round": "str",
    "workload": "str",
    "scope": "str",  # "<family> (most counts)" or "all systems"
    "criterion": "str",
    "accelerators": "Int64",
    "submitter": "str",
    "system_name": "str",
    "accelerator_family": "str",
    "time_to_train_min": "float64",
    "note": "str",
    # "fewest" or "most": the pick is the smallest or largest count its scope's systems
    # (outliers aside) ran, so no fewer or no more was measured; "" between them
    "edge": "str",
}
ANSWER_COLUMNS: tuple[str, ...] = tuple(ANSWER_SCHEMA)
# The columns an answer row takes from the picked system.
ANSWER_PICK_COLUMNS: tuple[str, ...] = ANSWER_COLUMNS[4:-2]

# Columns ``analyze`` adds to a scaling table.
CLUSTER_COLUMN = "cluster"
PARETO_COLUMN = "pareto"
# Each measure's 95% interval: ``<measure>_ci_low`` and ``<measure>_ci_high``.
CI_COLUMNS: tuple[str, ...] = tuple(
    f"{measure}_ci_{end}"
    for measure in ("time_to_train_min", "speedup", "normalized_efficiency")
    for end in ("low", "high")
)
# Each row's 95% intervals of speedup and E' against its own accelerator family's reference
# (``metrics.within_own_family``, the report's like-with-like figures' and ``-r family``'s),
# that reference's runs and choice resampled too (``score_intervals.family_intervals``).
FAMILY_CI_COLUMNS: tuple[str, ...] = tuple(f"family_{c}" for c in CI_COLUMNS[2:])
# What the intervals kept out of a result's pooled convergence: how many results (and RCP
# batches) at its batch converge so differently that no one law holds both
# (``gpuscale.analysis.score_intervals``), and the ratio of the farthest one's samples to
# converge to its own (NaN where none); and how many of its counted runs logged a time
# that cannot be true (the runs' ``time_flag``), whose times no draw takes.
CI_POOL_COLUMNS: tuple[str, ...] = ("ci_kept_apart", "ci_kept_apart_ratio", "ci_untimed_runs")
DECOMPOSITION_COLUMNS: tuple[str, ...] = (
    "throughput_per_s",  # samples_to_converge / (60 T), in convergence_unit per second
    "throughput_factor",
    "convergence_factor",
    "throughput_efficiency",
    "expected_samples_to_converge",  # E(B) of the round's RCPs at the global batch
    "samples_vs_expected",
    "convergence_basis",  # "expected" or "measured": the samples the factors used
    "decomposition_flag",  # why its factors cannot be true ("" when they can): not given
)
# The K-means features (each standardised), in the order clustering uses them.
CLUSTER_FEATURES: tuple[str, ...] = (
    "log10_accelerators",
    "log10_time_to_train_min",
    "normalized_efficiency",
)


# One row per (workload, accelerator family, round) (``gpuscale.analysis.trends``).
TREND_COLUMNS = (
    "workload",
    "accelerator_family",
    "round",
    "benchmark_folder",
    "systems",
    "common_accelerators",
    "best_time_at_common_min",
    "largest_accelerators",
    "best_time_at_largest_min",
    "normalized_efficiency_at_largest",
    "equilibrium_accelerators",
    # the fastest system at the common count (ORG/SYSTEM_ID) and its ``framework`` field
    # ("" where the systems table was not given): what a change at that count rests on
    "system_at_common",
    "framework_at_common",
    # that system's global batch and samples to converge (NaN where flagged as impossible)
    # in its ``convergence_unit``: what splits a change of time into throughput and samples
    "global_batch_at_common",
    "samples_to_converge_at_common",
    "convergence_unit_at_common",
    # where the family's most common count moved since its row of the round before (in a
    # row, the same quality target): of the counts both rounds ran, the one whose best
    # time changed most either way, that round, and the best time there in it and in this
    # one (trends' headline states the largest); empty elsewhere
    "shared_with_round",
    "shared_accelerators",
    "best_time_at_shared_before_min",
    "best_time_at_shared_min",
    "note",
)


# The threshold criterion's default: the largest count keeping E' >= 0.8 x the best E'.
DEFAULT_EFFICIENCY_THRESHOLD: float = 0.8


class Criterion(Code):
    """An equilibrium criterion (``gpuscale.analysis.equilibrium``)."""

    KNEE = "knee"
    SPEED_X_EFFICIENCY = "speed x efficiency"
    EFFICIENCY_THRESHOLD = "efficiency threshold"

    def label(self, threshold: float) -> str:
        """How people read it: ``E' >= 0.8 x best`` for the threshold criterion."""
        if self is Criterion.EFFICIENCY_THRESHOLD:
            return f"E' >= {threshold:g} x best"
        return self.value


# The cross-round dataset (``gpuscale dataset``): one row per result (system x benchmark
# x round), the official score beside the system's facts ...
DATASET_COLUMNS: tuple[str, ...] = (
    "round",
    "division",
    "availability",
    "org",
    "submitter",
    "system_id",
    "system_name",
    "accelerator_family",
    "accelerator_model",
    "nodes",
    "accelerators_per_node",
    "accelerators",
    "framework",
    "accelerator_interconnect",
    "host_networking",
    "host_processor_model",
    "benchmark",
    "workload",
    "workload_name",
    "time_to_train_min",
    "score_reason",
    "runs",
    "runs_converged",
    "runs_required",
    "kept_runs",
    "scaling_factor",
    "global_batch_size",
    "samples_to_converge",
    "convergence_unit",
    "samples_to_converge_flag",
    "energy_kj",
    "energy_flag",  # why its power per accelerator cannot be true ("": plausible)
    "first_round",
    "republished_in",
    "same_runs_as",
    "log_flag",
)
# ... and one row per run of those results.
DATASET_RUNS_COLUMNS: tuple[str, ...] = (
    "round",
    "org",
    "system_id",
    "benchmark",
    "workload",
    "run_file",
    "status",
    "counted",
    "kept",
    "time_to_train_min",
    "global_batch_size",
    "samples_to_converge",
    "samples_to_converge_flag",  # the result's: why its count cannot be true
    "final_quality",
    "seed",
    "energy_kj",
    "problem",
)

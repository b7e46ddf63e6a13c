"""Column names of every table gpuscale produces: the one place they are defined.

Units are in the names (``_min``, ``_ms``, ``_s``, ``_kj``). The README documents each
table; tests check that the tables carry exactly these columns.
"""

from __future__ import annotations

SYSTEMS_COLUMNS: tuple[str, ...] = (
    "round",
    "org",
    "submitter",
    "system_id",
    "system_name",
    "division",
    "availability",
    "nodes",
    "accelerators_per_node",
    "accelerators",
    "accelerator_model",
    "accelerator_family",
    "accelerator_host_interconnect",
    "accelerator_interconnect",
    "accelerator_interconnect_topology",
    "host_networking",
    "host_networking_topology",
    "host_processor_model",
    "framework",
    "cooling",
    "official_row",
)

RUNS_COLUMNS: tuple[str, ...] = (
    "round",
    "org",
    "submitter",
    "system_id",
    "benchmark",
    "workload",
    "run_file",
    "run_start_ms",
    "run_stop_ms",
    "time_to_train_min",
    "status",
    "counted",
    "kept",
    "problem",
    "log_benchmark",
    "log_division",
    "global_batch_size",
    "samples_to_converge",
    "mean_logged_throughput",
    "final_quality",
    "seed",
    "mllog_lines",
    "parse_errors",
    "compute_energy_kj",
    "interconnect_energy_kj",
    "energy_kj",
)

# The columns of ``scores`` that are copied from the system's row of ``systems``.
SCORES_SYSTEM_COLUMNS: tuple[str, ...] = (
    "submitter",
    "system_name",
    "division",
    "availability",
    "accelerator_family",
    "accelerator_model",
    "nodes",
    "accelerators",
)

SCORES_COLUMNS: tuple[str, ...] = (
    "round",
    "org",
    "submitter",
    "system_id",
    "system_name",
    "division",
    "availability",
    "accelerator_family",
    "accelerator_model",
    "nodes",
    "accelerators",
    "benchmark",
    "workload",
    "runs",
    "runs_converged",
    "runs_required",
    "scaling_factor",
    "time_to_train_min",
    "score_reason",
    "kept_runs",
    "global_batch_size",
    "samples_to_converge",
    "source",
    "energy_kj",
)

PROBLEMS_COLUMNS: tuple[str, ...] = ("round", "path", "kind", "message")

# Run status values, most specific first.
RUN_STATUSES: tuple[str, ...] = (
    "success",
    "aborted",
    "not converged",
    "missing run_stop",
    "missing run_start",
    "parse error",
    "noncompliant",
    "not text",
)

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
    "scaling_factor",
    "global_batch_size",
    "samples_to_converge",
    "reference_rule",
    "reference_org",
    "reference_submitter",
    "reference_system_id",
    "reference_accelerators",
    "reference_time_to_train_min",
    "speedup",
    "efficiency",
    "normalized_efficiency",
    "gpu_hours",
    "samples_per_s_per_accelerator",
)

# Columns ``analyze`` adds to a scaling table.
CLUSTER_COLUMN = "cluster"
PARETO_COLUMN = "pareto"
CI_COLUMNS: tuple[str, ...] = (
    "time_to_train_min_ci_low",
    "time_to_train_min_ci_high",
    "speedup_ci_low",
    "speedup_ci_high",
    "normalized_efficiency_ci_low",
    "normalized_efficiency_ci_high",
)

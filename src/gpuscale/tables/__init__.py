"""The data model: every table gpuscale produces, its columns, statuses and codes.

Producers (``gpuscale.mlperf`` reading rounds, ``gpuscale.bench`` measuring) write these
tables; consumers read them. ``gpuscale.analysis`` and ``gpuscale.planning`` import no
producer module but at three seams: ``analysis.critical_batch`` (the reference convergence
points mlperf-logging ships, and a round's ruleset), ``analysis.trends`` (each workload's
first and last rounds in the rules, for the public ``trend_table``) and ``planning.cache``
(the bundled rounds, when the shipped fits are stale); the ``consumers-read-tables`` contract in
``pyproject.toml`` holds them to it. ``gpuscale.advice`` and ``gpuscale.report`` are not
held to it: they import the bench reader, the bundled rounds, the RCPs, a round's
ruleset and the MLPerf benchmark catalogue. Facts about hardware (peaks, board power,
names, links) are not a producer's: they live in ``gpuscale.hardware``, which every layer
above it may read. Nothing here reads or writes files, but where output may go is checked
here, by every request with an ``--out`` (``out_paths``, ``raw_rounds``, ``writable``).

Column names are a stable, documented schema (README, "Output schema"); units are in the
names (``_min``, ``_ms``, ``_s``, ``_kj``, ``_gbs``). The device count is ``accelerators``
in every table: MLPerf's accelerators, and for ``gpuscale bench`` the processes of a run,
one per device (GPUs, or CPU processes under gloo).
"""

from gpuscale.tables.analysis import (
    ANSWER_COLUMNS,
    ANSWER_PICK_COLUMNS,
    ANSWER_SCHEMA,
    CARRIED_COLUMNS,
    CI_COLUMNS,
    CI_POOL_COLUMNS,
    CLUSTER_COLUMN,
    CLUSTER_FEATURES,
    DATASET_COLUMNS,
    DATASET_RUNS_COLUMNS,
    DECOMPOSITION_COLUMNS,
    DEFAULT_EFFICIENCY_THRESHOLD,
    FAMILY_CI_COLUMNS,
    PARETO_COLUMN,
    SCALING_COLUMNS,
    TREND_COLUMNS,
    Criterion,
)
from gpuscale.tables.bench_schema import (
    BENCH_COLUMNS,
    BENCH_CONFIG_COLUMNS,
    BENCH_GROUP_COLUMNS,
    BENCH_TIMING_COLUMNS,
    COLLECTIVES_COLUMNS,
    BenchStatus,
)
from gpuscale.tables.codes import Code
from gpuscale.tables.rounds import (
    COUNT_COLUMNS,
    PROBLEMS_COLUMNS,
    PROBLEMS_SCHEMA,
    RUNS_COLUMNS,
    RUNS_SCHEMA,
    SCORES_COLUMNS,
    SCORES_SCHEMA,
    SCORES_SYSTEM_COLUMNS,
    SYSTEMS_COLUMNS,
    SYSTEMS_SCHEMA,
    Cell,
    ProblemKind,
    ProblemRow,
    RoundTables,
    Row,
    RunStatus,
    frame_of,
    problem_row,
)
from gpuscale.tables.workloads import (
    FOLDER_ALIASES,
    RENAMED,
    STUDY_WORKLOADS,
    WORKLOADS,
    Unit,
    Workload,
    benchmark_of_folder,
    convergence_unit,
    counts_samples,
    display_name,
    round_key,
    workload_facts,
    workload_of,
)

__all__ = [
    "ANSWER_COLUMNS",
    "ANSWER_PICK_COLUMNS",
    "ANSWER_SCHEMA",
    "BENCH_COLUMNS",
    "BENCH_CONFIG_COLUMNS",
    "BENCH_GROUP_COLUMNS",
    "BENCH_TIMING_COLUMNS",
    "CARRIED_COLUMNS",
    "CI_COLUMNS",
    "CI_POOL_COLUMNS",
    "CLUSTER_COLUMN",
    "CLUSTER_FEATURES",
    "COLLECTIVES_COLUMNS",
    "COUNT_COLUMNS",
    "DATASET_COLUMNS",
    "DATASET_RUNS_COLUMNS",
    "DECOMPOSITION_COLUMNS",
    "DEFAULT_EFFICIENCY_THRESHOLD",
    "FAMILY_CI_COLUMNS",
    "FOLDER_ALIASES",
    "PARETO_COLUMN",
    "PROBLEMS_COLUMNS",
    "PROBLEMS_SCHEMA",
    "RENAMED",
    "RUNS_COLUMNS",
    "RUNS_SCHEMA",
    "SCALING_COLUMNS",
    "SCORES_COLUMNS",
    "SCORES_SCHEMA",
    "SCORES_SYSTEM_COLUMNS",
    "STUDY_WORKLOADS",
    "SYSTEMS_COLUMNS",
    "SYSTEMS_SCHEMA",
    "TREND_COLUMNS",
    "WORKLOADS",
    "BenchStatus",
    "Cell",
    "Code",
    "Criterion",
    "ProblemKind",
    "ProblemRow",
    "RoundTables",
    "Row",
    "RunStatus",
    "Unit",
    "Workload",
    "benchmark_of_folder",
    "convergence_unit",
    "counts_samples",
    "display_name",
    "frame_of",
    "problem_row",
    "round_key",
    "workload_facts",
    "workload_of",
]

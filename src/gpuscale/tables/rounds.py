"""The tables of MLPerf rounds: systems, runs, scores, problems; run statuses and problem kinds."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from gpuscale.tables.codes import Code
from gpuscale.tables.republished import mark_republished

if TYPE_CHECKING:  # pandas only when tables are built: the CLI starts without it
    import pandas as pd


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
    "accelerator_vendor",
    "accelerator_product",
    "accelerator_form_factor",
    "accelerator_memory_gb",
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

# Whole-number columns of ``systems`` (pandas ``Int64``: empty where unknown).
COUNT_COLUMNS: tuple[str, ...] = (
    "nodes",
    "accelerators_per_node",
    "accelerators",
    "accelerator_memory_gb",
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
    "first_round",
    "republished_in",
)

PROBLEMS_COLUMNS: tuple[str, ...] = ("round", "path", "kind", "message")


class RunStatus(Code):
    """The ``status`` of a row of ``runs``, most specific first (a run that stopped with
    another logged status, e.g. ``aborted``, keeps that word)."""

    SUCCESS = "success"
    ABORTED = "aborted"
    NOT_CONVERGED = "not converged"
    MISSING_RUN_STOP = "missing run_stop"
    MISSING_RUN_START = "missing run_start"
    PARSE_ERROR = "parse error"
    NONCOMPLIANT = "noncompliant"
    NOT_TEXT = "not text"
    UNREADABLE = "unreadable"
    IMPOSSIBLE_VALUE = "impossible value"


class ProblemKind(Code):
    """The ``kind`` of a row of ``problems`` (besides the run statuses, which a run that
    does not count reports under its own status)."""

    MISSING_SYSTEM = "missing system"
    UNKNOWN_BENCHMARK = "unknown benchmark"
    EMPTY_BENCHMARK = "empty benchmark"
    BAD_SYSTEM = "bad system description"
    MISSING_FIELD = "missing field"
    BAD_FIELD = "bad field"
    BAD_SCALING = "bad scaling.json"
    UNSAFE_PATH = "unsafe path"
    NOT_A_FILE = "not a file"
    CORRUPT_ARCHIVE = "corrupt archive"
    UNREADABLE = "unreadable"
    NO_SCORE = "no score"
    POWER_LOG = "power log"
    WORKER = "worker"
    IMPOSSIBLE_VALUE = "impossible value"
    UNKNOWN_ACCELERATOR = "unknown accelerator"


@dataclass(frozen=True, slots=True)
class RoundTables:
    """The four tables of one or more rounds (columns: ``*_COLUMNS`` above)."""

    systems: pd.DataFrame
    runs: pd.DataFrame
    scores: pd.DataFrame
    problems: pd.DataFrame

    NAMES = ("systems", "runs", "scores", "problems")

    @staticmethod
    def concat(parts: Iterable[RoundTables]) -> RoundTables:
        import pandas as pd

        parts = list(parts)
        if not parts:
            return RoundTables.empty()
        systems, runs, scores, problems = (
            pd.concat([getattr(p, name) for p in parts], ignore_index=True)
            for name in RoundTables.NAMES
        )
        return RoundTables(systems, runs, mark_republished(scores, runs), problems)

    @staticmethod
    def empty() -> RoundTables:
        import pandas as pd

        return RoundTables(
            *(
                pd.DataFrame(columns=list(columns))
                for columns in (SYSTEMS_COLUMNS, RUNS_COLUMNS, SCORES_COLUMNS, PROBLEMS_COLUMNS)
            )
        )

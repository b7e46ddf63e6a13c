"""The tables of MLPerf rounds: systems, runs, scores, problems; run statuses and problem kinds."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, TypeAlias, TypedDict

from gpuscale.quantities import UNPRINTABLE, printable
from gpuscale.tables.codes import Code
from gpuscale.tables.republished import mark_copies
from gpuscale.tables.result_repr import result_repr
from gpuscale.tables.workloads import round_key

if TYPE_CHECKING:  # pandas only when tables are built: the CLI starts without it
    import pandas as pd


# Each table's columns in order, with the dtype its frame holds (pandas names: ``str``
# text, ``Int64`` whole numbers that may be missing, ``int64`` whole numbers that never
# are, ``float64`` measurements (NaN where missing), ``bool``). :func:`frame_of` builds a
# frame from rows with these columns and casts the numbers once.
SYSTEMS_SCHEMA: dict[str, str] = {
    "round": "str",
    "org": "str",
    "submitter": "str",
    "system_id": "str",
    "system_name": "str",
    "division": "str",
    "availability": "str",
    "nodes": "Int64",
    "accelerators_per_node": "Int64",
    "accelerators": "Int64",
    "accelerator_model": "str",
    "accelerator_family": "str",
    "accelerator_vendor": "str",
    "accelerator_product": "str",
    "accelerator_form_factor": "str",
    "accelerator_memory_gb": "Int64",
    "accelerator_host_interconnect": "str",
    "accelerator_interconnect": "str",
    "accelerator_interconnect_topology": "str",
    "host_networking": "str",
    "host_networking_topology": "str",
    "host_processor_model": "str",
    "framework": "str",
    "cooling": "str",
    "official_row": "bool",
}
SYSTEMS_COLUMNS: tuple[str, ...] = tuple(SYSTEMS_SCHEMA)
UNKNOWN_FAMILY = "unknown"  # the accelerator_family of a system that names no accelerator

# Whole-number columns of ``systems`` (pandas ``Int64``: empty where unknown).
COUNT_COLUMNS: tuple[str, ...] = tuple(c for c, d in SYSTEMS_SCHEMA.items() if d == "Int64")

RUNS_SCHEMA: dict[str, str] = {
    "round": "str",
    "org": "str",
    "submitter": "str",
    "system_id": "str",
    "benchmark": "str",
    "workload": "str",
    "run_file": "str",
    "run_start_ms": "float64",
    "run_stop_ms": "float64",
    "time_to_train_min": "float64",
    "status": "str",
    "counted": "bool",
    "kept": "bool",
    "problem": "str",
    "time_flag": "str",  # why its time cannot be true ("" when it can); counted all the same
    "log_benchmark": "str",
    "log_division": "str",
    "global_batch_size": "float64",
    "samples_to_converge": "float64",
    "mean_logged_throughput": "float64",
    "final_quality": "str",
    "seed": "str",
    "mllog_lines": "int64",
    "parse_errors": "int64",
    "compute_energy_kj": "float64",
    "interconnect_energy_kj": "float64",
    "energy_kj": "float64",
    "power_scope": "str",  # AC or DC as its power logs state it ("" where they state none)
}
RUNS_COLUMNS: tuple[str, ...] = tuple(RUNS_SCHEMA)

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

# A score's system: its key (round, org, system_id) and the columns copied from its row of
# ``systems``, typed as there.
_SCORE_SYSTEM = ("round", "org", "submitter", "system_id", *SCORES_SYSTEM_COLUMNS[1:])
SCORES_SCHEMA: dict[str, str] = {
    **{column: SYSTEMS_SCHEMA[column] for column in _SCORE_SYSTEM},
    "benchmark": "str",
    "workload": "str",
    "runs": "int64",
    "runs_converged": "int64",
    "runs_required": "int64",
    "scaling_factor": "float64",
    "time_to_train_min": "float64",
    "score_reason": "str",
    "kept_runs": "int64",
    "repeated_runs": "int64",  # runs with another's start and stop (tables.repeated_runs)
    "global_batch_size": "float64",
    "samples_to_converge": "float64",
    "convergence_unit": "str",  # samples, epochs, steps or tokens (the RCPs' unit)
    "samples_to_converge_flag": "str",  # why it cannot be true ("" when plausible)
    "source": "str",
    "energy_kj": "float64",
    "power_scope": "str",  # where its power was measured (tables.power_scope)
    "first_round": "str",
    "republished_in": "str",
    "same_runs_as": "str",
    "log_flag": "str",  # why its logs contradict their folder ("" when they agree)
}
SCORES_COLUMNS: tuple[str, ...] = tuple(SCORES_SCHEMA)

PROBLEMS_SCHEMA: dict[str, str] = {"round": "str", "path": "str", "kind": "str", "message": "str"}
PROBLEMS_COLUMNS: tuple[str, ...] = tuple(PROBLEMS_SCHEMA)


# A value of a row before :func:`frame_of` casts its column: text, a number, a flag, or
# missing (None). A row of ``systems``, ``runs`` or ``scores`` maps column names to cells.
Cell: TypeAlias = str | int | float | bool | None
Row: TypeAlias = dict[str, Cell]


class ProblemRow(TypedDict):
    """One row of ``problems``."""

    round: str
    path: str
    kind: str
    message: str


# What :func:`frame_of` casts: numbers that may be missing in a row (None -> NaN / <NA>).
CAST_DTYPES = ("float64", "Int64")


def _printable_lines(text: str) -> str:
    return printable(text, lines=True)


def frame_of(schema: dict[str, str], rows: Iterable[Mapping[str, object]] = ()) -> pd.DataFrame:
    """A frame of ``rows`` (dicts) with exactly the ``schema``'s columns, in order (None
    where a row lacks one), its number columns cast to their dtypes: a table kind whose
    numbers stay numbers even when a round has none of them. Text columns are
    :func:`gpuscale.quantities.printable` (newlines and tabs kept: a failed run's
    traceback): a control character read from a log or an archive (a terminal's escape,
    a NUL) is stored as its escape, so no table, terminal or page shows it raw."""
    import pandas as pd  # lazy: pandas, the tables package loads without it (the CLI imports it)

    frame = pd.DataFrame(list(rows), columns=list(schema))
    for name, dtype in schema.items():
        if dtype in CAST_DTYPES:
            frame[name] = frame[name].astype(dtype)
        elif dtype == "str" and (frame[name].dtype == object or frame[name].dtype == "str"):
            raw = frame[name].str.contains(UNPRINTABLE, regex=True, na=False)
            if raw.any():
                frame.loc[raw, name] = frame.loc[raw, name].map(_printable_lines)
    return frame


def problem_row(round_name: str, path: str, kind: str, message: str) -> ProblemRow:
    """One row of ``problems``: where (``path`` inside the round), what kind, and why."""
    return {"round": round_name, "path": path, "kind": str(kind), "message": message}


class RunStatus(Code):
    """The ``status`` of a row of ``runs``, most specific first (a run whose ``run_stop``
    logged any status but ``success`` (``aborted``, ``abort``, ``fail``...) is ``aborted``,
    the logged word in its problem's message)."""

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
    UNREAD_LOG = "unread log"  # named like a run log where MLCommons' tools read none
    CORRUPT_ARCHIVE = "corrupt archive"
    UNREADABLE = "unreadable"
    NO_SCORE = "no score"
    FEWER_RUNS = "fewer runs"  # scored, as the official tool scores it, from fewer runs
    POWER_LOG = "power log"
    WORKER = "worker"
    IMPOSSIBLE_VALUE = "impossible value"
    UNKNOWN_ACCELERATOR = "unknown accelerator"
    SAME_RUNS = "same runs"  # one result under two system names in a round
    INCONSISTENT_LOG = "inconsistent log"  # reported, still counted (the official tool does)
    OTHER_RULESET = "other ruleset"  # mlperf-logging has no rules for the round: an earlier's
    OTHER_ROUND = "other round"  # the logs' dates or benchmarks are another round's
    NOT_AS_PUBLISHED = "not as published"  # a bundled round's copy that scores otherwise


# How a ``POWER_LOG`` problem ends where its file gave no power: its run has no energy
# (``mlperf.power`` writes it; ``analysis.energy_per_result`` finds those problems by it)
NO_POWER = "; its run gets no energy"


@dataclass(frozen=True, slots=True)
class RoundTables:
    """The four tables of one or more rounds (columns: ``*_COLUMNS`` above)."""

    systems: pd.DataFrame
    runs: pd.DataFrame
    scores: pd.DataFrame
    problems: pd.DataFrame

    NAMES = ("systems", "runs", "scores", "problems")

    @property
    def rounds(self) -> tuple[str, ...]:
        """The rounds the tables hold (of their systems, runs or results), oldest first."""
        held = {*self.systems["round"], *self.runs["round"], *self.scores["round"]}
        return tuple(sorted(map(str, held), key=round_key))

    def __repr__(self) -> str:
        """The rounds read and each table's rows; the tables are the fields."""
        rounds = sorted(set(self.systems["round"]) | set(self.scores["round"]))
        counts = ", ".join(f"{len(getattr(self, name)):,} {name}" for name in self.NAMES)
        return result_repr(
            f"RoundTables ({', '.join(rounds) or 'empty'})",
            [counts],
            [f".{name}" for name in self.NAMES],
        )

    @staticmethod
    def concat(parts: Iterable[RoundTables]) -> RoundTables:
        import pandas as pd  # lazy: pandas, as in frame_of

        parts = list(parts)
        if not parts:
            return RoundTables.empty()
        systems, runs, scores, problems = (
            pd.concat([getattr(p, name) for p in parts], ignore_index=True)
            for name in RoundTables.NAMES
        )
        return RoundTables(systems, runs, mark_copies(scores, runs), problems)

    @staticmethod
    def empty() -> RoundTables:
        return RoundTables(
            *(
                frame_of(schema)
                for schema in (SYSTEMS_SCHEMA, RUNS_SCHEMA, SCORES_SCHEMA, PROBLEMS_SCHEMA)
            )
        )

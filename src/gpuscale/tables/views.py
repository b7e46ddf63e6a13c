"""What a terminal shows of each table: a :class:`TableView` (the table, the columns a
terminal shows by default, what a narrow one drops first, the notes that qualify it and
the sentences under it), made by the library and drawn by the CLI. CSV and JSON carry
every column of the view's table; the terminal's columns are a view, not the schema."""

from __future__ import annotations

import csv
import io
import math
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from gpuscale.quantities import counted, of_the
from gpuscale.tables.commands import suggested_command
from gpuscale.tables.json_depth import JSON
from gpuscale.tables.repeated_runs import repeated_notes
from gpuscale.tables.republished import in_a_twin_pair, is_same_runs_copy
from gpuscale.tables.round_requests import ScoresOptions
from gpuscale.tables.rounds import RoundTables
from gpuscale.tables.workloads import not_scored_by, own_folder, round_key, rules_round
from gpuscale.tables.written import formula_safe, with_whole_counts

if TYPE_CHECKING:
    import pandas as pd

SCORE_SHOWN = (
    "round",
    "benchmark",
    "submitter",
    "system_id",
    "system_name",
    "accelerator_family",
    "accelerators",
    "runs",
    "runs_converged",
    "runs_required",
    "scaling_factor",
    "time_to_train_min",
    "score_reason",
)
SCORE_DROP_ORDER = ("scaling_factor", "runs_converged", "runs", "system_id", "submitter")

ENERGY_SHOWN = (
    "round",
    "workload",
    "submitter",
    "system_name",
    "accelerator_family",
    "accelerators",
    "time_to_train_min",
    "power_scope",
    "energy_kj",
    "energy_per_sample_j",
    "energy_per_accelerator_hour_kj",
    "compute_share",
)
ENERGY_DROP_ORDER = (
    "compute_share",
    "energy_per_accelerator_hour_kj",
    "submitter",
    "time_to_train_min",
    "accelerator_family",
)
# What names a row of energy's table: two results of a system measured at the wall (AC)
# and at the supply (DC) differ only in their power scope, and a benchmark's results in
# their round; a narrow terminal keeps these where rows differ in them.
ENERGY_KEYS = ("round", "workload", "system_name", "accelerators", "power_scope")
# a best time at the common count means nothing without that count: it goes first
TREND_DROP_ORDER = (
    "benchmark_folder",
    "systems",
    "best_time_at_common_min",
    "common_accelerators",
)


SIGNIFICANT_DIGITS = 15  # a float's digits in JSON and CSV: the most a double always keeps


def significant(value: float) -> float:
    """``value`` at :data:`SIGNIFICANT_DIGITS`, as JSON and CSV write it: 2.92, not the
    sum's binary noise 2.9200000000000004 (the number held in memory stays whole)."""
    return float(f"{value:.{SIGNIFICANT_DIGITS}g}")


def written(value: object) -> object:
    """A cell as CSV writes it: a float :func:`significant`, anything else as it is."""
    return significant(value) if isinstance(value, float) else value


def csv_cell(value: object) -> object:
    """A table's cell as every ``-f csv`` writes it: :func:`written`, a tuple's items too,
    "; "-separated (a row's kinds, every repeat's samples/s): never a repr; text a
    spreadsheet would run as a formula (a system name from a log, ``=HYPERLINK(...)``)
    after one ``'``, as the files ``ingest`` writes hold it
    (:func:`~gpuscale.tables.written.formula_safe`)."""
    if isinstance(value, tuple):
        return formula_safe("; ".join(str(written(item)) for item in value))
    return formula_safe(written(value))


def jsonable(value: object) -> JSON:
    """Plain JSON values (every command's JSON document): NaN becomes null, numpy
    scalars become Python numbers, pandas' missing values null, floats :func:`significant`."""
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [jsonable(v) for v in value]
    if hasattr(value, "item") and not isinstance(value, str):
        value = value.item()
    if isinstance(value, float):
        return significant(value) if math.isfinite(value) else None
    pd = sys.modules.get("pandas")  # never imported: no pandas value can be here
    if pd is not None and (value is pd.NA or value is pd.NaT):
        return None
    return value


def records_csv(records: Sequence[Mapping[str, object]]) -> str:
    """Plain records (dicts with the same keys, in column order) as CSV text, without
    pandas: a header, then a line per record, NaN and None empty as pandas writes them,
    each other cell :func:`csv_cell`."""
    columns = list(next(iter(records), []))
    text = io.StringIO()
    writer = csv.writer(text, lineterminator="\n")
    writer.writerow(columns)
    for record in records:
        writer.writerow(["" if jsonable(v := record[c]) is None else csv_cell(v) for c in columns])
    return text.getvalue()


@dataclass(frozen=True, slots=True)
class TableView:
    """A table as a command shows it. ``frame``: every column (what ``-f csv`` and ``-f
    json`` print); ``shown``: the terminal's columns, in order; ``drop_order``: what a
    terminal too narrow drops first; ``every``: how to get the columns ``shown`` leaves
    out; ``notes``: what qualifies the numbers (stderr, every format); ``said``: sentences
    under the terminal's table; ``formats``: a terminal's format spec per column
    (``".2f"``; else four significant digits); ``document``: what ``-f json`` prints in
    place of the rows, where a command answers with more than its table (its notes are
    in it: none is said beside it); ``headline``: the answer, said first (above the
    terminal's table, the first lines of stdout; its numbers are the table's, made by the
    library from the same rows); ``keys``: the columns that name a row (where rows differ
    in one, a narrow terminal keeps it: without it, rows look like duplicates);
    ``said_of``: the column ``said`` is made of, row by row (trends' ``note``), where so:
    CSV and JSON rows carry it already (their stderr leaves ``said`` out then);
    ``renamed``: columns named otherwise here than in other tables (counts to converge by
    their unit: ``samples_to_converge`` is ``epochs_to_converge``), what ``--columns``
    offers for the other name; ``explained``: what ``--explain`` adds under the terminal's
    table (how each column is made, which results no row holds and why)."""

    frame: pd.DataFrame
    shown: Sequence[str]
    title: str = ""
    drop_order: Sequence[str] = ()
    every: str = ""
    notes: tuple[str, ...] = ()
    said: tuple[str, ...] = ()
    empty: str = field(default="")  # why there is no row (said instead of a table)
    formats: dict[str, str] = field(default_factory=dict)  # a terminal's format per column
    document: Mapping[str, object] | None = None
    headline: tuple[str, ...] = ()
    keys: Sequence[str] = ("round",)
    said_of: str = ""
    renamed: Mapping[str, str] = field(default_factory=dict)  # {other tables' name: this one's}
    explained: tuple[str, ...] = ()  # --explain's lines under the table (how each column is made)

    @property
    def every_column(self) -> list[str]:
        """What CSV and JSON print where no ``--columns`` was asked (they are lossless):
        the terminal's columns first, then every other one of ``frame``."""
        return [*self.shown, *(c for c in self.frame.columns if c not in self.shown)]

    @property
    def said_apart(self) -> tuple[str, ...]:
        """``said`` where the rows do not carry it (``said_of``): what CSV and JSON add."""
        return () if self.said_of else self.said

    def __post_init__(self) -> None:
        # Counts held as floats for arithmetic (global batch) shown as whole numbers in every
        # format of every command (768, never 768.0), as the written tables hold them
        if getattr(self.frame, "columns", None) is not None:
            object.__setattr__(self, "frame", with_whole_counts(self.frame))
        # A column that tells no row apart (one value in every row, or none) goes first,
        # into the headline: a narrow terminal drops the last columns, and those should be
        # the ones that differ, not a round, a benchmark or an empty reason. A key column
        # that differs between rows is never dropped for width.
        if getattr(self.frame, "columns", None) is None or len(self.frame) < 2:
            return
        same = [
            c
            for c in self.shown
            if c in self.frame.columns and self.frame[c].astype(str).nunique(dropna=False) <= 1
        ]
        rest = [c for c in self.drop_order if c not in same and c not in self.keys]
        object.__setattr__(self, "drop_order", (*same, *rest))


def scores_title(rounds: Sequence[str]) -> str:
    """The scores table's title: official scores where every row is of a published round;
    a user's own folder (``my-results (v4.1)``) is scored by the official rule, but its
    scores are no official MLPerf result (as the report's header says)."""
    if any(own_folder(r) is not None for r in rounds):
        return "MLPerf Training scores, by the official rule (minutes)"
    return "MLPerf Training official scores (minutes)"


def scores_view(
    scores: pd.DataFrame,
    workloads: Sequence[str] | None = None,
    options: ScoresOptions | None = None,
) -> TableView:
    """The official scores of ``workloads`` (all without), sorted by round, benchmark and
    time: every result under its own system name, as MLCommons' tables list them. A
    result whose runs another of its round holds under a second name shows the twin in
    ``same_runs_as`` (said in a note: analyses count those runs once);
    ``options.duplicates`` lists only such pairs, both rows; every column with
    ``options.all_columns``."""
    options = options or ScoresOptions()
    frame = scores if workloads is None else scores[scores["workload"].isin(list(workloads))]
    twins = is_same_runs_copy(frame).to_numpy(bool)
    notes: tuple[str, ...] = ()
    if twins.any():
        notes = (
            f"{counted(int(twins.sum()), 'result')} repeating the runs of another under a "
            "second system name in its round: listed, as the official tables list them, "
            "with same_runs_as naming the other; analyses count those runs once "
            "(--duplicates lists only these pairs)",
        )
    notes += tuple(repeated_notes(frame))  # the same run published twice: said where scored
    empty = ""
    if options.duplicates:
        paired = frame[twins | in_a_twin_pair(frame).to_numpy(bool)]
        if paired.empty:
            rounds = ", ".join(sorted(frame["round"].astype(str).unique(), key=round_key))
            empty = (
                f"no result of {rounds or 'these rounds'} is listed under two system names "
                "(the same runs): --duplicates has no pair to list; without it every result "
                "is listed"
            )
        frame = paired
    frame = frame.sort_values(["round", "benchmark", "time_to_train_min"])
    shown = list(SCORE_SHOWN)
    if twins.any() and "same_runs_as" not in shown:
        shown.append("same_runs_as")  # what tells the twins apart (docs/tour.md)
    columns, every = shown, f"--all-columns for all {len(frame.columns)}"
    if options.all_columns:
        columns, every = list(frame.columns), ""
    return TableView(
        frame,
        columns,
        scores_title(frame["round"].astype(str).unique()),
        (*SCORE_DROP_ORDER, "same_runs_as"),
        every=every,
        notes=notes,
        empty=empty,
    )


def ingest_summary(tables: RoundTables) -> tuple[list[str], TableView | None]:
    """What ``gpuscale ingest`` read: a line per round (systems, runs, results scored,
    problems), and the problems counted by round and kind (None without any)."""
    lines = []
    for round_name, scores in tables.scores.groupby("round"):
        runs = tables.runs[tables.runs["round"] == round_name]
        systems = tables.systems[tables.systems["round"] == round_name]
        problems = tables.problems[tables.problems["round"] == round_name]
        lines.append(
            f"{round_name}: {counted(len(systems), 'system')}, {counted(len(runs), 'run')} "
            f"({int(runs['counted'].sum()):,} counted), "
            f"{of_the(scores['time_to_train_min'].notna().sum(), len(scores), 'benchmark result')}"
            f" scored, {counted(len(problems), 'problem')}"
        )
        lines += list(problems[problems["kind"] == "other ruleset"]["message"])
        lines += [f"warning: {m}" for m in problems[problems["kind"].isin(WARNED)]["message"]]
        lines += [_not_whole_warning(str(round_name))] * bool(not_whole(problems))
    if not len(tables.problems):
        return lines, None
    counts = tables.problems.groupby(["round", "kind"]).size().reset_index(name="count")
    return lines, TableView(counts, list(counts.columns), "problems found (see problems.csv)")


# Problems said as warnings wherever a round's reading is told: the round a path was read
# as is in doubt (its logs are another round's; a copy of a bundled round scores otherwise).
WARNED = ("other round", "not as published")


# Problems that mean part of the input was not read at all (the others are what the
# logs that were read say, as in every round: aborted runs, missing fields).
NOT_READ = ("corrupt archive", "unreadable", "not a file", "unread log", "unsafe path", "worker")
# Of those, the ones that leave the round itself not read whole (an archive cut short or
# damaged, a file the system would not give, a reader that died): a command says what it
# read, as of that part only, and exits 1. The others skip what the round holds as
# published (an archive inside it, an unsafe member name): every read skips the same.
NOT_WHOLE = ("corrupt archive", "unreadable", "worker")


# Problems of a run log whose text is damaged (cut short, unparsable, not text, times that
# cannot be true or that contradict its folder), counted or not: a user's own folder names
# each file (up to ``DAMAGED_NAMED``), an official round, which has many, only counts them.
DAMAGED_LOG = (
    "missing run_stop",
    "missing run_start",
    "parse error",
    "not text",
    "impossible value",
    "inconsistent log",
)
DAMAGED_NAMED = 5


def _damaged_logs(round_name: str, rows: pd.DataFrame) -> list[str]:
    """The line naming a user's folder's damaged run logs (``<org>/results/<system>/
    <benchmark>/<file>``, each with its kind; after ``DAMAGED_NAMED``, how many more);
    none for an official round (not a user's folder label) or where there are none."""
    if own_folder(round_name) is None:
        return []
    parts = rows["path"].astype(str).str.split("/")
    is_log = (parts.str.len() == 5) & (parts.str[1] == "results")
    damaged = rows[rows["kind"].isin(DAMAGED_LOG) & is_log]
    if damaged.empty:
        return []
    named = [f"{p} ({k})" for p, k in zip(damaged["path"], damaged["kind"], strict=True)]
    said = ", ".join(named[:DAMAGED_NAMED])
    if len(named) > DAMAGED_NAMED:
        said += f" and {len(named) - DAMAGED_NAMED:,} more (each in problems.csv, as above)"
    noun = "damaged run log" if len(named) == 1 else "damaged run logs"
    return [f"{round_name}: {noun}: {said}"]


def not_whole(problems: pd.DataFrame) -> list[str]:
    """The rounds of ``problems`` not read whole (:data:`NOT_WHOLE`), by name."""
    return sorted(problems.loc[problems["kind"].isin(NOT_WHOLE), "round"].astype(str).unique())


def _not_whole_warning(round_name: str) -> str:
    return (
        f"warning: {round_name} was not read whole: every number given of it is of the "
        "part read, not of the round (exit status 1)"
    )


def _where(path: object, message: str) -> str:
    """``PATH: `` before a message that does not name it (an archive member skipped as
    unsafe said only why, never which); "" where it does or there is none."""
    return f"{path}: " if isinstance(path, str) and path and path not in message else ""


def _example(reason: str) -> str:
    """The rule a score's reason gives as its example, ``(e.g. RULE)``, whole however many
    parentheses the rule holds (``quality target not reached (eval_accuracy: (v['value']
    >= 0.720) and v['value'] < 1.0)``); the reason itself where it gives none."""
    start = reason.find("(e.g. ")
    if start < 0:
        return reason
    depth = 0
    for end in range(start, len(reason)):
        depth += {"(": 1, ")": -1}.get(reason[end], 0)
        if depth == 0:
            return reason[start + len("(e.g. ") : end]
    return reason[start + len("(e.g. ") :]  # unclosed: the rest


def rejected_notes(scores: pd.DataFrame, workloads: Sequence[str] | None = None) -> list[str]:
    """A line per round and benchmark of which the round's own rules, as mlperf-logging
    checks them today (:func:`~gpuscale.tables.workloads.not_scored_by`), reject most
    results (more than half unscored): the count, and the reason most of them share (the
    rule a noncompliant run broke, where the reason names one). ``workloads``: only these
    (those a command was asked for; None: every one)."""
    lines = []
    if workloads is not None:
        scores = scores[scores["workload"].isin(workloads)]
    for (round_name, benchmark), rows in scores.groupby(["round", "benchmark"], sort=True):
        unscored = rows[rows["time_to_train_min"].isna()]
        if 2 * len(unscored) <= len(rows):
            continue
        reasons = unscored["score_reason"].fillna("").astype(str)
        rules = reasons.map(_example)
        rule, count = next(iter(rules.value_counts().items()))
        lines.append(
            f"{round_name} {benchmark}: {len(unscored):,} of {counted(len(rows), 'result')} "
            f"not scored by {not_scored_by(str(round_name))}, {count:,} for "
            f"{rule or 'no reason given'} "
            f"(each result's own in its score_reason: `gpuscale scores` of the round, -b "
            f"{benchmark} --columns submitter,system_name,score_reason, lists them)"
        )
    return lines


def reading_notes(problems: pd.DataFrame, sources: Mapping[str, object] | None = None) -> list[str]:
    """What a command that read raw rounds tells its reader of their problems, a line per
    round: how many of each kind, and each problem that left part of the input unread
    (``NOT_READ``: a damaged archive, an unreadable file) with its message, the first
    three of a kind, and where the round was not read whole (``NOT_WHOLE``) a warning that
    its numbers are of the part read; ``gpuscale ingest`` of the round's path
    (``sources``: round -> the path read) lists them all. First, each warning (``warning:
    ...``): a path read as a round its logs contradict (``other round``), or a copy of a
    bundled round that scores otherwise (``not as published``)."""
    lines = [f"warning: {m}" for m in problems[problems["kind"].isin(WARNED)]["message"]]
    for round_name, rows in problems.groupby("round", sort=True):
        counts = rows["kind"].value_counts()
        kinds = ", ".join(f"{kind} {count:,}" for kind, count in counts.items())
        ingest = "`gpuscale ingest` of its folder or archive writes each to problems.csv"
        if (source := (sources or {}).get(round_name)) is not None:
            named = rules_round(str(round_name))  # a user's folder: the round it is read by
            command = suggested_command("ingest", source, "--round-name", named)
            ingest = f"{command} writes each to gpuscale-tables/problems.csv"
        lines.append(
            f"{round_name}: {counted(len(rows), 'problem')} reading it ({kinds}); {ingest}"
        )
        lines += [f"{round_name}: {m}" for m in rows[rows["kind"] == "other ruleset"]["message"]]
        lines += _damaged_logs(str(round_name), rows)
        unread = rows[rows["kind"].isin(NOT_READ)]
        for kind, group in unread.groupby("kind", sort=False):
            lines += [
                f"{round_name}: NOT ALL READ: {kind}: {_where(path, m)}{m}"
                for path, m in zip(group["path"][:3], group["message"][:3], strict=True)
            ]
            if len(group) > 3:
                lines[-1] += f" (and {len(group) - 3:,} more)"
        lines += [_not_whole_warning(str(round_name))] * bool(not_whole(rows))
    return lines

"""Read MLPerf Training rounds into tidy tables: systems, runs, scores and problems.

``read_round(path)`` accepts a round directory (``training_results_v4.1/`` or its
parent) or a ``.tar``, ``.tar.gz``, ``.tar.xz`` or ``.zip`` archive read in place.
Nothing is printed and nothing raises on bad input inside a round: what cannot be used
becomes a row of ``problems`` and the rest of the round is still read (a path that holds
no results at all raises ``NoResultsError``, saying why). Every source kind goes one
way: its entries (``gpuscale.sources.iter_source``, within caps on expanded bytes) are
parsed one by one here into rows (``gpuscale.mlperf.collector``), which become the
tables; :func:`read_rounds` keeps a result given twice once.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from dataclasses import replace
from operator import itemgetter
from pathlib import Path

from gpuscale.mlperf.collector import Collector
from gpuscale.mlperf.consistency import FolderNames, log_flags, odd_logs_reported
from gpuscale.mlperf.duplicates import case_duplicates, combine, same_runs_problems
from gpuscale.mlperf.layout import MLPERF_LAYOUT, round_name_to_read
from gpuscale.mlperf.no_results import NoResultsError, no_results, refused_path
from gpuscale.mlperf.parse import parse_entry, task_for
from gpuscale.mlperf.power import add_energy, copied_logs, result_scopes
from gpuscale.mlperf.round_hints import GIVEN, logs_round, logs_round_said, other_round
from gpuscale.mlperf.rules import ruleset_for
from gpuscale.mlperf.runlog import read_run_log
from gpuscale.mlperf.scores import build_scores
from gpuscale.quantities import counted
from gpuscale.sizes import number_or_none
from gpuscale.sources import (
    MAX_FILE_BYTES,
    MAX_ROUND_BYTES,
    Budget,
    Entry,
    RoundNotSaidError,
    Skipped,
    SourceError,
    is_archive,
    iter_source,
    not_a_source,
    read_ahead,
)
from gpuscale.tables import (
    PROBLEMS_SCHEMA,
    RUNS_COLUMNS,
    RUNS_SCHEMA,
    SYSTEMS_SCHEMA,
    ProblemKind,
    RoundTables,
    frame_of,
)
from gpuscale.tables.checks import check_text
from gpuscale.tables.republished import mark_copies

Progress = Callable[[int, int, str], None]  # (done, total or 0, what is counted)


def read_round(
    path: str | os.PathLike[str],
    round_name: str | None = None,
    *,
    progress: Progress | None = None,
    max_file_bytes: int = MAX_FILE_BYTES,
    max_round_bytes: int = MAX_ROUND_BYTES,
) -> RoundTables:
    """Read one round from a directory or archive.

    ``round_name`` defaults to the version in the path's name (``training_results_v4.1``
    -> ``v4.1``). One process reads (processes bought no speed, see
    ``benchmarks/ingest.py``).
    ``progress(done, total, unit)`` is called as the work advances (``files`` read,
    ``total`` 0: not known in advance). A file larger than ``max_file_bytes`` is not
    read (a result file: a failed run); reading stops, with a problem row, once the
    source has expanded past ``max_round_bytes`` (defaults: 16x the largest real file
    and round). Raises :class:`SourceError` only when the path itself is unusable
    (``NoResultsError`` where it holds no MLPerf results: an empty folder, a folder of
    rounds, one submitter's folder, a folder gpuscale wrote; each said, with what to give
    instead), TypeError/ValueError for arguments of the wrong type or value; everything
    inside is reported in ``problems``.
    """
    if not isinstance(path, str | os.PathLike):
        raise TypeError(f"path must be a str or os.PathLike, not {type(path).__name__}")
    check_text(round_name, "round_name", optional=True, like="like 'v4.1'")
    for what, value in (
        ("max_file_bytes", max_file_bytes),
        ("max_round_bytes", max_round_bytes),
    ):
        if number_or_none(value, whole=True) is None or value < 1:
            raise ValueError(f"{what} must be a positive int, not {value!r}")
    path = Path(path)
    name = round_to_read(path, round_name)
    skipped: list[Skipped] = []
    col = Collector(name)
    ruleset, other = ruleset_for(name)  # never silent: the scores may differ from official
    if ruleset and other:
        col.problem(path.name, ProblemKind.OTHER_RULESET, other)
    _read_entries(path, col, progress, skipped, Budget(max_file_bytes, max_round_bytes))
    # never silent either: logs whose dates or benchmarks are another round's
    how = GIVEN if round_name else "its name"
    said = other_round(name, col.runs, how, str(path))
    if said:
        col.problem(path.name, ProblemKind.OTHER_ROUND, said)
    names = FolderNames(col.problem)
    for raw in skipped:
        s = replace(raw, path=names.path(raw.path))
        if col.not_read(s):
            continue
        col.problem(s.path, s.kind, s.message)
        if s.ends_read:
            col.damaged = s.message
    tables = case_duplicates(_tables(col))
    if tables.systems.empty and tables.runs.empty:  # an empty folder: never empty tables
        raise NoResultsError(no_results(path))
    return tables


def round_to_read(path: Path, round_name: str | None) -> str:
    """The round ``path`` is read as (``layout.round_name_to_read``), once it is a folder
    or an archive: raises as :func:`read_round` does for a path it refuses before reading
    (SourceError where it is neither, NoResultsError where it is plainly no round), cheaply
    (nothing under a folder is listed)."""
    try:
        if not path.exists() or not (path.is_dir() or is_archive(path)):
            raise not_a_source(path)
        return round_name_to_read(path, round_name)
    except (SourceError, ValueError) as exc:
        if (better := refused_path(path)) is not None:  # what the path is, what to give
            raise better from exc
        if isinstance(exc, RoundNotSaidError):  # what its logs say of the round, said
            found = logs_round(_logged_runs(path))
            said = logs_round_said(found, exc.example)
            raise RoundNotSaidError(path, exc.example, said, found) from None
        raise


def _logged_runs(path: Path) -> list[dict[str, object]]:
    """Each result log's row as :func:`logs_round` takes it (its folders' org, system and
    benchmark; the benchmark and ``run_start`` it logs), of a path whose name says no
    round: read only to say which round its logs are (a file that cannot be read is
    left out, as the read proper reports it)."""
    rows: list[dict[str, object]] = []
    for entry in iter_source(path, MLPERF_LAYOUT, [], Budget()):
        task = task_for(entry, "")
        try:
            log = read_run_log(entry.read()) if task and task[0] == "run" else None
        except OSError:  # unreadable: the read proper says so
            continue
        if log is not None:
            org, _, system, benchmark, _ = entry.path.split("/")
            run = {"org": org, "system_id": system, "benchmark": benchmark}
            rows.append({**run, "log_benchmark": log.benchmark, "run_start_ms": log.run_start_ms})
    return rows


def _read_entries(
    path: Path,
    col: Collector,
    progress: Progress | None,
    skipped: list[Skipped],
    budget: Budget,
) -> None:
    """The one read path, for directories and every archive kind: the source's entries
    (read ahead by a thread: the codecs release the GIL) parsed here one by one.
    Processes bought nothing measurable here on 2 loaded cores (benchmarks/ingest.py)."""
    names = FolderNames(col.problem)
    entries: Iterable[Entry] = iter_source(path, MLPERF_LAYOUT, skipped, budget)
    total, unit = 0, "files"  # an archive's count is not known ahead
    if path.is_dir():  # listing is cheap (no bytes held): count the files to parse first
        entries = list(entries)
        total = sum(task_for(e, col.round_name) is not None for e in entries)
        unit = "result files"
    done = 0
    for raw in read_ahead(iter(entries)):
        entry = replace(raw, path=names.path(raw.path))
        parsed = parse_entry(entry, col.round_name)
        if parsed is None:
            col.note(entry)
        else:
            col.bench_dirs.add(tuple(entry.path.split("/")[i] for i in (0, 2, 3)))
            col.add_parsed(parsed)
        if progress and (parsed is not None or not total):
            done += 1
            progress(done, total, unit)


def _tables(col: Collector) -> RoundTables:

    submitters = {(s["org"], s["system_id"]): s["submitter"] for s in col.systems}
    divisions = {(s["org"], s["system_id"]): s["division"] for s in col.systems}
    contradicted = odd_logs_reported(col.runs, divisions, col.problem)
    # Every column present (None where a row had no value), in the table's sort order.
    runs = sorted(
        ({name: row.get(name) for name in RUNS_COLUMNS} for row in col.runs),
        key=itemgetter("org", "system_id", "benchmark", "run_file"),
    )
    for r in runs:
        r["submitter"] = submitters.get((r["org"], r["system_id"]))
        r["power_scope"] = ""  # the scope its power logs state (add_energy): none without
    if col.power:
        add_energy(runs, col.power)
    for (where, note), count in sorted(col.power_notes.items()):
        col.problem(where, ProblemKind.POWER_LOG, f"{counted(count, 'file')}: {note}")
    col.problems.extend(copied_logs(col.round_name, col.node_digests))
    scored = build_scores(
        col.round_name,
        col.systems,
        runs,
        col.scaling,
        col.bench_dirs,
        damaged=col.damaged,
        unusable=col.unusable_systems,
    )
    for r, kept in zip(runs, scored.kept, strict=True):
        r["kept"] = kept
    col.problems.extend(scored.problems)
    runs_frame = frame_of(RUNS_SCHEMA, runs)
    scores = mark_copies(scored.scores, runs_frame)  # one result under two names: once
    scores["log_flag"] = log_flags(scores, contradicted)
    metered = {key[:3] for key in col.power}
    scores["power_scope"], scope_problems = result_scopes(col.round_name, scores, runs, metered)
    col.problems.extend(scope_problems)
    col.problems.extend(same_runs_problems(scores))
    return RoundTables(
        systems=frame_of(SYSTEMS_SCHEMA, col.systems),
        runs=runs_frame,
        scores=scores,
        problems=frame_of(PROBLEMS_SCHEMA, col.problems),
    )


def read_rounds(
    paths: Iterable[str | os.PathLike[str]],
    *,
    progress: Progress | None = None,
) -> RoundTables:
    """Read several rounds and stack their tables (each keeps its ``round`` column); a
    result given twice is kept once (see :func:`combine`)."""
    if isinstance(paths, str | bytes | os.PathLike):
        raise TypeError(
            f"paths must be a list of paths, not one {type(paths).__name__} "
            f"(use read_round({str(paths)!r}) or read_rounds([{str(paths)!r}]))"
        )
    return combine([read_round(p, progress=progress) for p in paths])

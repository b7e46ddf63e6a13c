"""Read MLPerf Training rounds into tidy tables: systems, runs, scores and problems.

``read_round(path)`` accepts a round directory (``training_results_v4.1/`` or its
parent) or a ``.tar``, ``.tar.gz``, ``.tar.xz`` or ``.zip`` archive read in place.
Nothing is printed and nothing raises on bad input: what cannot be used becomes a row
of ``problems`` and the rest of the round is still read. Every source kind goes one
way: its entries (``gpuscale.sources.iter_source``, within caps on expanded bytes) are
parsed one by one here; :func:`read_rounds` keeps a result given twice once.
"""

from __future__ import annotations

import codecs
import math
import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from operator import itemgetter
from pathlib import Path

import orjson

from gpuscale.mlperf.benchmarks import workload_in_round
from gpuscale.mlperf.consistency import FolderNames, log_flags, odd_logs_reported
from gpuscale.mlperf.duplicates import case_duplicates, combine, same_runs_problems
from gpuscale.mlperf.layout import MLPERF_LAYOUT, normalise_round, round_name_from_path, wanted
from gpuscale.mlperf.parse import Parsed, parse_entry, task_for
from gpuscale.mlperf.power import PowerLog
from gpuscale.mlperf.round_hints import GIVEN, other_round
from gpuscale.mlperf.rules import ruleset_for, unheld_round
from gpuscale.mlperf.scores import build_scores
from gpuscale.mlperf.systems import SystemDescriptionError, parse_system
from gpuscale.quantities import counted
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
    read_ahead,
    top_folder,
)
from gpuscale.tables import (
    PROBLEMS_SCHEMA,
    RUNS_COLUMNS,
    RUNS_SCHEMA,
    SYSTEMS_SCHEMA,
    ProblemKind,
    ProblemRow,
    RoundTables,
    Row,
    RunStatus,
    benchmark_of_folder,
    frame_of,
    problem_row,
)
from gpuscale.tables.republished import mark_copies

Progress = Callable[[int, int, str], None]  # (done, total or 0, what is counted)


@dataclass
class _Collector:
    """Accumulates rows while a round's entries stream past."""

    round_name: str
    systems: list[Row] = field(default_factory=list)
    runs: list[Row] = field(default_factory=list)
    problems: list[ProblemRow] = field(default_factory=list)
    scaling: dict[tuple[str, str, str], float] = field(default_factory=dict)
    bench_dirs: set[tuple[str, str, str]] = field(default_factory=set)
    # (org, system, benchmark folder, run stem) -> (kind, mean power W) of each power file
    power: dict[tuple[str, str, str, str], list[tuple[str, float]]] = field(default_factory=dict)
    power_notes: dict[tuple[str, str], int] = field(default_factory=dict)
    damaged: str = ""  # why the source could not be read to its end

    def add_parsed(self, parsed: Parsed) -> None:
        _, rel, result = parsed
        if isinstance(result, PowerLog):
            self.add_power(rel, result)
        else:
            self.add_run(rel, result)

    def add_power(self, rel: str, log: PowerLog) -> None:
        org, _, system_id, bench, _, stem, _ = rel.split("/")
        if log.note:  # counted per benchmark folder: v4.0 repeats one note 1,000 times
            where = f"{org}/results/{system_id}/{bench}/power"
            self.power_notes[(where, log.note)] = self.power_notes.get((where, log.note), 0) + 1
        if log.mean_power_w is not None:
            self.power.setdefault((org, system_id, bench, stem), []).append(
                (log.kind, log.mean_power_w)
            )

    def problem(self, path: str, kind: str, message: str) -> None:
        self.problems.append(problem_row(self.round_name, path, kind, message))

    def add_system(self, entry: Entry) -> None:
        org, _, name = entry.path.split("/")
        system_id = name[: -len(".json")]
        try:
            record = parse_system(
                _no_bom(entry.read()), round_name=self.round_name, org=org, system_id=system_id
            )
        except OSError as exc:
            self.problem(entry.path, ProblemKind.UNREADABLE, f"cannot read file ({exc.strerror})")
            return
        except SystemDescriptionError as exc:
            self.problem(entry.path, ProblemKind.BAD_SYSTEM, str(exc))
            return
        for kind, message in record.problems:
            self.problem(entry.path, kind, message)
        self.systems.append(record.row)

    def add_scaling(self, entry: Entry) -> None:
        org, _, system_id, bench = entry.path.split("/")[:4]
        try:
            factor = float(orjson.loads(_no_bom(entry.read()))["scaling_factor"])
        except (OSError, orjson.JSONDecodeError, KeyError, TypeError, ValueError) as exc:
            self.problem(
                entry.path,
                ProblemKind.BAD_SCALING,
                f"no usable scaling_factor ({exc}); the result is not scored",
            )
            factor = math.nan
        if not (math.isfinite(factor) and factor > 0):
            if factor == factor:  # a number, but not a usable factor
                self.problem(
                    entry.path,
                    ProblemKind.IMPOSSIBLE_VALUE,
                    f"scaling_factor {factor!r} is not positive and finite; "
                    "the result is not scored",
                )
            factor = math.nan
        self.scaling[(org, system_id, bench)] = factor

    def add_run(self, rel: str, row: Row, kind: str | None = None) -> None:
        """A row of ``runs``; one that is not counted is a problem (of ``kind``, else of
        its status)."""
        org, _, system_id, bench, run_file = rel.split("/")
        full = {
            "round": self.round_name,
            "org": org,
            "submitter": None,
            "system_id": system_id,
            "benchmark": benchmark_of_folder(bench),
            "workload": workload_in_round(bench, self.round_name),
            "run_file": run_file,
            "rel": rel,  # not a column: where problems about the run point
            **row,
        }
        self.runs.append(full)
        if not full.get("counted"):
            self.problem(
                rel,
                kind or full.get("status") or RunStatus.UNREADABLE,
                full.get("problem") or "run not counted",
            )

    def not_read(self, skipped: Skipped) -> bool:
        """A result file or scaling.json that is there but could not be read as a regular
        file: a failed run (it counts against the required runs), or no score. True when
        ``skipped`` was taken in so."""
        parts = skipped.path.split("/")
        # a note on a file read all the same (its name escaped) is no failed run: counting it
        # here too would count one run twice, once parsed and once as unreadable
        if skipped.was_read or not wanted(skipped.path) or len(parts) != 5:
            return False
        self.bench_dirs.add((parts[0], parts[2], parts[3]))
        if parts[4] == "scaling.json":
            self.scaling[(parts[0], parts[2], parts[3])] = math.nan
            self.problem(
                skipped.path,
                ProblemKind.BAD_SCALING,
                f"{skipped.message}; the result is not scored",
            )
        else:
            self.add_run(
                skipped.path,
                {
                    "status": str(RunStatus.UNREADABLE),
                    "counted": False,
                    "problem": f"{skipped.message}; counted as a failed run",
                },
                skipped.kind,
            )
        return True

    def note(self, entry: Entry) -> None:
        """What an entry contributes besides its parse task: a benchmark folder, a
        system description or a scaling factor."""
        parts = entry.path.split("/")
        if parts[1] == "systems" and not entry.is_dir:
            self.add_system(entry)
            return
        self.bench_dirs.add((parts[0], parts[2], parts[3]))
        if parts[-1] == "scaling.json" and not entry.is_dir:
            self.add_scaling(entry)


def _no_bom(data: bytes) -> bytes:
    """JSON bytes without a UTF-8 byte-order mark (accepted, as in logs)."""
    return data[3:] if data.startswith(codecs.BOM_UTF8) else data


def _round_name(path: Path, given: str | None) -> str:
    if given:
        why = unheld_round(name := normalise_round(given))
        if why:
            raise SourceError(why)
        return name
    found = round_name_from_path(path)
    if found:
        return found
    if is_archive(path):  # a renamed download: the round is in its top folder's name
        top = top_folder(path)
        if top is None:  # the cause, not a round to give (an empty or broken archive)
            raise SourceError(f"{path}: an empty or unreadable archive (no folder in it)")
        found = round_name_from_path(top)
        if found:
            return found
    if path.is_dir():
        for child in path.iterdir():
            found = round_name_from_path(child)
            if found and child.is_dir():
                return found
    raise RoundNotSaidError(path)


def round_name_of(path: str | os.PathLike[str]) -> str | None:
    """The round a path's name (or its one ``training_results_vX.Y`` folder) says; None
    when it says none."""
    try:
        return _round_name(Path(path), None)
    except (SourceError, OSError):
        return None


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
    and round). Raises :class:`SourceError` only when the path itself is unusable,
    TypeError/ValueError for arguments of the wrong type or value; everything inside is
    reported in ``problems``.
    """
    if not isinstance(path, str | os.PathLike):
        raise TypeError(f"path must be a str or os.PathLike, not {type(path).__name__}")
    if round_name is not None and not isinstance(round_name, str):
        raise TypeError(
            f"round_name must be a str like 'v4.1' or None, not {type(round_name).__name__} "
            f"({round_name!r})"
        )
    for what, value in (
        ("max_file_bytes", max_file_bytes),
        ("max_round_bytes", max_round_bytes),
    ):
        if not isinstance(value, int) or isinstance(value, bool) or value < 1:
            raise ValueError(f"{what} must be a positive int, not {value!r}")
    path = Path(path)
    if not path.exists():
        raise SourceError(f"{path}: no such file or directory")
    if not path.is_dir() and not is_archive(path):
        raise SourceError(f"{path}: not a directory or a .tar/.tar.gz/.tar.xz/.zip archive")
    name = _round_name(path, round_name)
    skipped: list[Skipped] = []
    col = _Collector(name)
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
    return case_duplicates(_tables(col))


def _read_entries(
    path: Path,
    col: _Collector,
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


def _add_energy(
    runs: list[Row], power: dict[tuple[str, str, str, str], list[tuple[str, float]]]
) -> None:
    """Energy to train of each counted run with power logs (kJ): nodes, switches and
    their sum (None elsewhere)."""
    for r in runs:
        logs = power.get((r["org"], r["system_id"], r["benchmark"], r["run_file"].split(".")[0]))
        nodes = [w for kind, w in logs or () if kind == "node"]
        ttt_ms = r["run_stop_ms"] - r["run_start_ms"] if nodes and r["counted"] else None
        if not ttt_ms:
            r["compute_energy_kj"] = r["interconnect_energy_kj"] = r["energy_kj"] = None
            continue
        switches = [w for kind, w in logs if kind == "switch"]
        r["compute_energy_kj"] = sum(nodes) * ttt_ms / 1e6
        r["interconnect_energy_kj"] = sum(switches) * ttt_ms / 1e6
        r["energy_kj"] = r["compute_energy_kj"] + r["interconnect_energy_kj"]


def _tables(col: _Collector) -> RoundTables:

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
    if col.power:
        _add_energy(runs, col.power)
    for (where, note), count in sorted(col.power_notes.items()):
        col.problem(where, ProblemKind.POWER_LOG, f"{counted(count, 'file')}: {note}")
    scored = build_scores(
        col.round_name, col.systems, runs, col.scaling, col.bench_dirs, damaged=col.damaged
    )
    for r, kept in zip(runs, scored.kept, strict=True):
        r["kept"] = kept
    col.problems.extend(scored.problems)
    runs_frame = frame_of(RUNS_SCHEMA, runs)
    scores = mark_copies(scored.scores, runs_frame)  # one result under two names: once
    scores["log_flag"] = log_flags(scores, contradicted)
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

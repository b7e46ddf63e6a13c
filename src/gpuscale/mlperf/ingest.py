"""Read MLPerf Training rounds into tidy tables: systems, runs, scores and problems.

``read_round(path)`` accepts a round directory (``training_results_v4.1/`` or its
parent) or a ``.tar``, ``.tar.gz``, ``.tar.xz`` or ``.zip`` archive read in place. Result
logs are parsed in worker processes (one file's text per worker at a time); nothing is
printed and nothing raises on bad input: what cannot be used becomes a row of
``problems`` and the rest of the round is still read.
"""

from __future__ import annotations

import os
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Executor, Future, ProcessPoolExecutor
from dataclasses import dataclass, field
from operator import itemgetter
from pathlib import Path
from typing import Any

import pandas as pd

from gpuscale.mlperf.benchmarks import benchmark_folder_alias, workload_of
from gpuscale.mlperf.blocks import read_tar_xz_blocks
from gpuscale.mlperf.parse import Parsed, parse_task, task_for
from gpuscale.mlperf.power import PowerLog
from gpuscale.mlperf.scores import build_scores
from gpuscale.mlperf.sources import (
    Entry,
    Skipped,
    SourceError,
    is_archive,
    iter_archive,
    iter_directory,
    normalise_round,
    read_ahead,
    round_name_from_path,
)
from gpuscale.mlperf.systems import SystemError, parse_system
from gpuscale.mlperf.team import Team, process_context
from gpuscale.mlperf.xz import read_index
from gpuscale.schema import PROBLEMS_COLUMNS, RUNS_COLUMNS, SYSTEMS_COLUMNS

Progress = Callable[[int, int], None]


@dataclass(frozen=True, slots=True)
class RoundTables:
    """The four tables of one or more rounds (columns: see ``gpuscale.schema``)."""

    systems: pd.DataFrame
    runs: pd.DataFrame
    scores: pd.DataFrame
    problems: pd.DataFrame

    @staticmethod
    def concat(parts: Iterable[RoundTables]) -> RoundTables:
        parts = list(parts)
        return RoundTables(
            *(
                pd.concat([getattr(p, name) for p in parts], ignore_index=True)
                for name in ("systems", "runs", "scores", "problems")
            )
        )


@dataclass
class _Collector:
    """Accumulates rows while a round's entries stream past."""

    round_name: str
    systems: list[dict[str, Any]]
    runs: list[dict[str, Any]]
    problems: list[dict[str, Any]]
    scaling: dict[tuple[str, str, str], float]
    bench_dirs: set[tuple[str, str, str]]
    # (org, system, benchmark folder, run stem) -> (kind, mean power W) of each power file
    power: dict[tuple[str, str, str, str], list[tuple[str, float]]] = field(default_factory=dict)
    power_notes: dict[tuple[str, str], int] = field(default_factory=dict)

    def add_parsed(self, parsed: Parsed) -> None:
        kind, rel, result = parsed
        if kind == "run":
            self.add_run(rel, result)
        else:
            self.add_power(rel, result)

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
        self.problems.append(
            {"round": self.round_name, "path": path, "kind": kind, "message": message}
        )

    def add_system(self, entry: Entry, data: bytes) -> None:
        org, _, name = entry.path.split("/")
        system_id = name[: -len(".json")]
        try:
            record = parse_system(data, round_name=self.round_name, org=org, system_id=system_id)
        except SystemError as exc:
            self.problem(entry.path, "bad system description", str(exc))
            return
        for kind, message in record.problems:
            self.problem(entry.path, kind, message)
        self.systems.append(record.row)

    def add_scaling(self, entry: Entry, data: bytes) -> None:
        import orjson

        org, _, system_id, bench = entry.path.split("/")[:4]
        try:
            factor = orjson.loads(data)["scaling_factor"]
            factor = float(factor)
        except (orjson.JSONDecodeError, KeyError, TypeError, ValueError) as exc:
            self.problem(
                entry.path, "bad scaling.json", f"no usable scaling_factor ({exc}); factor 1 used"
            )
            return
        self.scaling[(org, system_id, bench)] = factor

    def add_run(self, rel: str, row: dict[str, Any]) -> None:
        org, _, system_id, bench, run_file = rel.split("/")
        full = {
            "round": self.round_name,
            "org": org,
            "submitter": None,
            "system_id": system_id,
            "benchmark": benchmark_folder_alias(bench),
            "workload": workload_of(benchmark_folder_alias(bench)),
            "run_file": run_file,
            **row,
        }
        self.runs.append(full)
        if not full.get("counted"):
            self.problem(
                rel, full.get("status") or "unreadable", full.get("problem") or "run not counted"
            )


def _entries(path: Path, skipped: list[Skipped]) -> Iterator[Entry]:
    if path.is_dir():
        return iter_directory(path)
    if path.is_file() and is_archive(path):
        return iter_archive(path, skipped)
    if not path.exists():
        raise SourceError(f"{path}: no such file or directory")
    raise SourceError(f"{path}: not a directory or a .tar/.tar.gz/.tar.xz/.zip archive")


def _round_name(path: Path, given: str | None) -> str:
    if given:
        return normalise_round(given)
    found = round_name_from_path(path)
    if found:
        return found
    if path.is_dir():
        for child in path.iterdir():
            found = round_name_from_path(child)
            if found and child.is_dir():
                return found
    raise SourceError(
        f"{path}: cannot tell the round from the name; pass it (e.g. --round-name v4.1)"
    )


def _pool(workers: int) -> Executor | None:
    if workers <= 1:
        return None
    return ProcessPoolExecutor(max_workers=workers, mp_context=process_context())


def read_round(
    path: str | os.PathLike[str],
    round_name: str | None = None,
    *,
    workers: int | None = None,
    progress: Progress | None = None,
) -> RoundTables:
    """Read one round from a directory or archive.

    ``round_name`` defaults to the version in the path's name (``training_results_v4.1``
    -> ``v4.1``). ``workers`` processes parse the result logs (default: one per core);
    ``progress(done, total)`` is called as the work advances: result files parsed, or xz
    blocks read for a multi-block ``.tar.xz`` (``total`` is 0 while a streamed
    archive's file count is unknown). A worker process that dies costs nothing: its
    files are read again by this process and a ``worker`` problem row says so. Raises
    :class:`SourceError` only when the path itself is unusable; everything inside is
    reported in ``problems``.
    """
    path = Path(path)
    if not path.exists():
        raise SourceError(f"{path}: no such file or directory")
    if not path.is_dir() and not is_archive(path):
        raise SourceError(f"{path}: not a directory or a .tar/.tar.gz/.tar.xz/.zip archive")
    name = _round_name(path, round_name)
    skipped: list[Skipped] = []
    col = _Collector(name, [], [], [], {}, set())
    count = workers if workers is not None else min(os.cpu_count() or 1, 8)
    if path.is_dir():
        _read_listed(list(_entries(path, skipped)), col, count, progress)
    elif not _read_in_blocks(path, col, count, progress, skipped):
        pool = _pool(count)
        try:
            _read_streamed(_entries(path, skipped), col, pool, progress)
        finally:
            if pool is not None:
                pool.shutdown()
    for s in skipped:
        col.problem(s.path, s.kind, s.message)
    return _tables(col)


def _note(entry: Entry, col: _Collector) -> None:
    """What an entry contributes besides its worker task: a benchmark folder, a system
    description or a scaling factor."""
    parts = entry.path.split("/")
    if parts[1] == "systems" and not entry.is_dir:
        col.add_system(entry, entry.read())
        return
    col.bench_dirs.add((parts[0], parts[2], parts[3]))
    if parts[-1] == "scaling.json" and not entry.is_dir:
        col.add_scaling(entry, entry.read())


def _read_listed(
    entries: list[Entry], col: _Collector, workers: int, progress: Progress | None
) -> None:
    """Directory source: every process reads and parses files itself (no bytes copied);
    the children start at once and this process reads the system descriptions first."""
    tasks = [t for t in (task_for(e, col.round_name) for e in entries) if t is not None]
    with Team(parse_task, tasks, workers) as team:
        for entry in entries:
            _note(entry, col)
        results = team.results(progress)
    for parsed in results:
        col.add_parsed(parsed)
    for note in team.notes:
        col.problem(".", "worker", note)


def _read_in_blocks(
    path: Path,
    col: _Collector,
    workers: int,
    progress: Progress | None,
    skipped: list[Skipped],
) -> bool:
    """A multi-block .tar.xz read by all workers at once, one xz block per task; False
    (nothing read) where that does not apply or the blocks do not chain up."""
    if workers <= 1 or not path.name.lower().endswith((".xz", ".txz")):
        return False
    index = read_index(path)
    if index is None or len(index.blocks) < 2:
        return False
    read = read_tar_xz_blocks(path, index, col.round_name, workers, progress)
    if read is None:
        return False
    blocks, notes = read
    for note in notes:
        col.problem(path.name, "worker", note)
    for block in blocks:
        for entry, parsed in block.items:
            _note(entry, col)
            if parsed is not None:
                col.add_parsed(parsed)
        skipped.extend(block.skipped)
    return True


def _read_streamed(
    entries: Iterator[Entry], col: _Collector, pool: Executor | None, progress: Progress | None
) -> None:
    """Archive source: a thread decompresses ahead while worker processes parse one file
    per task. Up to 16 files per worker are queued (enough that workers never wait on a
    round trip; measured 3.0 s -> 2.5 s on v4.1 against 4 queued), so memory holds a few
    MB of files, never the archive, and a worker one file's text at a time."""
    in_flight: deque[Future[Parsed]] = deque()
    limit = 16 * getattr(pool, "_max_workers", 1)
    done = 0

    def collect(parsed: Parsed) -> None:
        nonlocal done
        col.add_parsed(parsed)
        done += 1
        if progress:
            progress(done, 0)

    for entry in read_ahead(entries):
        _note(entry, col)
        task = task_for(entry, col.round_name)
        if task is None:
            continue
        if pool is None:
            collect(parse_task(task))
            continue
        in_flight.append(pool.submit(parse_task, task))
        while len(in_flight) > limit:
            collect(in_flight.popleft().result())
    while in_flight:
        collect(in_flight.popleft().result())


def _add_energy(
    runs: list[dict[str, Any]], power: dict[tuple[str, str, str, str], list[tuple[str, float]]]
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
        col.problem(where, "power log", f"{count} file(s): {note}")
    scored = build_scores(col.round_name, col.systems, runs, col.scaling, col.bench_dirs)
    for r, kept in zip(runs, scored.kept, strict=True):
        r["kept"] = kept
    col.problems.extend(scored.problems)
    return RoundTables(
        systems=pd.DataFrame(col.systems, columns=list(SYSTEMS_COLUMNS)),
        runs=_runs_frame(runs),
        scores=scored.scores,
        problems=pd.DataFrame(col.problems, columns=list(PROBLEMS_COLUMNS)),
    )


def _runs_frame(runs: list[dict[str, Any]]) -> pd.DataFrame:
    frame = pd.DataFrame(runs, columns=list(RUNS_COLUMNS))
    for name in ("compute_energy_kj", "interconnect_energy_kj", "energy_kj"):
        frame[name] = frame[name].astype(float)
    return frame


def read_rounds(
    paths: Iterable[str | os.PathLike[str]],
    *,
    workers: int | None = None,
    progress: Progress | None = None,
) -> RoundTables:
    """Read several rounds and stack their tables (each keeps its ``round`` column)."""
    return RoundTables.concat(read_round(p, workers=workers, progress=progress) for p in paths)

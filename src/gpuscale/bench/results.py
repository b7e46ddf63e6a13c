"""The bench results file: one JSON object per line, appended as each run ends.

Schema ``gpuscale.bench/2`` (documented in the README). Reading it: the usable records
and a message per line skipped (:func:`read_results`), the one bench loader
(:func:`load_bench`: the records as the bench table of ``bench.table``). Files of schema
``gpuscale.bench/1`` are read too. Nothing here imports torch.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

import numpy as np

from gpuscale.bench.record import record_problem
from gpuscale.bench.resume_said import Again, kept_and_again, weak_kept
from gpuscale.bench.table import NO_ONE_DEVICE, bench_table, flag_summary
from gpuscale.quantities import counted, format_bytes
from gpuscale.sources.bounded import (
    BENCH_FILE,
    COLLECTIVES_FILE,
    TooLarge,
    first_schema,
    json_lines,
    schema_of,
    skipped_lines,
)
from gpuscale.tables import BenchStatus
from gpuscale.tables.commands import quoted_path, suggested_command
from gpuscale.tables.inputs import no_results_file, written_by_bench
from gpuscale.tables.out_paths import check_file_out
from gpuscale.tables.requests import FieldError

if TYPE_CHECKING:
    import pandas as pd

# ``bench_table`` and ``flag_summary`` are the bench table's (``bench.table``), named
# here too: a results file's readers take them with its loader.
__all__ = [
    "BENCH_FILE",
    "COLLECTIVES_FILE",
    "MAX_RESULTS_BYTES",
    "NO_ONE_DEVICE",
    "SCHEMA",
    "BenchFile",
    "ResultsError",
    "StepStats",
    "bench_table",
    "done_keys",
    "first_schema",
    "flag_summary",
    "holds",
    "holds_records",
    "load_bench",
    "read_results",
    "records_bench",
    "resume_file",
    "resume_plan",
    "unused_name",
]

SCHEMA = "gpuscale.bench/2"
OLD_SCHEMA = "gpuscale.bench/1"
# The most a results file may hold: ~10,000 runs (a row is 3-6 kB), read into well under
# 1 GB of memory.
MAX_RESULTS_BYTES = 64 << 20


def _writes(path: Path) -> str:
    """What each refusal of a results file adds: the command that makes the file wanted,
    and before it the one that makes its folder where that is missing (bench makes none)."""
    bench = suggested_command("bench", "--out", path)
    if path.exists() and not _bench_appends_to(path):  # never a command bench refuses
        # beside a regular file; a device or pipe (/dev/null) names no folder of results
        folder = path.parent if path.is_file() else Path()
        bench = suggested_command("bench", "--out", unused_name(folder))
        return f"; bench appends only to a file of its results or a new one: {bench} writes one"
    return written_by_bench(path)


def _bench_appends_to(path: Path) -> bool:
    """Whether ``gpuscale bench --out PATH`` takes this existing file: a JSON-lines name
    (``tables.out_paths.check_file_out``) holding bench results or only blank lines (what
    ``bench.results_file.check_results_out`` lets through)."""
    try:
        check_file_out("out", path, holds=BENCH_FILE[1], default=path)
        schema = first_schema(path)
    except (FieldError, OSError):
        return False
    return schema is None or schema.startswith(BENCH_FILE[0])


def unused_name(folder: Path, name: str = "results.jsonl") -> Path:
    """A file's name in ``folder`` that no file has yet, to suggest where a results file
    was refused: ``name``, else ``NAME-2``, ``NAME-3``, ... before its suffix."""
    stem, suffix = Path(name).stem, Path(name).suffix
    for n in range(1, 1000):
        path = folder / (name if n == 1 else f"{stem}-{n}{suffix}")
        if not path.exists():
            return path
    return folder / f"{stem}-new{suffix}"


@dataclass(frozen=True, slots=True)
class StepStats:
    """Summary of per-step times in milliseconds (warm-up already dropped)."""

    mean: float
    p50: float
    p95: float

    @classmethod
    def from_values(cls, values_ms: Iterable[float]) -> StepStats:
        array = np.asarray(list(values_ms), dtype=float)
        if array.size == 0:
            raise ValueError("no timed steps")
        return cls(
            mean=float(array.mean()),
            p50=float(np.percentile(array, 50)),
            p95=float(np.percentile(array, 95)),
        )


class ResultsError(ValueError):
    """A results file that cannot be used (missing, unreadable, not writable)."""


def holds(path: Path, kind: tuple[str, str]) -> bool:
    """Whether ``path``'s first record is of ``kind`` (``BENCH_FILE``,
    ``COLLECTIVES_FILE``); False when it cannot be read."""
    try:
        schema = first_schema(path)
    except OSError:
        return False
    return bool(schema) and schema.startswith(kind[0])


def _problem(record: object) -> str | None:
    """Why a parsed line is not a usable record (the field named), or None."""
    if isinstance(record, dict) and record.get("schema") not in (SCHEMA, OLD_SCHEMA):
        schema = record.get("schema")
        if schema is None or schema == "":  # absent, null or empty: said, not as 'None'
            has = "no 'schema' field" if "schema" not in record else "an empty 'schema' field"
            return f"{has}: not a gpuscale bench results record (a record says schema {SCHEMA})"
        return f"schema is {str(schema)[:40]!r}, not {SCHEMA}: not a bench record"
    problem = record_problem(record)
    statuses = [s.value for s in BenchStatus]
    if problem is None and record.get("status") not in statuses:
        return f"status is {str(record.get('status'))[:40]!r}, not one of {', '.join(statuses)}"
    return problem


def read_results(
    path: Path | str,
    limit_bytes: int = MAX_RESULTS_BYTES,
    schemas: list[str] | None = None,
    *,
    takes_round: bool = True,
) -> tuple[list[dict[str, object]], list[str]]:
    """All usable records of a results file and a message per line that was skipped,
    read line by line. :class:`ResultsError` when it cannot be read, or when it holds
    more than ``limit_bytes`` (the rows read until then are counted in the message: a
    results file of that size is no sweep's, and would take several times as much
    memory; a device such as ``/dev/zero`` ends there too). ``schemas``: a list the
    schema of each line is added to (what the file holds, told from this one reading). A
    file that is not there whose name is a round's (``v5.0``) is told how to give the
    round (``tables.round_requests.round_hint``; ``takes_round``: the command takes
    ``--round``). ``path``: a str or a Path."""
    path = Path(path)
    records, problems = [], []
    try:
        for number, record, unread in json_lines(path, limit_bytes):
            if schemas is not None:
                schemas.append(schema_of(record))
            problem = unread or _problem(record)
            if problem:
                problems.append(f"{quoted_path(path)}:{number}: {problem}; skipped")
                continue
            records.append(_upgraded(record))
    except FileNotFoundError:
        raise ResultsError(no_results_file(path, takes_round)) from None
    except IsADirectoryError:
        raise ResultsError(
            f"{quoted_path(path)} is a folder: give a results file in "
            f"it{_writes(path / 'results.jsonl')}"
        ) from None
    except OSError as exc:
        raise ResultsError(f"cannot read {quoted_path(path)}: {exc.strerror or exc}") from None
    except TooLarge as exc:
        raise ResultsError(
            f"{quoted_path(path)} holds more than {format_bytes(limit_bytes)} of results (read "
            f"{len(records):,} rows in its first {exc.lines:,} lines before stopping); "
            f"gpuscale reads results files up to {format_bytes(limit_bytes)}: split it, or "
            "keep the rows you need (e.g. one sweep's, by sweep_id)"
        ) from None
    return records, problems


@dataclass(frozen=True, slots=True)
class BenchFile:
    """A results file read: its bench table (``bench_table``) and a message per line
    that was skipped."""

    table: pd.DataFrame
    skipped: list[str]

    def skipped_lines(self, most: int = 5) -> list[str]:
        """What was skipped as a command says it: the first ``most`` lines, then a count."""
        return skipped_lines(self.skipped, most)

    def unread_before(self, path: Path) -> list[str]:
        """What a sweep appending to the file at ``path`` says of its lines that could not
        be read: written before it (a sweep appends whole rows, and takes back a row cut
        short), with the command that lists them."""
        if not self.skipped:
            return []
        return [
            f"{counted(len(self.skipped), 'unreadable line')} in {quoted_path(path)}, written "
            f"before this sweep, skipped ({suggested_command('analyze', '--bench', path)} lists "
            "them)"
        ]


def load_bench(path: Path | str, *, takes_round: bool = True) -> BenchFile:
    """The one bench loader: the bench table of a results file, and the lines skipped.
    :class:`ResultsError` when it cannot be read (see :func:`read_results`) or holds no
    bench result, saying why (a ``gpuscale collectives`` file: give it as --collectives;
    else the first line skipped); TypeError naming ``path`` for one that is no path."""
    if not isinstance(path, str | os.PathLike):
        raise TypeError(f"path must be a results file's path, not {type(path).__name__}")
    path = Path(path)
    schemas: list[str] = []
    records, problems = read_results(path, schemas=schemas, takes_round=takes_round)
    if not records:
        if schemas and schemas[0].startswith(COLLECTIVES_FILE[0]):  # as `holds` tells it
            raise ResultsError(
                f"{quoted_path(path)} holds `gpuscale collectives` sweeps, not bench results: "
                "give it as --collectives to `gpuscale advise` (the command that reads them)"
            )
        if not problems:  # not one line but blank ones: nothing to skip, nothing to say of
            raise ResultsError(
                f"{quoted_path(path)}: empty, no gpuscale bench results in it{_writes(path)}"
            )
        example = "".join(f" (e.g. {p})" for p in problems[:1])
        raise ResultsError(
            f"{quoted_path(path)}: no gpuscale bench results in it; "
            f"{counted(len(problems), 'line')} "
            f"skipped{example}{_writes(path)}"
        )
    return BenchFile(bench_table(records), problems)


def holds_records(frame: pd.DataFrame) -> bool:
    """Whether ``frame`` holds a results file's records, a row each (as
    ``pd.read_json(path, lines=True)`` reads the file), rather than their bench table:
    either column no bench table has, so that records lacking the other are refused as
    records (each row's missing key said), not as a bench table lacking 70 columns."""
    return "schema" in frame.columns or "config" in frame.columns


def records_bench(frame: pd.DataFrame) -> BenchFile:
    """The bench table of the records ``frame`` holds (:func:`holds_records`), read as
    :func:`load_bench` reads the file's lines: a row that is no usable record skipped, said
    by its index. pandas' reading is undone first: a key the record lacks (NaN or None in
    its column) dropped, whole numbers whole again (a column lacking one is float), a time
    (``started_at``) in the ISO text the record wrote."""
    import pandas as pd  # lazy: as in frame_of

    # a column of whole numbers some record lacks: floats in pandas, whole numbers again
    whole = {
        column
        for column in frame.columns
        if frame[column].dtype.kind == "f" and frame[column].dropna().map(float.is_integer).all()
    }
    records, problems = [], []
    for index, row in zip(frame.index, frame.to_dict("records"), strict=True):
        record = {
            str(key): value.isoformat() if isinstance(value, pd.Timestamp) else value
            for key, value in row.items()
            if value is not None and not (isinstance(value, float) and np.isnan(value))
        }
        record |= {str(key): int(record[key]) for key in whole if key in record}
        problem = _problem(record)
        if problem:
            problems.append(f"row {index}: {problem}; skipped")
        else:
            records.append(_upgraded(record))
    if not records:
        example = "".join(f" (e.g. {p})" for p in problems[:1])
        raise ResultsError(f"the bench DataFrame holds no gpuscale bench result{example}")
    return BenchFile(bench_table(records), problems)


def _upgraded(record: dict[str, object]) -> dict[str, object]:
    """A ``gpuscale.bench/1`` record in the current shape (names only; the old runs
    measured one thread count per world size, which their flags say)."""
    if record.get("schema") != OLD_SCHEMA:
        return record
    config = {**record["config"], "accelerators": record["config"].get("world_size")}
    timing = dict(record.get("timing") or {})
    if "exposed_comm_ms" in timing:
        timing["sync_overhead_ms"] = timing.pop("exposed_comm_ms")
    flags = ["measured by gpuscale.bench/1: threads per process differed between world sizes"]
    return {**record, "config": config, "timing": timing, "flags": flags}


def done_keys(path: Path) -> set[str]:
    """Keys of the runs already measured well in the file: ``--resume`` skips them. A run
    is measured well when it has an ``ok`` row without flags (or whose only flag is that
    no N = 1 run is there: measuring it again would not give it one); a failure, and a
    flagged run (not a good measurement, or read against a flagged N = 1 run), is
    measured again."""
    return resume_file(path)[0]


class ResumePlan(NamedTuple):
    """What ``--resume`` does with a file's runs: the keys it skips (``kept``), why each
    other one is measured again (``again``) and the kept ones that are weak evidence,
    with why (``weak``)."""

    kept: set[str]
    again: Again
    weak: dict[str, tuple[str, ...]]


def resume_plan(records: list[dict[str, object]]) -> ResumePlan:
    """What ``--resume`` does with the runs ``records`` hold
    (``resume_said.kept_and_again`` and ``weak_kept``)."""
    table = bench_table(records)
    kept, again = kept_and_again(table)
    return ResumePlan(kept, again, weak_kept(table, kept))


def resume_file(path: Path) -> ResumePlan:
    """:func:`resume_plan` of a results file (nothing where there is none or it cannot
    be read: every run is measured)."""
    if not path.exists():
        return ResumePlan(set(), {}, {})
    try:
        records, _ = read_results(path)
    except ResultsError:
        return ResumePlan(set(), {}, {})
    return resume_plan(records)


def after_sweep(out_file: Path) -> tuple[BenchFile | None, list[str]]:
    """The results file a sweep appended to, read back for its summary, and the notes said
    of it: its unreadable lines written before (:meth:`BenchFile.unread_before`), or why
    it cannot be shown (None: a file that was never written, or one unreadable now)."""
    if not out_file.exists():
        return None, []
    try:
        loaded = load_bench(out_file)
    except ResultsError as exc:
        return None, [f"the results are not shown: {exc}"]
    return loaded, loaded.unread_before(out_file)

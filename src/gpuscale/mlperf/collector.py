"""The rows of a round's tables, collected while its entries stream past: a system
description, a result log or a power log parsed, a scaling factor read, or a file that
could not be read (a failed run, or no score); every row that does not count is a
problem row too."""

from __future__ import annotations

import codecs
import math
from dataclasses import dataclass, field

import orjson

from gpuscale.mlperf.benchmarks import workload_in_round
from gpuscale.mlperf.layout import wanted
from gpuscale.mlperf.parse import Parsed
from gpuscale.mlperf.power import Logs, PowerLog
from gpuscale.mlperf.systems import SystemDescriptionError, parse_system
from gpuscale.sources import Entry, Skipped
from gpuscale.tables import (
    ProblemKind,
    ProblemRow,
    Row,
    RunStatus,
    benchmark_of_folder,
    problem_row,
)


@dataclass
class Collector:
    """Accumulates rows while a round's entries stream past."""

    round_name: str
    systems: list[Row] = field(default_factory=list)
    runs: list[Row] = field(default_factory=list)
    problems: list[ProblemRow] = field(default_factory=list)
    scaling: dict[tuple[str, str, str], float] = field(default_factory=dict)
    bench_dirs: set[tuple[str, str, str]] = field(default_factory=set)
    # (org, system, benchmark folder, run stem) -> (kind, mean power W, stated scope) of
    # each power file, None for one that gave no power (its run then has no energy)
    power: dict[tuple[str, str, str, str], Logs] = field(default_factory=dict)
    power_notes: dict[tuple[str, str], int] = field(default_factory=dict)
    # the same key -> the digest of each node log read (copies of one node's: same digest)
    node_digests: dict[tuple[str, str, str, str], list[str]] = field(default_factory=dict)
    damaged: str = ""  # why the source could not be read to its end
    # (org, system id) of each system description there but unusable (not JSON, unreadable)
    unusable_systems: set[tuple[str, str]] = field(default_factory=set)

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
        self.power.setdefault((org, system_id, bench, stem), []).append(
            (log.kind, log.mean_power_w, log.scope)
        )
        if log.kind == "node" and log.digest:
            self.node_digests.setdefault((org, system_id, bench, stem), []).append(log.digest)

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
            self.unusable_systems.add((org, system_id))
            return
        except SystemDescriptionError as exc:
            self.problem(entry.path, ProblemKind.BAD_SYSTEM, str(exc))
            self.unusable_systems.add((org, system_id))
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
        its status), and so is a counted one whose time cannot be true (``time_flag``)."""
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
        elif full.get("time_flag"):  # counted, as the official tool counts it: said
            self.problem(rel, ProblemKind.IMPOSSIBLE_VALUE, str(full["time_flag"]))

    def not_read(self, skipped: Skipped) -> bool:
        """A result file or scaling.json that is there but could not be read as a regular
        file: a failed run (it counts against the required runs), or no score. True when
        ``skipped`` was taken in so."""
        parts = skipped.path.split("/")
        if len(parts) == 3 and parts[1] == "systems" and wanted(skipped.path):
            self.unusable_systems.add((parts[0], parts[2][: -len(".json")]))  # its note says why
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

"""Energy to train from MLPerf power logs, by the official summarizer's rule.

Beside a run's ``result_<x>.txt``, ``power/result_<x>/node_*.txt`` hold each node's
``power_reading`` series (W) between ``power_measurement_start`` and ``_stop``, and
``sw_*.txt`` an ``interconnect_power_est`` (W) per switch. As
``mlperf_logging.result_summarizer`` (``_compute_power_node``, ``_compute_power_sw``):

* node: lines sorted by time; from the start marker, each reading adds
  ``value * (t - t_previous)`` until the stop marker; energy (J) =
  ``conversion_eff * sum / (t_stop - t_start) * time_to_train_ms / 1000``: the mean power
  over the measurement window times the run's time to train;
* switch: ``conversion_eff * interconnect_power_est * time_to_train_ms / 1000``;
* run energy = all nodes + all switches; the benchmark's energy score averages the runs
  the time score's olympic rule keeps, times the scaling factor.

Where the stop marker is logged at the start time (v4.0's smc-ac-power and smc-dc-power),
the official tool divides by zero and publishes nothing; gpuscale ends the window at the
last reading instead (the rule the official tool applies when there is no stop marker)
and says so.

A node log that repeats another node's of the same run byte for byte (v4.0's SMC
multi-node runs) is summed as the official rule sums it, and said (:func:`copied_logs`).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import TYPE_CHECKING

from gpuscale.mlperf.mllog import (
    Record,
    find_payloads,
    finite_or_none,
    metadata_of,
    select_records,
    time_of,
    value_of,
)
from gpuscale.plausibility import accelerator_power_flag
from gpuscale.tables import ProblemKind, ProblemRow, Row, benchmark_of_folder, problem_row
from gpuscale.tables.power_copies import copies_said
from gpuscale.tables.power_scope import SCOPES, named_scope, scope_disagreement, stated_scope
from gpuscale.tables.rounds import NO_POWER

if TYPE_CHECKING:
    import pandas as pd

_NODE_KEYS = frozenset(
    {"power_measurement_start", "power_measurement_stop", "power_reading", "conversion_eff"}
)
_SW_KEYS = frozenset({"conversion_eff", "interconnect_power_est"})
# Physical range of a reading: a node (up to a rack-scale NVL72 tray shelf) or a switch
# draws between 0 and this many watts; outside it a reading is an error, not a finding.
MAX_POWER_W = 200_000.0


def _reading(rec: Record, what: str) -> float:
    """A power value (W) within the physical range, else ValueError naming it."""
    value = finite_or_none(value_of(rec))
    if value is None or not 0.0 <= value <= MAX_POWER_W:
        raise ValueError(
            f"{what} {value_of(rec)!r} W is outside the physical range 0-{MAX_POWER_W:,.0f} W"
            + NO_POWER
        )
    return value


def _efficiency(rec: Record) -> float:
    value = finite_or_none(value_of(rec))
    if value is None or not 0.0 < value <= 1.0:
        raise ValueError(f"conversion_eff {value_of(rec)!r} is not in (0, 1]" + NO_POWER)
    return value


@dataclass(frozen=True, slots=True)
class PowerLog:
    """One power file reduced to its mean power (W) and what was odd about it; a mean of
    None is a file that could not be read for its power, so its run has no energy."""

    kind: str  # "node" or "switch"
    mean_power_w: float | None
    note: str = ""
    scope: str = ""  # AC or DC as its conversion_eff line states it ("" where it does not)
    digest: str = ""  # a node log's bytes' SHA-256: a copy of another node's has the same


def _mean_node_power(
    records: list[tuple[int, Record]], *, ignore_stop: bool
) -> tuple[float, float]:
    """(conversion_eff * sum(value * dt), window ms) by the official walk."""
    ordered = sorted(records, key=lambda pair: time_of(pair[1]))  # stable, as sorted()
    start = stop = prev = last = 0.0
    started = stopped = False
    total = 0.0
    efficiency = 1.0
    for _, rec in ordered:
        key, ts = rec.key, time_of(rec)
        if ts != ts:
            raise ValueError(f"{key} at time_ms {rec.time_ms!r}, not a finite number")
        if key == "power_measurement_start":
            start, prev, started = ts, ts, True
        if key == "power_reading" and not stopped and started:
            total += _reading(rec, "power_reading") * (ts - prev)
            prev, last = ts, max(last, ts)
        if key == "power_measurement_stop" and not ignore_stop:
            stop, stopped = ts, True
        if key == "conversion_eff":
            efficiency = _efficiency(rec)
    if not started:
        raise ValueError("no power_measurement_start")
    if not stopped:
        stop = last
    return efficiency * total, stop - start


def _switch(records: list[tuple[int, Record]], note: str) -> PowerLog:
    efficiency, estimate = 1.0, None
    for _, rec in records:  # the official loop stops at the first estimate
        if rec.key == "conversion_eff":
            efficiency = _efficiency(rec)
        elif rec.key == "interconnect_power_est":
            estimate = _reading(rec, "interconnect_power_est")
            break
    if estimate is None:  # the official tool counts such a switch as 0 W
        return PowerLog("switch", 0.0, note + "no interconnect_power_est")
    return PowerLog("switch", efficiency * estimate, note.rstrip("; "))


# The keys a power log is read for, by its kind (a switch's otherwise)
_KEYS_OF = {"node": _NODE_KEYS}


def _scope(records: list[tuple[int, Record]]) -> tuple[str, str]:
    """(the power scope the first ``conversion_eff`` line states in its metadata's
    ``measurement_type``: ``AC``, ``DC`` or "", a note on a word that is neither)."""
    for _, rec in records:
        if rec.key != "conversion_eff":
            continue
        metadata = metadata_of(rec)
        said = metadata.get("measurement_type") if isinstance(metadata, dict) else None
        if said is None:
            return "", ""
        word = str(said).strip().upper()
        if word in SCOPES:
            return word, ""
        return "", f"measurement_type {said!r} is neither AC nor DC, read as unstated; "
    return "", ""


def read_power_log(data: bytes, kind: str) -> PowerLog:
    """Mean power of a ``node_*.txt`` or ``sw_*.txt`` file and the scope it states;
    never raises."""
    by_key, failures = select_records(find_payloads(data), _KEYS_OF.get(kind, _SW_KEYS))
    records = sorted((pair for group in by_key.values() for pair in group), key=lambda p: p[0])
    scope, note = _scope(records)
    if failures:
        note += f"{len(failures)} unreadable lines; "
    log = _read_power(records, kind, note)
    # a node's log only: copies of one node's are what the energy can be misled by
    digest = hashlib.sha256(data).hexdigest() if kind == "node" else ""
    return PowerLog(log.kind, log.mean_power_w, log.note, scope, digest)


def _read_power(records: list[tuple[int, Record]], kind: str, note: str) -> PowerLog:
    """The mean power of a file's records (None with why where they give none)."""
    try:
        if kind == "switch":
            return _switch(records, note)
        energy, window = _mean_node_power(records, ignore_stop=False)
        if window <= 0:
            energy, window = _mean_node_power(records, ignore_stop=True)
            note += (
                "power_measurement_stop logged at the start time (the official tool "
                "divides by zero here); the window ends at the last reading; "
            )
        if window <= 0:
            return PowerLog(kind, None, note + "no power readings after the start")
        return PowerLog(kind, energy / window, note.rstrip("; "))
    except ValueError as exc:
        return PowerLog(kind, None, note + str(exc))


# (kind, mean power W or None, stated scope) of each power file of a run
Logs = list[tuple[str, float | None, str]]


def add_energy(runs: list[Row], power: dict[tuple[str, str, str, str], Logs]) -> None:
    """Energy to train of each counted run with power logs (kJ): nodes, switches and
    their sum (None elsewhere, and where one of its power files gave no mean power: the
    other files' sum would be too low); and the power scope its logs state
    (``power_scope``: ``AC``, ``DC``, ``AC/DC`` where they disagree, "" where none says)."""
    for r in runs:
        logs = power.get((r["org"], r["system_id"], r["benchmark"], r["run_file"].split(".")[0]))
        r["power_scope"] = stated_scope(scope for *_, scope in logs or ())
        nodes = [w for kind, w, _ in logs or () if kind == "node"]
        whole = all(w is not None for _, w, _ in logs or ())
        ttt_ms = r["run_stop_ms"] - r["run_start_ms"] if nodes and whole and r["counted"] else None
        if not ttt_ms:
            r["compute_energy_kj"] = r["interconnect_energy_kj"] = r["energy_kj"] = None
            continue
        switches = [w for kind, w, _ in logs if kind == "switch"]
        r["compute_energy_kj"] = sum(nodes) * ttt_ms / 1e6
        r["interconnect_energy_kj"] = sum(switches) * ttt_ms / 1e6
        r["energy_kj"] = r["compute_energy_kj"] + r["interconnect_energy_kj"]


def copied_logs(
    round_name: str, digests: dict[tuple[str, str, str, str], list[str]]
) -> list[ProblemRow]:
    """A ``power log`` problem per result folder whose runs hold node logs that repeat
    another node's of the same run byte for byte (``digests``: each run's node log
    digests, by (org, system id, benchmark folder, run stem)): how many of its node logs
    are such copies. The energy still sums them, as the official rule does."""
    counts: dict[tuple[str, str, str], tuple[int, int]] = {}
    for (org, system_id, folder, _), prints in digests.items():
        copies, logs = counts.get((org, system_id, folder), (0, 0))
        counts[(org, system_id, folder)] = (
            copies + len(prints) - len(set(prints)),
            logs + len(prints),
        )
    return [
        problem_row(
            round_name,
            f"{org}/results/{system_id}/{folder}/power",
            ProblemKind.POWER_LOG,
            copies_said(copies, logs),
        )
        for (org, system_id, folder), (copies, logs) in sorted(counts.items())
        if copies
    ]


def result_scopes(
    round_name: str, scores: pd.DataFrame, runs: list[Row], metered: set[tuple[str, str, str]]
) -> tuple[list[str], list[ProblemRow]]:
    """Each result's ``power_scope`` (its runs' logs', else its names', else ``unstated``;
    "" for a result without power logs: not one of ``metered``, its (org, system id,
    benchmark folder)) and a ``power log`` problem where the logs state both scopes or one
    the names contradict (``gpuscale.tables.power_scope``)."""
    stated: dict[tuple[object, ...], set[str]] = {}
    for r in runs:  # a run's scope is one, or both joined (AC/DC)
        for scope in str(r.get("power_scope") or "").split("/"):
            stated.setdefault((r["org"], r["system_id"], r["benchmark"]), set()).add(scope)
    out, problems = [], []
    keys = scores[["org", "system_id", "benchmark", "system_name"]].itertuples(index=False)
    for org, system_id, folder, name in keys:
        if (org, system_id, folder) not in metered:
            out.append("")
            continue
        logs = stated_scope(stated.get((org, system_id, benchmark_of_folder(folder)), ()))
        names = named_scope(str(org), str(system_id), str(name))
        out.append(logs or names)
        if said := scope_disagreement(logs, names):
            where = f"{org}/results/{system_id}/{folder}/power"
            problems.append(problem_row(round_name, where, ProblemKind.POWER_LOG, said))
    return out, problems


def flag_energies(round_name: str, rows: list[Row]) -> list[ProblemRow]:
    """An ``impossible value`` problem per score row whose energy to train over its
    accelerator-time implies a power per accelerator none draws
    (``plausibility.accelerator_power_flag``): the logs' unit or the system's counts are
    wrong. The official score stands; ``gpuscale energy`` flags the row and leaves it out
    of its findings."""
    problems = []
    for row in rows:
        energy = row.get("energy_kj")
        if said := accelerator_power_flag(
            energy, row.get("accelerators"), row.get("time_to_train_min")
        ):
            where = f"{row['org']}/results/{row['system_id']}/{row['benchmark']}/power"
            message = f"energy_kj {energy:,.4g}: {said} (the official score stands)"
            problems.append(problem_row(round_name, where, ProblemKind.IMPOSSIBLE_VALUE, message))
    return problems

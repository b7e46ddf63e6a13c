"""One result or power file to one row: what a worker process does with each file.

:func:`read_result_file` turns a ``result_*.txt`` into a ``runs`` row (without the
path columns); :func:`parse_task` reads a file (from disk or from bytes handed over)
and parses it as a result log or a node/switch power log. Nothing here raises on bad
input.
"""

from __future__ import annotations

import math
from collections.abc import Callable

from gpuscale.mlperf.compliance import Violation, ViolationKind, run_violations
from gpuscale.mlperf.mllog import utf16
from gpuscale.mlperf.power import PowerLog, read_power_log
from gpuscale.mlperf.rcp import run_samples_to_converge
from gpuscale.mlperf.rules import KeyRule, keys_of_ruleset, rules_for, ruleset_for
from gpuscale.mlperf.runlog import RunLog, read_run_log
from gpuscale.quantities import agreeing, counted
from gpuscale.sources import Entry
from gpuscale.tables import Row, RunStatus
from gpuscale.tables.json_depth import JSON

# Why a UTF-16 log holds no MLLOG line for the official parser, which reads latin-1
UTF16_UNREAD = "which the official parser reads no MLLOG line in: saved as UTF-8 it would be read"


def _looks_binary(data: bytes) -> bool:
    return b"\x00" in data[:8192]


def _violations(log: RunLog, ruleset: str | None, why: str) -> list[Violation]:
    """What the official checker's rules of ``ruleset`` reject in a run (with no ruleset
    for the round: that, ``why``)."""
    if ruleset is None:
        return [Violation(ViolationKind.BENCHMARK, why)]
    return run_violations(
        ruleset=ruleset,
        benchmark=log.benchmark,
        division=log.division,
        by_key=log.by_key,
        n_lines=log.mllog_lines,
    )


def _status(
    data: bytes, log: RunLog, violations: list[Violation], reasons: list[str], impossible: bool
) -> tuple[str, list[str]]:
    """A run's ``status``, most specific first (see :class:`RunStatus`), and the reasons it
    is not counted (replaced by one for a file without MLLOG lines)."""
    if log.mllog_lines == 0:
        if utf16(data):
            return RunStatus.NOT_TEXT, [f"UTF-16 text, {UTF16_UNREAD}"]
        if _looks_binary(data):
            return RunStatus.NOT_TEXT, ["binary data, not a text log"]
        return RunStatus.MISSING_RUN_START, ["no MLLOG lines in the file"]
    if log.parse_failures:
        return RunStatus.PARSE_ERROR, reasons
    if impossible:
        return RunStatus.IMPOSSIBLE_VALUE, reasons
    if log.run_start_ms is None:
        return RunStatus.MISSING_RUN_START, reasons
    if log.run_stop_ms is None:
        return RunStatus.MISSING_RUN_STOP, reasons
    if log.run_stop_status not in (None, "success"):
        # one vocabulary: logs say aborted, abort, fail...; the logged word is in the reasons
        return RunStatus.ABORTED, reasons
    if any(v.kind is ViolationKind.QUALITY_TARGET for v in violations):
        return RunStatus.NOT_CONVERGED, reasons
    return (RunStatus.NONCOMPLIANT if reasons else RunStatus.SUCCESS), reasons


def read_result_file(data: bytes, round_name: str) -> Row:
    """One ``runs`` row (without the path columns) from a result file's bytes."""
    ruleset, why = ruleset_for(round_name)
    log = read_run_log(data, keys_of_ruleset(ruleset))
    ttt_ms = log.time_to_train_ms
    violations = _violations(log, ruleset, why)
    reasons = [v.message for v in violations]
    impossible = ttt_ms is not None and not (math.isfinite(ttt_ms) and ttt_ms > 0)
    if impossible:
        reasons.insert(
            0,
            f"time to train {ttt_ms!r} ms is not positive and finite (run_start "
            f"{log.run_start_ms!r}, run_stop {log.run_stop_ms!r}); not counted",
        )
    if log.parse_failures:
        reasons.insert(
            0,
            f"{counted(log.parse_failures, 'MLLOG line')} "
            f"{agreeing(log.parse_failures, 'does', 'do')} not parse; "
            f"first: {log.first_parse_failure}",
        )
    status, reasons = _status(data, log, violations, reasons, impossible)
    time_flag = "" if impossible else _start_flag(log)
    is_counted = not reasons and ttt_ms is not None
    if status == RunStatus.ABORTED and log.run_stop_status != RunStatus.ABORTED:
        reasons = [*reasons, f"run_stop status {log.run_stop_status!r} (read as aborted)"]
    target = rules_for(ruleset, log.division, log.benchmark).quality if ruleset else None
    quality_keys = {target.name, "eval_accuracy"} if target else set()
    quality = [e.value for e in log.evals if e.key in quality_keys]
    seed = log.first.get("seed")
    return {
        "run_start_ms": log.run_start_ms,
        "run_stop_ms": log.run_stop_ms,
        "time_to_train_min": ttt_ms / 60 / 1000 if ttt_ms is not None and not impossible else None,
        "status": str(status),
        "counted": is_counted,
        "problem": "; ".join(reasons),
        "time_flag": time_flag,
        "log_benchmark": log.benchmark,
        "log_division": log.division,
        "global_batch_size": log.global_batch_size,
        "samples_to_converge": run_samples_to_converge(log, *_sd_rule(target, ruleset)),
        "mean_logged_throughput": log.mean_throughput,
        "final_quality": str(quality[-1]) if quality else None,
        "seed": str(seed) if seed is not None else None,
        "mllog_lines": log.mllog_lines,
        "parse_errors": log.parse_failures,
        # Not columns: compared with the folder's other logs by the ingest.
        "log_org": _text(log.first.get("submission_org")),
        "log_platform": _text(log.first.get("submission_platform")),
    }


def _start_flag(log: RunLog) -> str:
    """Why the run's time cannot be true (:meth:`RunLog.start_before_init`), "" where it
    can. The run is scored as the official tool scores it all the same; the analysis
    draws none of its time (``gpuscale.analysis.score_intervals``)."""
    init = log.start_before_init()
    if init is None or log.time_to_train_ms is None:
        return ""
    return (
        f"run_start {log.run_start_ms:.0f} precedes init_start {init[0]:.0f} and init_stop "
        f"{init[1]:.0f} precedes run_stop {log.run_stop_ms:.0f}: the run would have begun "
        "before its own initialisation, which ended inside it, so its "
        f"{log.time_to_train_ms / 60e3:,.4g} min cannot be true (scored as MLCommons "
        "scores it; no interval draws this time)"
    )


def _text(value: JSON) -> str | None:
    if value is None:
        return None
    return str(value).strip()


# A file to parse: (kind "run" | "node" | "switch", round-relative path, its bytes or
# how to read them, round name).
Task = tuple[str, str, "bytes | Callable[[], bytes]", str]
# What a worker returns: (kind, path, runs row without path columns | PowerLog).
Parsed = tuple[str, str, Row | PowerLog]


def parse_task(task: Task) -> Parsed:
    """Parse one result or power file; never raises."""
    kind, rel, where, round_name = task
    try:
        data = where if isinstance(where, bytes) else where()
    except OSError as exc:
        message = f"cannot read file ({exc.strerror})"
        if kind != "run":
            return kind, rel, PowerLog(kind, None, message)
        return (
            kind,
            rel,
            {"status": str(RunStatus.UNREADABLE), "counted": False, "problem": message},
        )
    if kind == "run":
        return kind, rel, read_result_file(data, round_name)
    return kind, rel, read_power_log(data, kind)


def task_for(entry: Entry, round_name: str) -> Task | None:
    """The worker task for a result log or a node/switch power log, else None."""
    if entry.is_dir:
        return None
    parts = entry.path.split("/")
    if len(parts) == 5 and parts[1] == "results" and parts[4] != "scaling.json":
        kind = "run"
    elif len(parts) == 7 and parts[4] == "power" and parts[6].startswith(("node_", "sw_")):
        kind = "node" if parts[6].startswith("node_") else "switch"
    else:
        return None
    return (kind, entry.path, entry.read, round_name)


def _sd_rule(
    target: KeyRule | None, ruleset: str | None
) -> tuple[()] | tuple[str, Callable[[dict[str, float]], bool]]:
    """Stable Diffusion's grouping member and FID/CLIP test from the ruleset's own
    aggregated quality rule, where it has one."""
    if target is None or ruleset is None:
        return ()
    rules = rules_for(ruleset, "closed", "stable_diffusion")
    if not rules.aggregate or target.name != rules.aggregate[0]:
        return ()
    check = target.at_least_one
    return rules.aggregate[1], lambda values: check({"value": values, "metadata": {}})


def parse_entry(entry: Entry, round_name: str) -> Parsed | None:
    """An entry's parsed row, or None for entries that are not parse tasks (systems,
    scaling factors, folders). Never raises."""
    task = task_for(entry, round_name)
    if task is None:
        return None
    return parse_task(task)

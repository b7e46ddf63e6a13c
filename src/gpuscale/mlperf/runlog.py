"""One result file distilled: the facts scoring and convergence analysis need.

:func:`read_run_log` turns the bytes of a ``result_*.txt`` into a :class:`RunLog` in one
pass. Which ``run_start``/``run_stop`` pair counts follows the official summarizer
(``_query_run_start_stop``): walking the lines in file order, ``run_start`` is updated at
every ``run_start`` line and the walk stops at the first moment both have been seen.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from gpuscale.mlperf.compliance import check_common_rules
from gpuscale.mlperf.mllog import finite_or_none, mllog_payloads, parse_payloads

# Keys whose values feed the compliance emulation and the convergence analysis.
_EVAL_KEYS = frozenset({"eval_accuracy", "aggregated_eval_accuracy", "eval_error"})
_FIRST_KEYS = frozenset(
    {
        "submission_benchmark",
        "submission_division",
        "submission_org",
        "submission_platform",
        "submission_status",
        "seed",
        "train_samples",
        "number_of_nodes",
        "accelerators_per_node",
        "eval_samples",
    }
)


@dataclass(frozen=True, slots=True)
class EvalPoint:
    """One logged evaluation: its key, value and the progress it was logged at."""

    index: int
    key: str
    value: Any
    time_ms: float
    epoch_num: float | None
    samples_count: float | None
    step_num: float | None
    metric: str | None


@dataclass(slots=True)
class RunLog:
    """What one result file says. Times are Unix milliseconds as logged."""

    mllog_lines: int = 0
    parse_failures: int = 0
    first_parse_failure: str = ""
    run_start_ms: float | None = None
    run_stop_ms: float | None = None
    run_stop_status: str | None = None
    run_stop_has_status: bool = False
    violations: list[str] = field(default_factory=list)
    run_stops: list[tuple[int, Any]] = field(default_factory=list)
    first: dict[str, Any] = field(default_factory=dict)
    global_batch_size: float | None = None
    evals: list[EvalPoint] = field(default_factory=list)
    throughput_sum: float = 0.0
    throughput_n: int = 0

    @property
    def benchmark(self) -> str | None:
        value = self.first.get("submission_benchmark")
        return value if isinstance(value, str) else None

    @property
    def division(self) -> str | None:
        value = self.first.get("submission_division")
        return value if isinstance(value, str) else None

    @property
    def time_to_train_ms(self) -> float | None:
        if self.run_start_ms is None or self.run_stop_ms is None:
            return None
        return self.run_stop_ms - self.run_start_ms

    @property
    def mean_throughput(self) -> float | None:
        return self.throughput_sum / self.throughput_n if self.throughput_n else None


_WANTED = frozenset(
    {"run_start", "run_stop", "tracked_stats", "global_batch_size"} | _EVAL_KEYS | _FIRST_KEYS
)


def _wanted(records: list[dict[str, Any] | None]) -> list[tuple[int, dict[str, Any]]]:
    """(index, record) of the records whose key this module reads."""
    try:
        return [(i, r) for i, r in enumerate(records) if r is not None and r["key"] in _WANTED]
    except TypeError:  # an unhashable key somewhere: take the slow, careful way
        return [
            (i, r)
            for i, r in enumerate(records)
            if r is not None and isinstance(r["key"], str) and r["key"] in _WANTED
        ]


def _number(meta: dict[str, Any], name: str) -> float | None:
    return finite_or_none(meta.get(name))


def read_run_log(data: bytes) -> RunLog:
    """Distil one MLLOG result file. Never raises: bad lines are counted, not fatal."""
    payloads = mllog_payloads(data)
    records, failures = parse_payloads(payloads)
    violations = check_common_rules(records)
    log = RunLog(mllog_lines=len(payloads), parse_failures=len(failures), violations=violations)
    if failures:
        f = failures[0]
        log.first_parse_failure = f"MLLOG line {f.index + 1}: {f.message}: {f.line[:120]}"
    first = log.first
    start = stop = None
    pair_found = False
    for index, rec in _wanted(records):
        key = rec["key"]
        if key == "run_start":
            if not pair_found:
                start = rec
        elif key == "run_stop":
            meta = rec["metadata"] if isinstance(rec["metadata"], dict) else {}
            log.run_stops.append((index, meta.get("status")))
            if not pair_found:
                stop = rec
        elif key in _EVAL_KEYS:
            meta = rec["metadata"] if isinstance(rec["metadata"], dict) else {}
            metric = meta.get("metric")
            log.evals.append(
                EvalPoint(
                    index=index,
                    key=key,
                    value=rec["value"],
                    time_ms=float(rec["time_ms"]),
                    epoch_num=_number(meta, "epoch_num"),
                    samples_count=_number(meta, "samples_count"),
                    step_num=_number(meta, "step_num"),
                    metric=metric if isinstance(metric, str) else None,
                )
            )
        elif key == "tracked_stats":
            value = rec["value"]
            if isinstance(value, dict):
                tput = finite_or_none(value.get("throughput"))
                if tput is not None:
                    log.throughput_sum += tput
                    log.throughput_n += 1
        elif key == "global_batch_size":
            log.global_batch_size = finite_or_none(rec["value"])
        elif key in _FIRST_KEYS and key not in first:
            first[key] = rec["value"]
        if start is not None and stop is not None:
            pair_found = True
    if start is not None:
        log.run_start_ms = float(start["time_ms"])
    if stop is not None:
        log.run_stop_ms = float(stop["time_ms"])
        meta = stop["metadata"] if isinstance(stop["metadata"], dict) else {}
        log.run_stop_has_status = "status" in meta
        status = meta.get("status")
        log.run_stop_status = status if isinstance(status, str) else None
    return log

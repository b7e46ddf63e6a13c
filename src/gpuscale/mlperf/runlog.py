"""One result file distilled: the facts scoring and convergence analysis need.

:func:`read_run_log` turns the bytes of a ``result_*.txt`` into a :class:`RunLog` in one
pass. Which ``run_start``/``run_stop`` pair counts follows the official summarizer
(``_query_run_start_stop``): walking the lines in file order, ``run_start`` is updated at
every ``run_start`` line and the scan stops at the first moment both have been seen.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import msgspec

from gpuscale.mlperf.compliance import ORDER_KEYS
from gpuscale.mlperf.mllog import (
    ByKey,
    Record,
    fields_of,
    find_payloads,
    finite_or_none,
    metadata_of,
    select_records,
    time_of,
    value_of,
)
from gpuscale.tables.json_depth import JSON

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
    value: JSON
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
    by_key: ByKey = field(default_factory=dict)  # the selected records, for compliance
    run_stops: list[tuple[int, JSON]] = field(default_factory=list)  # (line, status)
    first: dict[str, JSON] = field(default_factory=dict)
    global_batch_size: float | None = None
    evals: list[EvalPoint] = field(default_factory=list)
    throughput_sum: float = 0.0
    throughput_n: int = 0

    @property
    def benchmark(self) -> str | None:
        return _text(self.first.get("submission_benchmark"))

    @property
    def division(self) -> str | None:
        return _text(self.first.get("submission_division"))

    @property
    def time_to_train_ms(self) -> float | None:
        if self.run_start_ms is None or self.run_stop_ms is None:
            return None
        return self.run_stop_ms - self.run_start_ms

    def start_before_init(self) -> tuple[float, float] | None:
        """(init_start, init_stop) where the logged ``run_start`` cannot be true: it
        precedes the first ``init_start`` while the first ``init_stop`` after that precedes
        ``run_stop``, so the run would have begun before its own initialisation, which
        ended inside it (v0.7 Google tpu-v3-8192-TF SSD ``result_0.txt``: a round
        placeholder, 1592800000000). None otherwise: logs whose init lines come after
        ``run_stop`` (v0.7 Intel's TensorFlow ResNet, written after the run) keep their
        times."""
        if self.run_start_ms is None or self.run_stop_ms is None:
            return None
        starts = [time_of(r) for _, r in self.by_key.get("init_start", [])]
        starts = [t for t in starts if math.isfinite(t)]
        if not starts:
            return None
        init_start = min(starts)
        stops = [time_of(r) for _, r in self.by_key.get("init_stop", [])]
        stops = [t for t in stops if math.isfinite(t) and t >= init_start]
        if not stops:
            return None
        init_stop = min(stops)
        if self.run_start_ms < init_start and init_stop < self.run_stop_ms:
            return init_start, init_stop
        return None

    @property
    def mean_throughput(self) -> float | None:
        if not self.throughput_n:
            return None
        return self.throughput_sum / self.throughput_n


_WANTED = frozenset(
    {"run_start", "run_stop", "tracked_stats", "global_batch_size"} | _EVAL_KEYS | _FIRST_KEYS
)
# What one pass over a log must pick out besides the round's rule keys.
SELECT = _WANTED | ORDER_KEYS


class _EvalMetadata(msgspec.Struct):
    """The members of an evaluation line's metadata that gpuscale reads, each any JSON
    value as logged (checked where read)."""

    epoch_num: object = None
    samples_count: object = None
    step_num: object = None
    metric: object = None


class _TrackedStats(msgspec.Struct):
    throughput: object = None


def _official_pair(
    starts: list[tuple[int, Record]], stops: list[tuple[int, Record]]
) -> tuple[Record | None, Record | None]:
    """The run_start/run_stop records the official scan settles on.

    It updates ``run_start`` at every run_start line and ``run_stop`` at every run_stop
    line, and stops at the first line after which both are set: so the later of the two
    first occurrences ends the scan, and the other key counts its last line before it.
    """
    if not starts or not stops:
        return _first_record(starts), _first_record(stops)
    first_start, first_stop = starts[0][0], stops[0][0]
    if first_start < first_stop:
        return [r for i, r in starts if i < first_stop][-1], stops[0][1]
    return starts[0][1], [r for i, r in stops if i < first_start][-1]


def _first_record(records: list[tuple[int, Record]]) -> Record | None:
    return next((rec for _, rec in records), None)


def _text(value: JSON) -> str | None:
    """A logged value where it is text (a name, a status), else None."""
    if isinstance(value, str):
        return value
    return None


def _meta(rec: Record) -> dict[str, JSON]:
    meta = metadata_of(rec)
    return meta if isinstance(meta, dict) else {}


def _eval_point(index: int, rec: Record) -> EvalPoint:
    meta = fields_of(rec.metadata, _EvalMetadata)
    return EvalPoint(
        index=index,
        key=rec.key,
        value=value_of(rec),
        time_ms=time_of(rec),
        epoch_num=finite_or_none(meta.epoch_num),
        samples_count=finite_or_none(meta.samples_count),
        step_num=finite_or_none(meta.step_num),
        metric=_text(meta.metric),
    )


def read_run_log(data: bytes, keys: frozenset[str] = frozenset()) -> RunLog:
    """Distil one MLLOG result file, keeping the records of ``keys`` too (the round's
    rule keys). Never raises: bad lines are counted, not fatal."""
    payloads = find_payloads(data)
    by_key, failures = select_records(payloads, SELECT | keys)
    log = RunLog(mllog_lines=payloads.count, parse_failures=len(failures), by_key=by_key)
    if failures:
        f = failures[0]
        log.first_parse_failure = f"MLLOG line {f.index + 1}: {f.message}: {f.line[:120]}"
    log.first = {k: value_of(by_key[k][0][1]) for k in _FIRST_KEYS if k in by_key}
    if "global_batch_size" in by_key:
        log.global_batch_size = finite_or_none(value_of(by_key["global_batch_size"][-1][1]))
    log.evals = sorted(
        (_eval_point(i, r) for k in _EVAL_KEYS for i, r in by_key.get(k, [])),
        key=lambda e: e.index,
    )
    for _, rec in by_key.get("tracked_stats", []):
        tput = finite_or_none(fields_of(rec.value, _TrackedStats).throughput)
        if tput is not None:
            log.throughput_sum += tput
            log.throughput_n += 1
    stops = by_key.get("run_stop", [])
    log.run_stops = [(i, _meta(r).get("status")) for i, r in stops]
    start, stop = _official_pair(by_key.get("run_start", []), stops)
    if start is not None:
        log.run_start_ms = time_of(start)
    if stop is not None:
        log.run_stop_ms = time_of(stop)
        meta = _meta(stop)
        log.run_stop_has_status = "status" in meta
        log.run_stop_status = _text(meta.get("status"))
    return log

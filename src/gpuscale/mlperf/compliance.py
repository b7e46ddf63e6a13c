"""Whether a run counts: the official compliance checker's verdict, from its own rules.

The official summarizer drops a run whose log fails ``mlperf_logging``'s compliance
checker. gpuscale applies the round's rules as ``gpuscale.mlperf.rules`` reads them
from the package: every key's occurrence rule (``REQ``), every stateless ``CHECK`` and
``FIRST_CHECK`` on each line, the quality target (``ATLEAST_ONE_CHECK``, with Stable
Diffusion's aggregated FID/CLIP lines built as the config's ``BEGIN`` block builds them),
whether the declared benchmark is allowed in the declared division, and every stateful
rule (``PRE``/``POST`` state, stateful checks, ``END`` blocks: ``gpuscale.mlperf.stateful``).
The stateful checks of ``common.yaml`` on the order of ``init_start`` / ``init_stop`` /
``run_start`` / ``run_stop`` are emulated here from the line indices, which gives the
checker's verdict without a Python step per line (logs repeat ``init_start`` on every
rank); the initialisation time limit is the ruleset's own ``init_stop`` check, evaluated
(a fixed 30 min in 1.1.0, ``compile_time_mins`` set by the division's POST from 2.0.0). A
rule the engine refuses to evaluate is a violation naming the rule (the run is not counted:
its compliance is unknown), never a silent skip.
"""

from __future__ import annotations

import contextlib
import copy
from bisect import bisect_left
from dataclasses import dataclass
from enum import Enum
from itertools import accumulate

import msgspec

from gpuscale.mlperf.expressions import Expression, LineValue, Program, State
from gpuscale.mlperf.mllog import ByKey, Record, _decoded, metadata_of, time_of, value_of
from gpuscale.mlperf.rules import KeyRule, Rules, rules_for
from gpuscale.mlperf.stateful import ORDER_KEYS, config_failures, line_of, unsupported
from gpuscale.quantities import joined
from gpuscale.tables.json_depth import JSON

__all__ = ["ORDER_KEYS", "Violation", "ViolationKind", "check_order", "run_violations"]


class ViolationKind(Enum):
    """Why the official checker rejects a run: its log's structure, the benchmark it
    declares, or the quality target it never reached."""

    STRUCTURE = "structure"
    BENCHMARK = "benchmark"
    QUALITY_TARGET = "quality target"
    UNCHECKED = "rule not evaluated"


@dataclass(frozen=True, slots=True)
class Violation:
    kind: ViolationKind
    message: str


def _init_limit(rules: Rules | None) -> tuple[Expression | None, State, Program | None]:
    """common.yaml's initialisation-limit check (the stateful init_stop CHECK that reads
    ``first_init_start``), its BEGIN state, and the division POST that may change it."""
    configs = getattr(rules, "configs", ())
    common = next((c for c in configs if c.name == "common.yaml"), None)
    if common is None or "init_stop" not in common.keys:
        return None, {}, None
    limit = next(
        (c for c in common.keys["init_stop"].checks if "first_init_start" in c.state_keys),
        None,
    )
    division = common.keys.get("submission_division")
    return limit, common.begin_state, getattr(division, "post", None)


def check_order(by_key: ByKey, n_lines: int, rules: Rules | None = None) -> list[str]:
    """Violations of common.yaml's stateful rules: init and run ordering, the ruleset's
    initialisation time limit (its own init_stop check) and run_stop's status."""
    never = n_lines + 1

    def first(key: str) -> int:
        return next((line for line, _ in by_key.get(key, ())), never)

    violations: list[str] = []
    limit, begin, division_post = _init_limit(rules)
    after_division = copy.deepcopy(begin)
    division_at = never
    division_lines = by_key.get("submission_division", [])
    if division_lines:
        division_at, rec = division_lines[0]
        if division_post is not None:
            with contextlib.suppress(Exception):  # a failing POST is the checker's too
                division_post(_line(rec), after_division, line_of(rec))
    init_starts = by_key.get("init_start", [])
    if init_starts and init_starts[-1][0] > min(first("init_stop"), first("run_start")):
        violations.append("init_start after init_stop or run_start")
    start_idx = [i for i, _ in init_starts]
    running_min = list(accumulate((time_of(r) for _, r in init_starts), min))
    for idx, rec in by_key.get("init_stop", []):
        seen = bisect_left(start_idx, idx)
        if not seen or first("run_start") < idx:
            violations.append("init_stop before init_start or after run_start")
            continue
        if limit is None:
            continue
        state = copy.deepcopy(after_division if division_at < idx else begin)
        state.update(first_init_start=running_min[seen - 1], init_started=True)
        if not limit({}, state, line_of(rec)):
            took = (time_of(rec) - running_min[seen - 1]) / 60e3
            violations.append(
                f"initialisation took {took:.1f} min, beyond the ruleset's limit ({limit.text})"
            )
    if any(idx < first("init_stop") for idx, _ in by_key.get("run_start", [])):
        violations.append("run_start before init_stop")
    for idx, rec in by_key.get("run_stop", []):
        if idx < first("run_start"):
            violations.append("run_stop before run_start")
        meta = metadata_of(rec)
        if not isinstance(meta, dict) or "status" not in meta:
            violations.append("run_stop has no status")
    return violations


def _line(rec: Record) -> LineValue:
    return {"value": value_of(rec), "metadata": metadata_of(rec)}


def _decoded_many(fields: list[msgspec.Raw | JSON]) -> list[JSON]:
    """Many raw JSON fields decoded in one call (a slow path per field where one is not
    valid on its own, e.g. not UTF-8)."""
    if all(isinstance(f, msgspec.Raw) for f in fields):
        try:
            return msgspec.json.decode(b"[" + b",".join(map(bytes, fields)) + b"]")
        except (msgspec.DecodeError, UnicodeDecodeError, RecursionError, ValueError):
            pass
    return [_decoded(f) for f in fields]


def lines_of(
    found: list[tuple[int, Record]], parts: frozenset[str] = frozenset({"value", "metadata"})
) -> list[LineValue]:
    """The checker's ``v`` of each line: its value and metadata (only the ``parts`` the
    checks read are decoded; the others are left out)."""
    records = [r for _, r in found]
    decoded = {part: _decoded_many([getattr(r, part) for r in records]) for part in sorted(parts)}
    return [{part: values[i] for part, values in decoded.items()} for i in range(len(records))]


def aggregated_lines(by_key: ByKey, group: str) -> list[LineValue]:
    """Stable Diffusion's virtual lines, as its config's BEGIN block builds them: the
    values of the ``eval_accuracy`` lines that name a ``metric``, merged per value of the
    metadata member ``group`` (``samples_count``; ``step_num`` in ruleset 3.1)."""
    merged: dict[str, dict[str, JSON]] = {}
    for _, rec in by_key.get("eval_accuracy", []):
        meta = metadata_of(rec)
        if not isinstance(meta, dict) or "metric" not in meta or group not in meta:
            continue
        step = meta[group]
        merged.setdefault(repr(step), {group: step})[str(meta["metric"])] = value_of(rec)
    return [{"value": value, "metadata": {}} for value in merged.values()]


def _quality(rule: KeyRule, rules: Rules, by_key: ByKey) -> str | None:
    """The stateless ATLEAST_ONE_CHECK verdict: None when a line passes or no line has the
    key (a stateful one is judged with its config's state: ``stateful.config_failures``)."""
    check = rule.at_least_one
    assert check is not None
    if rules.aggregate and rule.name == rules.aggregate[0]:
        lines = aggregated_lines(by_key, rules.aggregate[1])
        passed = any(check(line, copy.deepcopy(rules.state)) for line in lines)
    else:
        lines = by_key.get(rule.name, [])
        passed = any(check(_line(rec)) for _, rec in lines)
    if not lines or passed:
        return None
    return _missed(rule)


def _missed(rule: KeyRule) -> str:
    assert rule.at_least_one is not None
    return f"quality target not reached ({rule.name}: {rule.at_least_one.text})"


def _occurrences(rule: KeyRule, lines: list[tuple[int, Record]]) -> str | None:
    count = len(lines)
    if rule.req == "EXACTLY_ONE" and count != 1:
        # The checker only warns when repeated lines all carry one value.
        values = [value_of(r) for _, r in lines]
        if not values or any(v != values[0] for v in values):
            return f"{count} {rule.name} lines, exactly one required"
    if rule.at_least and count < rule.at_least:
        return f"{count} {rule.name} lines, at least {rule.at_least} required"
    return None


# Verdicts of a key's stateless checks on a line, by the raw JSON of the parts they read:
# the runs of one system repeat the same lines, so most are decided once per process.
_VERDICTS: dict[tuple[tuple[str, ...], tuple[str, ...]], dict[bytes, int]] = {}
_VERDICTS_MAX = 200_000


def _raw_keys(found: list[tuple[int, Record]], reads: tuple[str, ...]) -> list[bytes] | None:
    """The raw JSON of the parts read, one bytes per line; None if a line has no raw
    form (parsed by the slow path: Python objects, where ``bytes(25386091460)`` would
    allocate 25 GB of zeros and ``bytes(-1)`` raise; found by the log fuzz)."""
    parts = [[getattr(r, p) for p in reads] for _, r in found]
    if any(type(x) is not msgspec.Raw for line in parts for x in line):
        return None
    if len(reads) == 1:
        return [bytes(line[0]) for line in parts]
    return [b"\x00".join(bytes(x) for x in line) for line in parts]


def _verdicts(rule: KeyRule, found: list[tuple[int, Record]]) -> list[int]:
    """For each line, the index of the first stateless CHECK it fails, or -1."""
    checks, _, reads = rule.stateless
    keys = _raw_keys(found, reads)
    # By the checks themselves: one key name has other checks in other rulesets.
    memo = _VERDICTS.setdefault((tuple(c.text for c in checks), reads), {})
    out = [memo.get(k, -2) for k in keys] if keys is not None else [-2] * len(found)
    todo = [i for i, v in enumerate(out) if v == -2]
    if todo:
        lines = lines_of([found[i] for i in todo], frozenset(reads))
        if len(memo) > _VERDICTS_MAX:
            memo.clear()
        for i, line in zip(todo, lines, strict=True):
            out[i] = next((n for n, c in enumerate(checks) if not c(line)), -1)
            if keys is not None:
                memo[keys[i]] = out[i]
    return out


def _failed_check(rule: KeyRule, found: list[tuple[int, Record]]) -> Expression | None:
    """A stateless CHECK some line fails (``submission_*`` keys: their first line only,
    as the checker runs them once), else a failed FIRST_CHECK."""
    checks, first, reads = rule.stateless
    if not found or not (checks or first):
        return None
    if checks:
        checked = found[:1] if rule.name.startswith("submission_") else found
        failed = [v for v in _verdicts(rule, checked) if v >= 0]
        if failed:
            return checks[min(failed)]
    if first:
        line = lines_of(found[:1], frozenset(reads))[0]
        return next((c for c in first if not c(line)), None)
    return None


def run_violations(
    *,
    ruleset: str,
    benchmark: str | None,
    division: str | None,
    by_key: ByKey,
    n_lines: int,
) -> list[Violation]:
    """Every reason the official checker would reject a run of ``ruleset`` whose log
    declares ``benchmark`` and ``division``; ``by_key`` its records by key (at least the
    ruleset's keys, ``rules.keys_of_ruleset``) with their MLLOG line indices."""
    rules = rules_for(ruleset, division, benchmark)
    out = [Violation(ViolationKind.STRUCTURE, m) for m in check_order(by_key, n_lines, rules)]
    if division in ("closed", "open") and benchmark and rules.missing:
        out.append(
            Violation(
                ViolationKind.BENCHMARK,
                f"benchmark {benchmark!r} has no {division} rules in ruleset {ruleset}",
            )
        )
    virtual = next(iter(rules.aggregate or ()), None)
    for rule in rules.keys.values():
        found = by_key.get(rule.name, ())
        if rule.name == virtual:
            lines = aggregated_lines(by_key, rules.aggregate[1])  # type: ignore[index]
            found = [(-1, Record(0, rule.name, v["value"], {})) for v in lines]  # type: ignore[arg-type]
        if len(found) != 1 or rule.at_least > 1:  # one line satisfies every REQ but AT_LEAST(n)
            message = _occurrences(rule, found)
            if message:
                out.append(Violation(_kind(rule), message))
        if (found and rule.stateless[0]) or rule.stateless[1]:
            failed = _failed_check(rule, found)
            if failed is not None:
                out.append(_check_failure(rule, failed, ruleset, benchmark, division))
        if rule.at_least_one is not None and not rule.at_least_one.stateful:
            quality = _quality(rule, rules, by_key)
            if quality:
                out.append(Violation(ViolationKind.QUALITY_TARGET, quality))
    for group in rules.alternatives:
        if not any(by_key.get(k) for k in group):
            out.append(Violation(ViolationKind.STRUCTURE, f"no {joined(group, 'or')} line"))
    for config in rules.configs:
        out += [Violation(ViolationKind.UNCHECKED, m) for m in unsupported(config, by_key)]
        failures, quality_passed, _ = config_failures(config, rules, by_key)
        out += [Violation(ViolationKind.STRUCTURE, m) for m in failures]
        out += [
            Violation(ViolationKind.QUALITY_TARGET, _missed(config.keys[name]))
            for name, passed in quality_passed.items()
            if not passed
        ]
    return out


def _kind(rule: KeyRule) -> ViolationKind:
    return _KEY_KIND.get(rule.name, ViolationKind.STRUCTURE)


# A key's wrong number of lines is a structure violation but for the benchmark's name
_KEY_KIND = {"submission_benchmark": ViolationKind.BENCHMARK}


def _check_failure(
    rule: KeyRule, failed: Expression, ruleset: str, benchmark: str | None, division: str | None
) -> Violation:
    if rule.name == "submission_benchmark":
        return Violation(
            ViolationKind.BENCHMARK,
            f"benchmark {benchmark!r} is not allowed in the {division} division of "
            f"ruleset {ruleset}",
        )
    return Violation(_kind(rule), f"{rule.name} fails {failed.text}")

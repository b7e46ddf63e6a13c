"""Whether a run counts: the official compliance checker's verdict, from its own rules.

The official summarizer drops a run whose log fails ``mlperf_logging``'s compliance
checker. gpuscale applies the round's rules as ``gpuscale.mlperf.rules`` reads them
from the package: every key's occurrence rule (``REQ``), every stateless ``CHECK`` and
``FIRST_CHECK`` on each line, the quality target (``ATLEAST_ONE_CHECK``, with Stable
Diffusion's aggregated FID/CLIP lines built as the config's ``BEGIN`` block builds them),
and whether the declared benchmark is allowed in the declared division. The stateful
checks of ``common.yaml`` (the order of ``init_start`` / ``init_stop`` / ``run_start`` /
``run_stop`` and the compile-time limit) are emulated here from the line indices, which
gives the checker's verdict without a Python step per line (logs repeat ``init_start`` on
every rank). Stateful hyper-parameter checks of benchmark configs are not emulated.
"""

from __future__ import annotations

from bisect import bisect_left
from dataclasses import dataclass
from enum import Enum
from itertools import accumulate
from typing import Any

import msgspec

from gpuscale.mlperf.mllog import ByKey, Record, metadata_of, time_of, value_of
from gpuscale.mlperf.rules import Expression, KeyRule, Rules, rules_for


class ViolationKind(Enum):
    """Why the official checker rejects a run: its log's structure, the benchmark it
    declares, or the quality target it never reached."""

    STRUCTURE = "structure"
    BENCHMARK = "benchmark"
    QUALITY_TARGET = "quality target"


@dataclass(frozen=True, slots=True)
class Violation:
    kind: ViolationKind
    message: str


# The keys the stateful checks below read.
ORDER_KEYS = frozenset({"submission_division", "init_start", "init_stop", "run_start", "run_stop"})


def check_order(by_key: ByKey, n_lines: int) -> list[str]:
    """Violations of common.yaml's stateful rules: init and run ordering, the
    initialisation time limit (30 min closed, 240 open) and run_stop's status."""
    never = n_lines + 1

    def first(key: str) -> int:
        return by_key[key][0][0] if key in by_key else never

    violations: list[str] = []
    compile_minutes, division_at = 0, never
    division_lines = by_key.get("submission_division", [])
    if division_lines:
        division_at, rec = division_lines[0]
        if value_of(rec) in ("closed", "open"):
            compile_minutes = 240 if value_of(rec) == "open" else 30
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
        limit = (compile_minutes if division_at < idx else 0) * 60 * 1e3
        if not time_of(rec) - running_min[seen - 1] < limit:
            violations.append(f"initialisation took longer than {compile_minutes} min")
    if any(idx < first("init_stop") for idx, _ in by_key.get("run_start", [])):
        violations.append("run_start before init_stop")
    for idx, rec in by_key.get("run_stop", []):
        if idx < first("run_start"):
            violations.append("run_stop before run_start")
        meta = metadata_of(rec)
        if not isinstance(meta, dict) or "status" not in meta:
            violations.append("run_stop has no status")
    return violations


def _line(rec: Record) -> dict[str, Any]:
    return {"value": value_of(rec), "metadata": metadata_of(rec)}


class _Lines:
    """Lines of one log as the checker's ``v``, decoded once; stateless checks memoised
    by the line's raw JSON (thousands of identical ``init_start`` lines cost one)."""

    def __init__(self) -> None:
        self._memo: dict[tuple[str, bytes, bytes], bool] = {}

    def passes(self, check: Expression, rec: Record) -> bool:
        if not (isinstance(rec.value, msgspec.Raw) and isinstance(rec.metadata, msgspec.Raw)):
            return check(_line(rec))  # a line the slow path parsed: no raw bytes to key
        raw = (check.text, bytes(rec.value), bytes(rec.metadata))
        found = self._memo.get(raw)
        if found is None:
            found = self._memo[raw] = check(_line(rec))
        return found


def aggregated_lines(by_key: ByKey, group: str) -> list[dict[str, Any]]:
    """Stable Diffusion's virtual lines, as its config's BEGIN block builds them: the
    values of the ``eval_accuracy`` lines that name a ``metric``, merged per value of the
    metadata member ``group`` (``samples_count``; ``step_num`` in ruleset 3.1)."""
    merged: dict[Any, dict[str, Any]] = {}
    for _, rec in by_key.get("eval_accuracy", []):
        meta = metadata_of(rec)
        if not isinstance(meta, dict) or "metric" not in meta or group not in meta:
            continue
        step = meta[group]
        merged.setdefault(repr(step), {group: step})[str(meta["metric"])] = value_of(rec)
    return [{"value": value, "metadata": {}} for value in merged.values()]


def _quality(rule: KeyRule, rules: Rules, by_key: ByKey) -> str | None:
    """The ATLEAST_ONE_CHECK verdict: None when a line passes or no line has the key."""
    check = rule.at_least_one
    assert check is not None
    if rules.aggregate and rule.name == rules.aggregate[0]:
        lines = aggregated_lines(by_key, rules.aggregate[1])
        state = _state_after(rules, by_key, None)
        passed = any(check(line, state) for line in lines)
    else:
        lines = by_key.get(rule.name, [])
        passed = False
        for index, rec in lines:
            state = _state_after(rules, by_key, index) if check.stateful else None
            if check(_line(rec), state):
                passed = True
                break
    if not lines or passed:
        return None
    return f"quality target not reached ({rule.name}: {check.text})"


def _state_after(rules: Rules, by_key: ByKey, index: int | None) -> dict[str, Any]:
    """The checker's state ``s`` before line ``index`` (None: after every line), from the
    configs' BEGIN literal and the POST assignments of the lines before it."""
    state = dict(rules.state)
    posts = sorted(
        (i, rule, rec)
        for rule in rules.keys.values()
        if rule.post
        for i, rec in by_key.get(rule.name, [])
        if index is None or i < index
    )
    for _, rule, rec in posts:
        line = _line(rec)
        for name, value in rule.post:
            try:
                state[name] = eval(value.code, {"__builtins__": {}}, {"v": line, "s": state})
            except Exception:
                continue
    return state


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


def _failed_check(
    rule: KeyRule, found: list[tuple[int, Record]], lines: _Lines
) -> Expression | None:
    """The first stateless CHECK a line fails (``submission_*`` keys: their first line
    only, as the checker runs them once), else the first failed FIRST_CHECK."""
    checked = found[:1] if rule.name.startswith("submission_") else found
    for check in rule.checks:
        if not check.stateful and any(not lines.passes(check, r) for _, r in checked):
            return check
    for check in rule.first_checks:
        if found and not check.stateful and not lines.passes(check, found[0][1]):
            return check
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
    out = [Violation(ViolationKind.STRUCTURE, m) for m in check_order(by_key, n_lines)]
    if division in ("closed", "open") and benchmark and rules.missing:
        out.append(
            Violation(
                ViolationKind.BENCHMARK,
                f"benchmark {benchmark!r} has no {division} rules in ruleset {ruleset}",
            )
        )
    lines = _Lines()
    alternatives: set[tuple[str, ...]] = set()
    for rule in rules.keys.values():
        kind = (
            ViolationKind.BENCHMARK
            if rule.name == "submission_benchmark"
            else ViolationKind.STRUCTURE
        )
        found = by_key.get(rule.name, [])
        if rules.aggregate and rule.name == rules.aggregate[0]:
            virtual = aggregated_lines(by_key, rules.aggregate[1])
            found = [(-1, Record(0, rule.name, v["value"], {})) for v in virtual]  # type: ignore[arg-type]
        message = _occurrences(rule, found)
        if message:
            out.append(Violation(kind, message))
        if rule.alternatives:
            alternatives.add(tuple(sorted({rule.name, *rule.alternatives})))
        failed = _failed_check(rule, found, lines)
        if failed is not None and rule.name == "submission_benchmark":
            out.append(
                Violation(
                    kind,
                    f"benchmark {benchmark!r} is not allowed in the {division} division of "
                    f"ruleset {ruleset}",
                )
            )
        elif failed is not None:
            out.append(Violation(kind, f"{rule.name} fails {failed.text}"))
        if rule.at_least_one is not None:
            quality = _quality(rule, rules, by_key)
            if quality:
                out.append(Violation(ViolationKind.QUALITY_TARGET, quality))
    for group in sorted(alternatives):
        if not any(by_key.get(k) for k in group):
            out.append(Violation(ViolationKind.STRUCTURE, f"no {' or '.join(group)} line"))
    return out

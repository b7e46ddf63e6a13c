"""The checker's stateful rules, config by config, as ``mlp_compliance.configured_checks``
runs them.

Each config has its own state ``s``: its ``BEGIN`` literal, then, for every line of a key
the config defines, in log order, the key's ``PRE``, its stateful ``CHECK``s, its
``POST`` (``submission_*`` keys: their first line only), its stateful ``FIRST_CHECK`` on
the key's first line and its stateful ``ATLEAST_ONE_CHECK``; then the config's ``END``
block on the final state. A check or POST that raises fails, as in the checker. A CHECK
failure of a key that a later config defines again is dropped (the checker's
``overwrite_messages``); END and ATLEAST_ONE failures are not. The init/run ordering keys
of ``common.yaml`` are emulated from line indices in ``gpuscale.mlperf.compliance``
(logs repeat ``init_start`` on every rank): here their POSTs only set the state.
"""

from __future__ import annotations

import copy

from gpuscale.mlperf.expressions import Expression, LogLine, Program, State
from gpuscale.mlperf.mllog import ByKey, Record, _decoded, time_of
from gpuscale.mlperf.rules import Config, KeyRule, Rules

# Keys of common.yaml whose stateful checks compliance.check_order emulates.
ORDER_KEYS = frozenset({"submission_division", "init_start", "init_stop", "run_start", "run_stop"})


def line_of(rec: Record) -> LogLine:
    v = {"value": _decoded(rec.value), "metadata": _decoded(rec.metadata)}
    return LogLine(time_of(rec), rec.key, v)


def _holds(check: Expression, ll: LogLine, state: State) -> bool:
    return check(ll.value, state, ll)


def _run(program: Program, ll: LogLine, state: State) -> bool:
    """Run PRE/POST code; False where it raises (the checker reports that line)."""
    try:
        program(ll.value, state, ll)
    except Exception:  # the checker's own `except:` around exec: a failed rule, reported
        return False
    return True


def _skipped(config: Config, name: str) -> bool:
    return config.name == "common.yaml" and name in ORDER_KEYS


def _needed(config: Config) -> frozenset[str] | None:
    """The state keys some rule of the config evaluated here reads (None: any)."""
    needed: set[str] = set()
    for check in config.end_checks:
        needed |= check.state_keys
    if config.end_pre is not None:
        if config.end_pre.reads is None:
            return None
        needed |= config.end_pre.reads
    for name, rule in config.keys.items():
        if _skipped(config, name):
            continue
        for check in (*rule.checks, *rule.first_checks, rule.at_least_one):
            if check is not None and check.stateful:
                needed |= check.state_keys
        for code in (rule.pre, rule.post):
            if code is not None:
                if code.reads is None:
                    return None
                needed |= code.reads
    return frozenset(needed)


def _runs(config: Config, name: str, rule: KeyRule, needed: frozenset[str] | None) -> bool:
    """Whether the engine walks this key's lines: not for an emulated ordering key whose
    PRE/POST write nothing another rule reads (``init_start`` repeats on every rank)."""
    if not _skipped(config, name):
        return rule.stateful
    if needed is None:
        return True
    for code in (rule.pre, rule.post):
        if code is not None and (code.writes is None or code.writes & needed):
            return True
    return False


def config_failures(
    config: Config, rules: Rules, by_key: ByKey
) -> tuple[list[str], dict[str, bool], State]:
    """(failure messages, {key: whether a line passed its stateful ATLEAST_ONE_CHECK},
    final state) of one config's stateful rules on a log."""
    needed = _needed(config)
    names = [n for n, r in config.keys.items() if _runs(config, n, r, needed)]
    lines = sorted((i, n, rec) for n in names for i, rec in by_key.get(n, []))
    state: State = copy.deepcopy(config.begin_state)  # POSTs mutate its lists
    failures: list[str] = []
    quality: dict[str, bool] = {}
    executed: set[str] = set()
    first_seen: set[str] = set()
    for _, name, rec in lines:
        rule: KeyRule = config.keys[name]
        ll = line_of(rec)
        # The ordering keys' checks are emulated elsewhere; their POSTs still set state.
        effective = rules.keys.get(name) is rule and not _skipped(config, name)
        if name not in executed:
            if rule.pre is not None and not _run(rule.pre, ll, state) and effective:
                failures.append(f"{name} PRE fails ({rule.pre.text})")
            for check in rule.checks:
                if check.stateful and effective and not _holds(check, ll, state):
                    failures.append(f"{name} fails {check.text}")
            if rule.post is not None and not _run(rule.post, ll, state) and effective:
                failures.append(f"{name} POST fails on a line ({rule.post.text})")
        if name not in first_seen:
            first_seen.add(name)
            for check in rule.first_checks:
                if check.stateful and effective and not _holds(check, ll, state):
                    failures.append(f"{name} fails {check.text}")
        if rule.at_least_one is not None and rule.at_least_one.stateful:
            passed = _holds(rule.at_least_one, ll, state)
            quality[name] = quality.get(name, False) or passed
        if name.startswith("submission_"):
            executed.add(name)
    if config.end_pre is not None and not _run(config.end_pre, LogLine(0, "", {}), state):
        failures.append(f"END PRE of {config.name} fails ({config.end_pre.text})")
    for check in config.end_checks:
        if not _holds(check, LogLine(0, "", {}), state):
            failures.append(f"END check of {config.name} fails: {_short(check.text)}")
    return failures, quality, state


def unsupported(config: Config, by_key: ByKey) -> list[str]:
    """The rules of a config that the engine refused and that this log would run."""
    out = [f"{config.name}: {why}" for why in config.unsupported]
    for name, rule in config.keys.items():
        if rule.unsupported and (by_key.get(name) or rule.req not in ("", "OPTIONAL")):
            out += [f"{config.name}: {why}" for why in rule.unsupported]
    return out


def _short(text: str, limit: int = 120) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 3] + "..."

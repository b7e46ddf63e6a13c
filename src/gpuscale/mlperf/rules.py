"""The rules of every MLPerf Training round, read at run time from ``mlperf-logging``.

MLCommons' package ships each ruleset's compliance configs
(``mlperf_logging/compliance_checker/training_X.Y.Z/{common,<division>_common,
<division>_<benchmark>}.yaml``) and the benchmark list and result counts
(``mlperf_logging.benchmark_meta``). gpuscale reads them as the checker does (PyYAML's
``BaseLoader``; a key defined again by a later config replaces the earlier rule) and
turns every record of the rule language into functions (``gpuscale.mlperf.expressions``:
checked to only compare, index and call a few pure functions, and ``PRE``/``POST`` code
to only update the state; the rules are data, never handed to ``eval`` unchecked):
``KEY`` (``REQ``, ``CHECK``, ``FIRST_CHECK``, ``ATLEAST_ONE_CHECK``, ``PRE``, ``POST``),
``BEGIN`` (a state literal, or Stable Diffusion's aggregation of evaluation lines) and
``END`` (checks on the final state). Each config keeps its own state, as the checker's
``configured_checks`` does. Whatever the engine refuses is kept (``unsupported``) and
reported by ``gpuscale.mlperf.compliance`` as a problem naming the rule, never skipped.

What the package does not hold, kept here with its source: the olympic rule's drop count
(4 for unet3d, ``result_summarizer._compute_strong_score_standalone``).
"""

from __future__ import annotations

import ast
import functools
import re
from dataclasses import dataclass, field
from pathlib import Path

import yaml

try:  # a declared dependency; without it (a broken install) the rules read as absent
    import mlperf_logging.compliance_checker as checker
    from mlperf_logging import benchmark_meta
except ImportError:
    checker = benchmark_meta = None

from gpuscale.mlperf.expressions import (
    Expression,
    Program,
    RuleError,
    State,
    expression,
    program,
)
from gpuscale.quantities import filled
from gpuscale.tables.workloads import rules_round


def _program(code: object, where: str, unsupported: list[str]) -> Program | None:
    """A PRE/POST block compiled, or None (and a note in ``unsupported``) if refused."""
    if not code or not str(code).strip():
        return None
    try:
        return program(str(code))
    except RuleError as exc:
        unsupported.append(f"{where}: {exc}")
        return None


def _checks(raw: object, where: str, unsupported: list[str]) -> tuple[Expression, ...]:
    texts = raw if isinstance(raw, list) else [*filter(None, [raw])]  # one, or none
    out = []
    for text in texts:
        try:
            out.append(expression(str(text)))
        except RuleError as exc:
            unsupported.append(f"{where}: {exc}")
    return tuple(out)


@dataclass(frozen=True)
class KeyRule:
    """The rule for one MLLOG key: how often it must appear and what each line must pass."""

    name: str
    req: str = ""  # EXACTLY_ONE, AT_LEAST_ONE, AT_LEAST(n), AT_LEAST_ONE_OR(a, b), OPTIONAL
    checks: tuple[Expression, ...] = ()
    first_checks: tuple[Expression, ...] = ()
    at_least_one: Expression | None = None
    pre: Program | None = None
    post: Program | None = None
    at_least: int = 0  # lines required (from REQ)
    alternatives: tuple[str, ...] = ()  # keys any of which may appear instead (from REQ)
    unsupported: tuple[str, ...] = ()  # parts the engine refused to evaluate, and why

    @functools.cached_property
    def stateless(self) -> tuple[tuple[Expression, ...], tuple[Expression, ...], tuple[str, ...]]:
        """(CHECKs, FIRST_CHECKs) that read only the line, and the parts of it they read."""
        checks = tuple(c for c in self.checks if not c.stateful)
        first = tuple(c for c in self.first_checks if not c.stateful)
        reads = sorted(frozenset().union(*(c.reads for c in (*checks, *first))))
        return checks, first, tuple(reads)

    @property
    def stateful(self) -> bool:
        """Whether a line of this key reads or changes the checker's state."""
        return bool(
            self.pre
            or self.post
            or any(c.stateful for c in (*self.checks, *self.first_checks))
            or (self.at_least_one is not None and self.at_least_one.stateful)
        )


def _lines_required(req: str) -> int:
    """The lines a REQ requires: n for AT_LEAST(n), 1 for AT_LEAST_ONE, else none."""
    if least := re.fullmatch(r"AT_LEAST\((\d+)\)", req):
        return int(least.group(1))
    return int(req == "AT_LEAST_ONE")


def _key_rule(record: dict[str, object]) -> KeyRule:
    req = str(record.get("REQ", "")).strip()
    name = str(record.get("NAME", "")).strip()
    either = re.fullmatch(r"AT_LEAST_ONE_OR\((.*)\)", req)
    refused: list[str] = []
    return KeyRule(
        name=name,
        req=req,
        at_least=_lines_required(req),
        alternatives=tuple(x.strip() for x in either.group(1).split(",")) if either else (),
        checks=_checks(record.get("CHECK"), f"{name} CHECK", refused),
        first_checks=_checks(record.get("FIRST_CHECK"), f"{name} FIRST_CHECK", refused),
        at_least_one=(
            _checks(record.get("ATLEAST_ONE_CHECK"), f"{name} ATLEAST_ONE_CHECK", refused)
            or (None,)
        )[0],
        pre=_program(record.get("PRE"), f"{name} PRE", refused),
        post=_program(record.get("POST"), f"{name} POST", refused),
        unsupported=tuple(refused),
    )


@dataclass(frozen=True, slots=True)
class Config:
    """One yaml file: its key rules, the state its BEGIN sets, (Stable Diffusion's)
    virtual aggregated key: (its name, the metadata member it groups evaluations by), its
    END block (checks on the final state, after its PRE), and what the engine refused."""

    keys: dict[str, KeyRule]
    begin_state: State = field(default_factory=dict)
    aggregate: tuple[str, str] | None = None
    end_checks: tuple[Expression, ...] = ()
    end_pre: Program | None = None
    unsupported: tuple[str, ...] = ()
    name: str = ""


def _begin(code: str) -> tuple[State, tuple[str, str] | None]:
    state: State = {}
    for match in re.finditer(r"s\.update\((\{.*?\})\)", code, re.S):
        try:
            literal = ast.literal_eval(match.group(1))
        except (ValueError, SyntaxError):
            continue
        if isinstance(literal, dict):
            state.update(literal)
    aggregate = None
    virtual = re.search(r"new_line\.key\s*=\s*['\"](\w+)['\"]", code)
    group = re.search(r"line\.value\['metadata'\]\['(\w+)'\]", code)
    if virtual and group:
        aggregate = (virtual.group(1), group.group(1))
    return state, aggregate


@functools.lru_cache(maxsize=256)
def _config(path: str) -> Config | None:
    try:
        with open(path, encoding="utf-8") as f:
            records = yaml.load(f, Loader=yaml.BaseLoader) or []
    except (OSError, yaml.YAMLError):
        return None
    keys: dict[str, KeyRule] = {}
    state: State = {}
    aggregate = None
    end_checks: tuple[Expression, ...] = ()
    end_pre = None
    refused: list[str] = []
    for record in records:
        if not isinstance(record, dict) or not record:
            continue
        kind, body = next(iter(record.items()))
        if kind == "KEY" and isinstance(body, dict):
            rule = _key_rule(body)
            keys[rule.name] = rule
        elif kind == "BEGIN" and isinstance(body, dict):
            code = str(body.get("CODE", ""))
            state, aggregate = _begin(code)
            if code.strip() and not state and aggregate is None:
                refused.append(f"BEGIN: not a state literal nor an aggregation: {code[:80]!r}")
        elif kind == "END" and isinstance(body, dict):
            end_checks = _checks(body.get("CHECK"), "END CHECK", refused)
            end_pre = _program(body.get("PRE"), "END PRE", refused)
        else:
            refused.append(f"{kind}: not a record kind of the rule language")
    return Config(keys, state, aggregate, end_checks, end_pre, tuple(refused), Path(path).name)


def _package_dir() -> Path | None:
    if checker is None:
        return None
    return Path(checker.__file__).parent


def ruleset_of(round_name: str) -> str | None:
    """The ruleset (``4.1.0``) of a round name (``v4.1``, or a user's folder's label:
    ``my-results (v4.1)``) if mlperf-logging has it."""
    folder = _package_dir()
    match = re.fullmatch(r"v?(\d+)\.(\d+)(?:\.\d+)?", rules_round(round_name).strip())
    if folder is None or not match:
        return None
    version = f"{match.group(1)}.{match.group(2)}.0"
    if not (folder / f"training_{version}" / "common.yaml").is_file():
        return None
    return version


@functools.cache
def known_rulesets() -> tuple[str, ...]:
    """The training rulesets the installed mlperf-logging ships, oldest first; read once
    (every advice request resolves its ruleset against them)."""
    folder = _package_dir()
    if folder is None:
        return ()
    found = [p.name.split("_", 1)[1] for p in folder.glob("training_*.*.*") if p.is_dir()]
    return tuple(sorted((r for r in found if re.fullmatch(r"\d+\.\d+\.\d+", r)), key=_version))


def unheld_round(round_name: str) -> str | None:
    """Why a round name given by hand can be no round (a major version more than one past
    the newest ruleset mlperf-logging ships: ``v41.0``, meant as v4.1, would be read against
    the newest rules and score nothing), with the round meant where one is close; None for
    a round that is, or may soon be (the next major: rules not yet shipped)."""
    known, match = known_rulesets(), re.fullmatch(r"v?(\d+)\.(\d+)", round_name.strip())
    if not known or not match or int(match.group(1)) <= _version(known[-1])[0] + 1:
        return None
    rounds = [f"v{r.rsplit('.', 1)[0]}" for r in known]
    typed = match.group(1) + match.group(2)  # v41.0: "410", a dot put late (v4.1: "41")
    close = [r for r in rounds if typed.startswith(r[1:].replace(".", ""))]
    meant = filled("; did you mean {}?", next(reversed(close), ""))
    return (
        f"{round_name} is no MLPerf Training round: the newest rules mlperf-logging ships "
        f"are {known[-1]} ({rounds[0]}-{rounds[-1]}; a later round needs a newer one){meant}"
    )


def _version(text: str) -> tuple[int, ...]:
    return tuple(int(x) for x in text.split("."))


@dataclass(frozen=True)
class Rules:
    """The merged rules a log of one benchmark and division is checked against."""

    ruleset: str
    keys: dict[str, KeyRule]
    state: State
    aggregate: tuple[str, str] | None
    files: tuple[str, ...]  # the configs merged, in order; a missing one is a violation
    missing: tuple[str, ...] = ()
    configs: tuple[Config, ...] = ()  # the configs found, in order (each has its own state)

    @functools.cached_property
    def alternatives(self) -> tuple[tuple[str, ...], ...]:
        """Groups of keys (AT_LEAST_ONE_OR) of which one must appear."""
        groups = {
            tuple(sorted({r.name, *r.alternatives})) for r in self.keys.values() if r.alternatives
        }
        return tuple(sorted(groups))

    @property
    def quality(self) -> KeyRule | None:
        """The key whose ATLEAST_ONE_CHECK is the quality target."""
        return quality_key(self.keys)


def quality_key(keys: dict[str, KeyRule]) -> KeyRule | None:
    """The key whose ATLEAST_ONE_CHECK is the quality target: the last with one."""
    return next((r for r in reversed(keys.values()) if r.at_least_one is not None), None)


@functools.lru_cache(maxsize=512)
def rules_for(ruleset: str, division: str | None, benchmark: str | None) -> Rules:
    """common.yaml, then ``<division>_common.yaml`` (a valid division), then
    ``<division>_<benchmark>.yaml``: a key defined again replaces the earlier rule."""
    names = ["common.yaml"]
    if division in ("closed", "open"):
        names.append(f"{division}_common.yaml")
        if benchmark:
            names.append(f"{division}_{benchmark}.yaml")
    keys: dict[str, KeyRule] = {}
    state: State = {}
    aggregate = None
    missing = []
    found = []
    for name in names:
        config = _ruleset_config(ruleset, name)
        if config is None:
            missing.append(name)
            continue
        found.append(config)
        keys.update(config.keys)
        state.update(config.begin_state)
        aggregate = config.aggregate or aggregate
    return Rules(ruleset, keys, state, aggregate, tuple(names), tuple(missing), tuple(found))


def _ruleset_config(ruleset: str, name: str) -> Config | None:
    """The config file ``name`` of a ruleset, None where mlperf-logging has none."""
    folder = _package_dir()
    if folder is None:
        return None
    return _config(str(folder / f"training_{ruleset}" / name))


@functools.lru_cache(maxsize=64)
def keys_of_ruleset(ruleset: str | None) -> frozenset[str]:
    """Every key any config of the ruleset names (what a log reader must pick out); none
    without a ruleset."""
    folder = _package_dir()
    if folder is None or not ruleset:
        return frozenset()
    found: set[str] = set()
    for path in (folder / f"training_{ruleset}").glob("*.yaml"):
        config = _config(str(path))
        if config is not None:
            found |= set(config.keys)
    return frozenset(found)


@functools.lru_cache(maxsize=1)
def result_file_counts() -> dict[str, int]:
    """Result files each benchmark submits (``mlperf_logging.benchmark_meta``)."""
    try:
        return dict(benchmark_meta.get_result_file_counts("training"))
    except (AttributeError, ValueError):
        return {}


def benchmarks_of(ruleset: str | None) -> list[str]:
    """The benchmarks the ruleset allows (``benchmark_meta``); none without a ruleset."""
    if not ruleset:
        return []
    try:
        return list(dict.fromkeys(benchmark_meta.get_allowed_benchmarks("training", ruleset)))
    except (AttributeError, ValueError):
        return []


@functools.lru_cache(maxsize=64)
def ruleset_for(round_name: str) -> tuple[str | None, str]:
    """(ruleset, note) for a round: its own ruleset where mlperf-logging has it; else the
    newest one before the round, and a note saying so; (None, why) when there is none."""
    own = ruleset_of(round_name)
    if own:
        return own, ""
    known = known_rulesets()
    round_name = rules_round(round_name)  # a user's folder: the round it is read by
    match = re.fullmatch(r"v?(\d+)\.(\d+)(?:\.\d+)?", round_name.strip())
    if not known:
        return None, "mlperf-logging is not installed: no rules to check runs against"
    if not match:
        return None, f"{round_name!r} is not a round name like v4.1: no rules apply"
    wanted = (int(match.group(1)), int(match.group(2)), 0)
    earlier = [r for r in known if _version(r) <= wanted]
    if not earlier:
        return None, (
            f"mlperf-logging has no training rules for {round_name} or before "
            f"(oldest: {known[0]}); its runs cannot be checked"
        )
    return earlier[-1], (
        f"mlperf-logging has no training rules for {round_name}; the newest earlier "
        f"ruleset, {earlier[-1]}, was used (scores may differ from the official ones)"
    )

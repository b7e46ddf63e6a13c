"""Values that pass a ruleset's own compliance rules, found from the rules themselves.

The synthetic logs of the tests must pass the official checker's rules of any ruleset
(0.7.0 to 6.1.0) for any benchmark, without a hand-written recipe per benchmark. For each
key the rules require, :class:`Solver` tries candidate values until every check of the
key holds: the constants the checks compare with (and neighbours), every part of a check
that does not read the line evaluated on the state built so far (``s['lr_min']``,
``gbs * floor(42 + 24576 / gbs)``), and the root of an equality that is linear in the
value (``v * 1152 == gbs * 8e-5``). The state is the checker's: every config's BEGIN
literal, then each written line's PRE and POST. Whatever no candidate satisfies is
written anyway and shows up as a violation in the tests that check the builder.
"""

from __future__ import annotations

import ast
import contextlib
import copy
from dataclasses import dataclass, field
from typing import Any

from gpuscale.mlperf.expressions import Expression, RuleError, expression
from gpuscale.mlperf.rules import KeyRule, Rules, rules_for

# Keys whose value has a shape the checks only index into (a list the rules read at
# positions), with the value of each ruleset's closed reference. Nothing else is fixed.
SHAPED: dict[str, Any] = {
    "opt_learning_rate_decay_boundary_epochs": [40, 50],  # SSD 0.7.0/1.0.0
    "opt_learning_rate_decay_steps": [12000, 16000],  # Mask R-CNN (a pair)
}
# A key whose value a later key's check ties to the state (Qwen's GRPO: the global batch
# is prompts per step x 16 generations per prompt): the value that later check wants.
LINKED: dict[str, Any] = {
    "num_prompts_per_step": lambda s: (s.get("global_batch_size") or 16) // 16,
}
_REQUIRED = ("EXACTLY_ONE", "AT_LEAST_ONE")


def _uses_v(node: ast.AST) -> bool:
    return any(isinstance(n, ast.Name) and n.id in ("v", "ll") for n in ast.walk(node))


def _evaluated(node: ast.AST, s: dict[str, Any]) -> Any:
    """A part of a check that does not read the line, evaluated on the state."""
    try:
        return expression(ast.unparse(node)).fn(None, s, None)
    except (RuleError, Exception):  # a part that needs what is not there yet
        return None


def _numbers(value: Any) -> list[Any]:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return [value]
    return [value, value * 2, value + 1, value / 2, value * 1.01, value * 0.99]


def _value_path(node: ast.AST) -> tuple[str, ...] | None:
    """``v['value']`` -> ('value',), ``v['metadata']['samples_count']`` -> ('metadata',
    'samples_count'), ``v['value']['BBOX']`` -> ('value', 'BBOX'); None otherwise."""
    path: list[str] = []
    while isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant):
        path.insert(0, str(node.slice.value))
        node = node.value
    return tuple(path) if isinstance(node, ast.Name) and node.id == "v" and path else None


def _linear_root(compare: ast.Compare, target: tuple[str, ...], s: dict[str, Any]) -> Any:
    """x with ``lhs(x) == rhs`` when the equality is linear in the line's ``target``."""
    if len(compare.ops) != 1 or not isinstance(compare.ops[0], ast.Eq):
        return None
    diff = ast.BinOp(compare.left, ast.Sub(), compare.comparators[0])
    try:
        fn = expression(ast.unparse(diff)).fn
        at = [fn(_line(target, x), s, None) for x in (0.0, 1.0)]
    except (RuleError, Exception):
        return None
    slope = at[1] - at[0]
    return -at[0] / slope if slope else None


def _line(target: tuple[str, ...], x: Any, base: dict[str, Any] | None = None) -> dict[str, Any]:
    v = copy.deepcopy(base) if base else {"value": None, "metadata": {}}
    if target == ("value",):
        v["value"] = x
    elif target[0] == "value":
        v["value"] = {**(v["value"] if isinstance(v["value"], dict) else {}), target[1]: x}
    else:
        v["metadata"][target[1]] = x
    return v


def candidates(checks: list[Expression], target: tuple[str, ...], s: dict[str, Any]) -> list:
    """Values of the line's ``target`` worth trying against ``checks`` (see the module)."""
    found: list[Any] = []
    for check in checks:
        tree = ast.parse(check.text, mode="eval")
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and node.value not in ("value", "metadata"):
                found += _numbers(node.value)
            elif isinstance(node, ast.List | ast.Tuple) and not _uses_v(node):
                found += [list(_evaluated(node, s) or [])]
            elif isinstance(node, ast.Compare):
                root = _linear_root(node, target, s)
                found += _numbers(root) if root is not None else []
            if isinstance(node, ast.expr) and not _uses_v(node) and "s" in ast.unparse(node):
                value = _evaluated(node, s)
                found += _numbers(value) if value is not None else []
    return [*found, 1, 8, 0, 0.5, True, "x"]


def _dict_value(check: Expression) -> dict[str, Any] | None:
    """``v['value']['BBOX'] >= 0.377 and v['value']['SEGM'] >= 0.339`` -> the dict
    {BBOX: 0.377, SEGM: 0.339} (Mask R-CNN's quality value)."""
    out: dict[str, Any] = {}
    for node in ast.walk(ast.parse(check.text, mode="eval")):
        if isinstance(node, ast.Compare) and isinstance(node.comparators[0], ast.Constant):
            path = _value_path(node.left)
            if path and len(path) == 2 and path[0] == "value":
                out.setdefault(path[1], node.comparators[0].value)
    return out or None


@dataclass
class Solver:
    """Writes the lines of one log in order, keeping the checker's state."""

    rules: Rules
    state: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def of(cls, ruleset: str, division: str, benchmark: str) -> Solver:
        rules = rules_for(ruleset, division, benchmark)
        state: dict[str, Any] = {}
        for config in rules.configs:
            state.update(copy.deepcopy(config.begin_state))
        return cls(rules, state)

    def rules_of(self, key: str) -> list[KeyRule]:
        return [c.keys[key] for c in self.rules.configs if key in c.keys]

    def checks(self, key: str, *, first: bool = True, quality: bool = False) -> list:
        rule = self.rules.keys.get(key)
        if rule is None:
            return []
        out = list(rule.checks) + (list(rule.first_checks) if first else [])
        return out + ([rule.at_least_one] if quality and rule.at_least_one else [])

    def passes(self, key: str, v: dict[str, Any], checks: list[Expression]) -> bool:
        s = copy.deepcopy(self.state)
        for rule in self.rules_of(key):
            if rule.pre is not None:
                with contextlib.suppress(Exception):
                    rule.pre(v, s)
        return all(c(v, s) for c in checks)

    def solve(
        self,
        key: str,
        target: tuple[str, ...] = ("value",),
        *,
        base: dict[str, Any] | None = None,
        wanted: Any = None,
        quality: bool | None = None,
    ) -> dict[str, Any]:
        """The line ``v`` of ``key`` whose ``target`` passes the key's checks (``wanted``
        first when it passes; ``quality`` True/False: the quality check must hold/fail)."""
        checks = self.checks(key)
        needed = [c for c in checks if _value_path_reads(c, target)]
        tries = [] if wanted is None else [wanted]
        tries += [LINKED[key](self.state)] if key in LINKED and target == ("value",) else []
        if target == ("value",) and base is None:
            base = self._metadata(key)
        tries += [SHAPED[key]] if key in SHAPED and target == ("value",) else []
        quality_check = self.rules.keys[key].at_least_one if key in self.rules.keys else None
        if quality is not None and quality_check is not None:
            shaped = _dict_value(quality_check)
            tries += [shaped] if shaped else []
            needed = [*needed, quality_check]
        tries += candidates(needed, target, self.state)
        for x in tries:
            v = _line(target, x, base)
            ok = self.passes(key, v, needed if quality is None else checks)
            if quality is False and quality_check is not None:
                ok = ok and not quality_check(v, self.state)
            elif quality and quality_check is not None:
                ok = ok and quality_check(v, self.state)
            if ok:
                return v
        return _line(target, wanted if wanted is not None else tries[0], base)

    def _metadata(self, key: str) -> dict[str, Any]:
        """A line whose metadata members the key's checks read are solved first."""
        v: dict[str, Any] = {"value": None, "metadata": {}}
        for check in self.checks(key):
            for node in ast.walk(ast.parse(check.text, mode="eval")):
                path = _value_path(node) if isinstance(node, ast.Subscript) else None
                if path and len(path) == 2 and path[0] == "metadata":
                    v = self.solve(key, path, base=v)
        return v

    def written(self, key: str, v: dict[str, Any]) -> None:
        """Run the key's PRE and POST of every config on a written line."""
        for rule in self.rules_of(key):
            for code in (rule.pre, rule.post):
                if code is not None:
                    with contextlib.suppress(Exception):
                        code(v, self.state)

    def required(self, skip: frozenset[str]) -> list[str]:
        """The keys the rules require once or more that the caller does not write, in the
        order the configs define them."""
        out: list[str] = []
        for config in self.rules.configs:
            for name in config.keys:
                rule = self.rules.keys[name]
                if name in skip or name in out or rule.req not in _REQUIRED:
                    continue
                if rule.at_least_one is not None:
                    continue
                out.append(name)
        return out

    def tensors(self) -> list[str]:
        """The tensor names an END check wants initialised, in its literal list."""
        for config in self.rules.configs:
            for check in config.end_checks:
                if "initialized_tensors" not in check.text:
                    continue
                lists = [n for n in ast.walk(ast.parse(check.text, mode="eval"))]
                for node in lists:
                    if isinstance(node, ast.List) and all(
                        isinstance(e, ast.Constant) for e in node.elts
                    ):
                        return [str(e.value) for e in node.elts]
        return []


def _value_path_reads(check: Expression, target: tuple[str, ...]) -> bool:
    """Whether a check reads the part of the line being solved (or the line whole)."""
    text = check.text
    if target == ("value",):
        return "v['value']" in text or "'value' in v" in text
    return target[-1] in text


def solver(ruleset: str, division: str, benchmark: str) -> Solver:
    return Solver.of(ruleset, division, benchmark)

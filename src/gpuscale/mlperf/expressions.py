"""The MLPerf compliance checker's expressions and statements as checked, compiled functions.

Every ``CHECK``, ``FIRST_CHECK``, ``ATLEAST_ONE_CHECK`` and ``END`` expression of
mlperf-logging's configs is parsed with :mod:`ast`, refused unless it only compares,
indexes and calls a few pure functions (the expressions are data, never handed to
``eval`` unchecked), and compiled once into a function of ``(v, s, ll)``. ``PRE`` and
``POST`` code (:func:`program`) may only assign to, add to, or append to the checker's
state ``s`` (``if`` blocks allowed); ``enqueue_config(...)`` and ``print(...)`` calls are
dropped (the configs a division and benchmark enqueue are merged by ``rules.rules_for``).
"""

from __future__ import annotations

import ast
import functools
import math
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeAlias

from gpuscale.quantities import joined, noun_for
from gpuscale.tables.json_depth import JSON

# What a rule reads and changes: ``v``, a line's value and metadata as JSON
# (``{"value": ..., "metadata": ...}``); ``s``, the checker's state (whatever BEGIN, PRE and
# POST code store in it: numbers, flags, lists, dicts); and ``ll``, the line itself.
LineValue: TypeAlias = dict[str, JSON]
State: TypeAlias = dict[str, object]


@dataclass(frozen=True, slots=True)
class LogLine:
    """The checker's ``ll``: the line's time (ms), key and ``v``."""

    timestamp: float
    key: str
    value: LineValue


RuleFunction: TypeAlias = Callable[[LineValue, State, LogLine | None], object]

# What the checker's expressions may name besides ``v`` (and ``s``/``ll`` when stateful).
_FUNCTIONS: dict[str, object] = {
    "is_integer": lambda value: abs(round(value) - value) < 0.00001,  # mlp_compliance's
    "len": len,
    "abs": abs,
    "min": min,
    "max": max,
    "int": int,
    "float": float,
    "str": str,
    "isinstance": isinstance,
    "sorted": sorted,
    "bool": bool,
    "list": list,
    "set": set,
    "sum": sum,
    "any": any,
    "all": all,
    "type": lambda value: type(value),  # one argument only: never builds a class
    "round": round,
    "math": math,
    "True": True,
    "False": False,
    "None": None,
}
_NODES = (
    ast.Expression,
    ast.BoolOp,
    ast.And,
    ast.Or,
    ast.BinOp,
    ast.BitOr,
    ast.BitAnd,
    ast.Add,
    ast.Sub,
    ast.Mult,
    ast.Div,
    ast.FloorDiv,
    ast.Mod,
    ast.Pow,
    ast.UnaryOp,
    ast.Not,
    ast.USub,
    ast.UAdd,
    ast.Compare,
    ast.Eq,
    ast.NotEq,
    ast.Lt,
    ast.LtE,
    ast.Gt,
    ast.GtE,
    ast.In,
    ast.NotIn,
    ast.Is,
    ast.IsNot,
    ast.IfExp,
    ast.Subscript,
    ast.Name,
    ast.Load,
    ast.Store,
    ast.Constant,
    ast.List,
    ast.Tuple,
    ast.Set,
    ast.Dict,
    ast.Call,
    ast.Attribute,
)


class RuleError(ValueError):
    """An expression gpuscale will not evaluate (it does more than compare and index)."""


_SCOPE: dict[str, object] = {"__builtins__": {}, **_FUNCTIONS}


@dataclass(frozen=True, slots=True)
class Expression:
    """One checker expression, compiled once into a function of ``(v, s, ll)``;
    ``stateful`` when it reads ``s`` or ``ll``."""

    text: str
    fn: RuleFunction
    stateful: bool
    state_keys: frozenset[str]
    reads: frozenset[str] = frozenset({"value", "metadata"})  # the parts of ``v`` it reads

    def __call__(self, v: LineValue, s: State | None = None, ll: LogLine | None = None) -> bool:
        """The expression's truth on one line (``v``: its value and metadata), as the
        checker sees it: an exception is a failed check."""
        try:
            return bool(self.fn(v, s if s is not None else {}, ll))
        except Exception:
            return False


def _is_state_item(node: ast.AST) -> bool:
    """``s[...]``: an item of the checker's state."""
    return (
        isinstance(node, ast.Subscript)
        and isinstance(node.value, ast.Name)
        and node.value.id == "s"
    )


def _validate(tree: ast.AST, text: str) -> tuple[bool, set[str]]:
    names, keys = set(), set()
    for node in ast.walk(tree):
        if not isinstance(node, _NODES):
            raise RuleError(f"{type(node).__name__} in {text!r}")
        if isinstance(node, ast.Name):
            names.add(node.id)
        if isinstance(node, ast.Attribute):
            owner = node.value
            allowed = (
                isinstance(owner, ast.Name)
                and (
                    (owner.id == "math" and not node.attr.startswith("_"))
                    or (owner.id == "ll" and node.attr in ("timestamp", "key", "value"))
                    or (owner.id == "s" and node.attr == "get")
                )
            ) or (_is_state_item(owner) and node.attr == "append")
            if not allowed:
                raise RuleError(f"attribute .{node.attr} in {text!r}")
        if (
            isinstance(node, ast.Subscript)
            and isinstance(node.value, ast.Name)
            and node.value.id == "s"
            and isinstance(node.slice, ast.Constant)
        ):
            keys.add(str(node.slice.value))
    unknown = names - set(_FUNCTIONS) - {"v", "s", "ll"}
    if unknown:
        raise RuleError(
            f"unknown {noun_for(len(unknown), 'name')} {joined(sorted(unknown))} in {text!r}"
        )
    return bool(names & {"s", "ll"}), keys


def _arguments() -> ast.arguments:
    """The parameters ``(v, s, ll)`` of a compiled rule."""
    return ast.arguments(
        posonlyargs=[],
        args=[ast.arg("v"), ast.arg("s"), ast.arg("ll")],
        kwonlyargs=[],
        kw_defaults=[],
        defaults=[],
    )


def _parsed(text: str, mode: str, refusal: str) -> ast.mod:
    """``text`` parsed in ``mode`` (``eval``, ``exec``); :class:`RuleError` saying
    ``refusal`` when it is not Python."""
    try:
        return ast.parse(text, mode=mode)
    except SyntaxError as exc:
        raise RuleError(f"{refusal}: {text!r} ({exc.msg})") from None


@functools.lru_cache(maxsize=4096)
def expression(text: str) -> Expression:
    """The compiled form of one checker expression; :class:`RuleError` if refused."""
    text = text.strip()
    tree = _parsed(text, "eval", "not an expression")
    assert isinstance(tree, ast.Expression)
    stateful, keys = _validate(tree, text)
    arguments = _arguments()
    function = ast.fix_missing_locations(
        ast.Expression(body=ast.Lambda(args=arguments, body=tree.body))
    )
    # Validated above: only comparisons, indexing and the pure functions of _FUNCTIONS.
    fn = eval(compile(function, "<mlperf rule>", "eval"), _SCOPE)
    reads = frozenset(p for p in ("value", "metadata") if p in text) or frozenset({"value"})
    if re.search(r"\bv\b(?!\s*\[)", text):  # v itself (e.g. 'value' in v): both parts
        reads = frozenset({"value", "metadata"})
    return Expression(text, fn, stateful, frozenset(keys), reads)


_DROPPED_CALLS = frozenset({"enqueue_config", "print"})


@dataclass(frozen=True, slots=True)
class Program:
    """``PRE``/``POST`` code compiled into a function of ``(v, s, ll)`` that updates ``s``
    (it raises as the checker's ``exec`` would: the caller reports that)."""

    text: str
    fn: RuleFunction
    # The state keys it writes and reads (None: some key is computed, so any).
    writes: frozenset[str] | None = None
    reads: frozenset[str] | None = None

    def __call__(self, v: LineValue, s: State, ll: LogLine | None = None) -> None:
        self.fn(v, s, ll)


def _state_keys(body: list[ast.stmt]) -> tuple[frozenset[str] | None, frozenset[str] | None]:
    """(written, read) state keys of validated statements; None where a key is computed."""
    written: set[object] = set()  # each key, None for a computed one
    read: set[object] = set()
    for node in ast.walk(ast.Module(body=body, type_ignores=[])):
        if not _is_state_item(node):
            continue
        assert isinstance(node, ast.Subscript)
        key = node.slice.value if isinstance(node.slice, ast.Constant) else None
        storing = isinstance(node.ctx, ast.Store)
        if storing:
            written.add(key)
        if not storing or _augmented(body, node):
            read.add(key)
    return _known_keys(written), _known_keys(read)


def _known_keys(keys: set[object]) -> frozenset[str] | None:
    """The state keys named, None where one is computed (unknown before the line runs)."""
    if None in keys:
        return None
    return frozenset(map(str, keys))


def _augmented(body: list[ast.stmt], target: ast.AST) -> bool:
    return any(
        isinstance(n, ast.AugAssign) and n.target is target
        for n in ast.walk(ast.Module(body=body, type_ignores=[]))
    )


def _kept(statement: ast.stmt, text: str) -> ast.stmt | None:
    """The statement if it only updates ``s`` (None for a dropped call); else RuleError."""
    if isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Call):
        called = statement.value.func
        if isinstance(called, ast.Name) and called.id in _DROPPED_CALLS:
            return None
        if isinstance(called, ast.Attribute) and called.attr == "append":
            _validate(ast.Expression(statement.value), text)
            return statement
    if isinstance(statement, ast.Assign) and all(_is_state_item(t) for t in statement.targets):
        for target in statement.targets:
            _validate(ast.Expression(target), text)
        _validate(ast.Expression(statement.value), text)
        return statement
    if isinstance(statement, ast.AugAssign) and _is_state_item(statement.target):
        _validate(ast.Expression(statement.target), text)
        _validate(ast.Expression(statement.value), text)
        return statement
    if isinstance(statement, ast.If):
        _validate(ast.Expression(statement.test), text)
        statement.body = [k for s in statement.body if (k := _kept(s, text))] or [ast.Pass()]
        statement.orelse = [k for s in statement.orelse if (k := _kept(s, text))]
        return statement
    raise RuleError(f"{type(statement).__name__} statement in {text!r}")


@functools.lru_cache(maxsize=1024)
def program(text: str) -> Program:
    """The compiled form of one PRE/POST block; :class:`RuleError` if refused."""
    text = text.strip()
    tree = _parsed(text, "exec", "not code")
    assert isinstance(tree, ast.Module)
    body = [k for statement in tree.body if (k := _kept(statement, text))] or [ast.Pass()]
    writes, reads = _state_keys(body)
    arguments = _arguments()
    function = ast.FunctionDef(
        name="_post", args=arguments, body=body, decorator_list=[], returns=None, type_params=[]
    )
    module = ast.fix_missing_locations(ast.Module(body=[function], type_ignores=[]))
    scope = dict(_SCOPE)
    # Validated above: only updates of s by comparisons, indexing and pure functions.
    exec(compile(module, "<mlperf rule>", "exec"), scope)
    return Program(text, scope["_post"], writes, reads)

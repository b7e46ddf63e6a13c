"""JSON nesting checked by gpuscale itself, not by the interpreter: Python 3.11's ``json``
refuses a 5,000-deep array (``RecursionError``) where 3.12's reads it, so hostile input
would be read differently by version. Every reader of untrusted JSON text calls
``check_depth`` (or ``loads``) first: deeper than ``MAX_DEPTH`` is a ``ValueError`` on
every Python. No MLPerf log, system description, bench row or sweep nests beyond a few
levels."""

from __future__ import annotations

import json
import re
from typing import TypeAlias

MAX_DEPTH = 512
# A JSON document as json.loads (or msgspec, orjson) gives it.
JSON: TypeAlias = dict[str, "JSON"] | list["JSON"] | str | int | float | bool | None
# a JSON string (its brackets are text) or one bracket
_TOKENS = re.compile(rb'"(?:[^"\\]|\\.)*"|[\[\]{}]', re.DOTALL)


class TooDeep(ValueError):
    """JSON nested deeper than ``MAX_DEPTH``."""


class NotJson(ValueError):
    """Text read as JSON that is none, said in one line: what was read, the parser's
    reason and where it broke (line and column)."""

    def __init__(self, what: str, error: json.JSONDecodeError) -> None:
        self.line, self.column = error.lineno, error.colno
        super().__init__(
            f"{what} is not JSON: {error.msg} at line {error.lineno:,}, column {error.colno:,}"
        )


def check_depth(data: bytes | str, limit: int = MAX_DEPTH) -> None:
    """Raise :class:`TooDeep` where ``data`` nests arrays and objects deeper than
    ``limit`` (brackets inside strings do not count)."""
    raw = data.encode("utf-8", "surrogatepass") if isinstance(data, str) else bytes(data)
    if raw.count(b"[") + raw.count(b"{") <= limit:
        return  # cannot be deeper than its brackets
    depth = 0
    for match in _TOKENS.finditer(raw):
        token = match.group()
        if token in (b"[", b"{"):
            depth += 1
            if depth > limit:
                raise TooDeep(f"JSON nested too deeply (more than {limit} levels)")
        elif token in (b"]", b"}"):
            depth = max(0, depth - 1)


def loads(text: str | bytes) -> JSON:
    """``json.loads`` after ``check_depth``."""
    check_depth(text)
    return json.loads(text)

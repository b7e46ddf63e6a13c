"""Scanning MLPerf ``:::MLLOG`` result logs, byte-exact with the official parser.

The official parser (``mlperf_logging.compliance_checker.mlp_parser``) reads a file as
latin-1 text with universal newlines, keeps the lines containing ``:::MLLOG ``, cuts
everything before the *last* token on the line (``re.sub(".*:::MLLOG ", ...)``), strips
white space and ``json.loads`` the rest; a line that fails is a parse error, and one
parse error makes the whole run invalid. This scanner reproduces those rules on bytes,
but fast: ``orjson`` parses every payload and the standard ``json`` module (with the
official stripping) is asked only when orjson refuses, so both accept the same lines.

It never raises on any input: whatever cannot be read becomes a :class:`ParseFailure`.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from typing import Any

import orjson

TOKEN = b":::MLLOG "
_TOKEN_STR = TOKEN.decode()
_loads = orjson.loads
# The regex engine finds the literal prefix much faster than a bytes.find loop.
_PAYLOAD_RE = re.compile(rb":::MLLOG ([^\n]*)")
_NUMBER_TYPES = (int, float)


@dataclass(frozen=True, slots=True)
class LogEvent:
    """One parsed MLLOG line. ``index`` counts MLLOG lines from 0 in file order."""

    index: int
    time_ms: float
    key: str
    value: Any
    metadata: dict[str, Any]


@dataclass(frozen=True, slots=True)
class ParseFailure:
    """An MLLOG line that the official parser would reject (or crash on)."""

    index: int
    line: str
    message: str


def mllog_payloads(data: bytes) -> list[bytes]:
    """The text after the last ``:::MLLOG `` token of every line that has one.

    Line ends are ``\\n``, ``\\r\\n`` and ``\\r``, as in Python's universal newlines.
    """
    if b"\r" in data:
        data = data.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
    payloads = _PAYLOAD_RE.findall(data)
    # A line with two tokens: the official parser keeps the text after the last one.
    if data.count(TOKEN) != len(payloads):
        payloads = [p.rpartition(TOKEN)[2] for p in payloads]
    return payloads


def _strict_loads(payload: bytes) -> Any:
    """The official ``json.loads(line.strip()[len(TOKEN):])`` on one payload."""
    text = (_TOKEN_STR + payload.decode("latin-1")).strip()
    if not text.startswith(_TOKEN_STR):
        raise ValueError("does not match regex")
    return json.loads(text[len(_TOKEN_STR) :])


def _check_record(obj: Any) -> str | None:
    """Why a parsed payload is not a usable MLLOG record, or None if it is."""
    if not isinstance(obj, dict):
        return f"MLLOG payload is a JSON {type(obj).__name__}, not an object"
    for field in ("time_ms", "key", "value", "metadata"):
        if field not in obj:
            return f"MLLOG record has no '{field}' field"
    time_ms = obj["time_ms"]
    if isinstance(time_ms, bool | int | float):
        return None
    if isinstance(time_ms, str):
        try:
            float(time_ms)
        except ValueError:
            return f"time_ms {time_ms!r} is not a number"
        return None
    return f"time_ms has type {type(time_ms).__name__}"


def parse_payloads(payloads: list[bytes]) -> tuple[list[dict[str, Any] | None], list[ParseFailure]]:
    """Parse every payload; a rejected one is ``None`` in the list and a failure beside it."""
    try:
        objs: list[Any] = [_loads(p) for p in payloads]
    except orjson.JSONDecodeError:
        objs = []
        for p in payloads:
            try:
                objs.append(_loads(p))
            except orjson.JSONDecodeError:
                try:
                    objs.append(_strict_loads(p))
                except (ValueError, RecursionError) as exc:
                    objs.append(exc)
    bad = [
        i
        for i, o in enumerate(objs)
        if type(o) is not dict
        or type(o.get("time_ms")) not in _NUMBER_TYPES
        or "key" not in o
        or "value" not in o
        or "metadata" not in o
    ]
    failures: list[ParseFailure] = []
    for i in bad:
        obj = objs[i]
        message = str(obj) if isinstance(obj, Exception) else _check_record(obj)
        if message is None:  # e.g. time_ms logged as a numeric string: accepted
            continue
        objs[i] = None
        line = payloads[i][:200].decode("latin-1")
        failures.append(ParseFailure(index=i, line=line, message=message))
    return objs, failures


def scan_mllog(data: bytes) -> tuple[list[LogEvent], list[ParseFailure]]:
    """All MLLOG events of a log and the lines that failed, in file order."""
    records, failures = parse_payloads(mllog_payloads(data))
    events = [
        LogEvent(
            index=i,
            time_ms=float(r["time_ms"]),
            key=str(r["key"]),
            value=r["value"],
            metadata=r["metadata"] if isinstance(r["metadata"], dict) else {},
        )
        for i, r in enumerate(records)
        if r is not None
    ]
    return events, failures


def finite_or_none(value: Any) -> float | None:
    """A finite float from a logged number, else None (bools and strings are not numbers)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    f = float(value)
    return f if math.isfinite(f) else None

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
    if TOKEN in b"\n".join(payloads):  # one C-level search, not one per line
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


ByKey = dict[str, list[tuple[int, dict[str, Any]]]]


def _json_objects(payloads: list[bytes]) -> list[Any]:
    """orjson on every payload; where it refuses, the official json rule (or its error)."""
    try:
        return [_loads(p) for p in payloads]
    except orjson.JSONDecodeError:
        pass
    objs: list[Any] = []
    for p in payloads:
        try:
            objs.append(_loads(p))
        except orjson.JSONDecodeError:
            try:
                objs.append(_strict_loads(p))
            except (ValueError, RecursionError) as exc:
                objs.append(exc)
    return objs


def select_records(
    payloads: list[bytes], keys: frozenset[str] | None = None
) -> tuple[ByKey, list[ParseFailure]]:
    """Parse every payload; return the records with a key in ``keys`` (all when None),
    grouped by key as (MLLOG line index, record) in file order, and every line the
    official parser would reject.

    Each line is JSON-parsed (one bad line invalidates a run) but only the selected
    records, and those whose ``time_ms`` is not a plain number, are looked at further: one
    Python comprehension over all lines instead of a loop per consumer. A record lacking
    ``key``/``value``/``metadata`` makes the official parser crash; outside ``keys`` it is
    ignored here, inside it is reported.
    """
    objs = _json_objects(payloads)
    numbers = _NUMBER_TYPES
    if keys is None:
        candidates = list(enumerate(objs))
    else:
        try:
            candidates = [
                (i, o)
                for i, o in enumerate(objs)
                if type(o) is not dict
                or o.get("key") in keys
                or type(o.get("time_ms")) not in numbers
            ]
        except TypeError:  # an unhashable key somewhere: the careful way
            candidates = [
                (i, o)
                for i, o in enumerate(objs)
                if type(o) is not dict
                or (isinstance(o.get("key"), str) and o["key"] in keys)
                or type(o.get("time_ms")) not in numbers
            ]
    by_key: ByKey = {}
    failures: list[ParseFailure] = []
    for i, obj in candidates:
        if (
            type(obj) is dict
            and type(obj.get("time_ms")) in numbers
            and "key" in obj
            and "value" in obj
            and "metadata" in obj
        ):
            key = obj["key"]
            if type(key) is not str:
                if keys is not None:
                    continue
                key = str(key)
            elif keys is not None and key not in keys:
                continue  # picked only to check its time_ms
            group = by_key.get(key)
            if group is None:
                group = by_key[key] = []
            group.append((i, obj))
            continue
        message = str(obj) if isinstance(obj, Exception) else _check_record(obj)
        if message is None:  # time_ms logged as a numeric string: accepted
            key = obj.get("key")
            if keys is None:
                by_key.setdefault(str(key), []).append((i, obj))
            elif isinstance(key, str) and key in keys:
                by_key.setdefault(key, []).append((i, obj))
            continue
        if (
            keys is not None
            and message.startswith("MLLOG record has no")
            and not (isinstance(obj.get("key"), str) and obj["key"] in keys)
        ):
            continue  # outside the keys read: the official parser crashes, we ignore
        failures.append(
            ParseFailure(index=i, line=payloads[i][:200].decode("latin-1"), message=message)
        )
    return by_key, failures


def scan_mllog(data: bytes) -> tuple[list[LogEvent], list[ParseFailure]]:
    """All MLLOG events of a log and the lines that failed, in file order."""
    by_key, failures = select_records(mllog_payloads(data))
    selected = sorted((pair for group in by_key.values() for pair in group), key=lambda p: p[0])
    events = [
        LogEvent(
            index=i,
            time_ms=float(r["time_ms"]),
            key=str(r["key"]),
            value=r["value"],
            metadata=r["metadata"] if isinstance(r["metadata"], dict) else {},
        )
        for i, r in selected
    ]
    return events, failures


def finite_or_none(value: Any) -> float | None:
    """A finite float from a logged number, else None (bools and strings are not numbers)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    f = float(value)
    return f if math.isfinite(f) else None

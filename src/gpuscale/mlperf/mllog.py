"""Scanning MLPerf ``:::MLLOG`` result logs, byte-exact with the official parser.

The official parser (``mlperf_logging.compliance_checker.mlp_parser``) reads a file as
latin-1 text with universal newlines, keeps the lines containing ``:::MLLOG ``, cuts
everything before the *last* token on the line (``re.sub(".*:::MLLOG ", ...)``), strips
white space and ``json.loads`` the rest; a line that fails is a parse error, and one
parse error makes the whole run invalid. This scanner reproduces those rules on bytes,
but fast: ``msgspec`` decodes all of a file's payloads in one call into :class:`Record`
structs, validating every line's JSON but keeping ``value`` and ``metadata`` as raw JSON
text until someone reads them (most lines are only counted). Where msgspec refuses a
line (``NaN``, a stray form feed, a missing field...), that line is decided by the
official rule itself (``json.loads`` of the stripped latin-1 text).

Finding the lines is the optional C extension ``gpuscale.mlperf._scan`` (memmem at
memory speed, about 3.9x the regex path; a whole round's read about 1.2x, docs/speed.md)
where it was built, else ``re.findall``: the two give the same bytes for any input (a
property test compares them).

It never raises on any input: whatever cannot be read becomes a :class:`ParseFailure`.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TypeAlias, TypeVar

import msgspec

from gpuscale.sizes import number_or_none
from gpuscale.tables import json_depth
from gpuscale.tables.json_depth import JSON

try:
    from gpuscale.mlperf._scan import payloads as _payloads_c
except ImportError:  # built without a C compiler: the regex path gives the same bytes
    _payloads_c = None

TOKEN = b":::MLLOG "
_TOKEN_STR = TOKEN.decode()
# The regex engine finds the literal prefix much faster than a bytes.find loop.
_PAYLOAD_RE = re.compile(rb":::MLLOG (.*)")  # "." is any byte but \n
SCANNER = "C" if _payloads_c is not None else "Python"


def utf16(data: bytes) -> bool:
    """Whether bytes are UTF-16 text (a Windows editor's "Unicode"): its byte-order mark,
    or a NUL at every other byte of the first 64 (ASCII so encoded). Neither the official
    parser (latin-1) nor its system reader (UTF-8) reads such a file."""
    if data[:2] in (b"\xff\xfe", b"\xfe\xff"):
        return True
    head = data[: min(len(data), 64) // 2 * 2]
    if len(head) < 8:
        return False
    even, odd = head[0::2], head[1::2]
    return (not any(odd) and all(even)) or (not any(even) and all(odd))


class Record(msgspec.Struct, gc=False):
    """One MLLOG record. Read ``value`` and ``metadata`` with :func:`value_of` and
    :func:`metadata_of`: they hold raw JSON text (``msgspec.Raw``) until decoded.

    ``time_ms`` is a number, or a numeric string the official parser also accepts.
    """

    time_ms: int | float
    key: str
    value: msgspec.Raw
    metadata: msgspec.Raw


# What msgspec raises on bad input: invalid JSON, invalid UTF-8 in a string it decodes,
# nesting deeper than it recurses.
_DECODE_ERRORS = (msgspec.DecodeError, UnicodeDecodeError, RecursionError, ValueError)
_decode_lines = msgspec.json.Decoder(Record).decode_lines
_decode_record = msgspec.json.Decoder(Record).decode
_decode_any = msgspec.json.decode


def _decoded(field: msgspec.Raw | JSON) -> JSON:
    if type(field) is not msgspec.Raw:
        return field  # a line the fallback parsed: already Python objects
    try:
        return _decode_any(field)
    except _DECODE_ERRORS:
        # Not UTF-8 inside (msgspec skips strings it only stores raw): read as the
        # official parser reads every file, latin-1.
        try:
            return json_depth.loads(bytes(field).decode("latin-1"))
        except (ValueError, RecursionError):
            return None


_S = TypeVar("_S", bound=msgspec.Struct)
_struct_decoders: dict[type, Callable[[msgspec.Raw], msgspec.Struct]] = {}


def fields_of(field: msgspec.Raw | JSON, struct: type[_S]) -> _S:
    """Some members of a JSON-object ``value``/``metadata`` as ``struct`` (a Struct whose
    fields all default to None): absent members, or a field that is not an object, give
    the defaults. Decodes only those members, not the whole object."""
    if type(field) is msgspec.Raw:
        decode = _struct_decoders.get(struct)
        if decode is None:
            decode = _struct_decoders[struct] = msgspec.json.Decoder(struct).decode
        try:
            return decode(field)
        except _DECODE_ERRORS:  # not an object, or not UTF-8: the general way
            field = _decoded(field)
    if isinstance(field, dict):
        return struct(**{name: field.get(name) for name in struct.__struct_fields__})
    return struct()


def value_of(record: Record) -> JSON:
    """The record's ``value`` as Python objects (as ``json.loads`` gives them)."""
    return _decoded(record.value)


def metadata_of(record: Record) -> JSON:
    """The record's ``metadata`` as Python objects (usually a dict)."""
    return _decoded(record.metadata)


@dataclass(frozen=True, slots=True)
class ParseFailure:
    """An MLLOG line that the official parser would reject (or crash on)."""

    index: int
    line: str
    message: str


@dataclass(frozen=True, slots=True)
class Payloads:
    """The MLLOG lines of a file: how many, and the text after the last ``:::MLLOG ``
    token of each, joined by ``\\n`` (what the one-call decode reads). Payloads never
    hold a line end, so :meth:`lines` splits them back exactly."""

    count: int
    joined: bytes

    def lines(self) -> list[bytes]:
        return self.joined.split(b"\n") if self.count else []

    @staticmethod
    def of(lines: list[bytes]) -> Payloads:
        """Payloads given line by line (none may hold a line end)."""
        return Payloads(len(lines), b"\n".join(lines))


def payloads_python(data: bytes) -> tuple[int, bytes]:
    """``(count, joined)`` of :class:`Payloads` by the regex engine (the reference the C
    scanner is tested against, and the path where it was not built)."""
    if b"\r" in data:
        data = data.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
    payloads = _PAYLOAD_RE.findall(data)
    joined = b"\n".join(payloads)
    # A line with two tokens: the official parser keeps the text after the last one.
    if TOKEN in joined:  # one C-level search, not one per line
        joined = b"\n".join(p.rpartition(TOKEN)[2] for p in payloads)
    return len(payloads), joined


def find_payloads(data: bytes) -> Payloads:
    """The MLLOG lines of ``data``. Line ends are ``\\n``, ``\\r\\n`` and ``\\r``, as in
    Python's universal newlines."""
    if _payloads_c is not None:
        return Payloads(*_payloads_c(data))
    return Payloads(*payloads_python(data))


def _strict_loads(payload: bytes) -> JSON:
    """The official ``json.loads(line.strip()[len(TOKEN):])`` on one payload."""
    text = (_TOKEN_STR + payload.decode("latin-1")).strip()
    if not text.startswith(_TOKEN_STR):
        raise ValueError("does not match regex")
    return json_depth.loads(text[len(_TOKEN_STR) :])


def _check_record(obj: JSON) -> str | None:
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


# One MLLOG line parsed: a record, what the official rule makes of a line that is not
# one (a JSON value), or the exception that rule raises.
ParsedLine: TypeAlias = Record | Exception | JSON


def _parse_one(payload: bytes) -> ParsedLine:
    """One line: a Record, else what the official rule makes of it (an object that is
    not a usable record, or the exception it raises)."""
    try:
        return _decode_record(payload)
    except _DECODE_ERRORS:
        pass
    try:
        obj = _strict_loads(payload)
    except (ValueError, RecursionError) as exc:
        return exc
    if _check_record(obj) is None:
        # Fields decoded already; time_ms may be a numeric string, key any JSON value.
        return Record(obj["time_ms"], obj["key"], obj["value"], obj["metadata"])
    return obj


def parse_records(payloads: Payloads) -> tuple[list[ParsedLine], bool]:
    """Each payload parsed: ``(items, clean)``; ``clean`` is True when every item is a
    :class:`Record` with a string key and a numeric ``time_ms`` (the common case, read in
    one msgspec call over the joined payloads; a blank payload would be skipped there,
    so the counts are compared)."""
    if not payloads.count:
        return [], True
    try:
        records = _decode_lines(payloads.joined)
        if len(records) == payloads.count:
            return records, True
    except _DECODE_ERRORS:
        pass
    return [_parse_one(p) for p in payloads.lines()], False


ByKey = dict[str, list[tuple[int, Record]]]


def _group(records: Iterable[tuple[int, Record]], keys: frozenset[str] | None) -> ByKey:
    """(index, record) pairs grouped by key, in order; only ``keys`` unless None."""
    by_key: ByKey = {}
    get = by_key.get
    for i, record in records:
        key = record.key
        if keys is None or key in keys:
            group = get(key)
            if group is None:
                by_key[key] = [(i, record)]
            else:
                group.append((i, record))
    return by_key


def select_records(
    payloads: Payloads, keys: frozenset[str] | None = None
) -> tuple[ByKey, list[ParseFailure]]:
    """Parse every payload; return the records with a key in ``keys`` (all when None),
    grouped by key as (MLLOG line index, record) in file order, and every line the
    official parser would reject.

    Every line is JSON-validated (one bad line invalidates a run) but only the selected
    records are looked at further. A record lacking ``key``/``value``/``metadata`` makes
    the official parser crash; outside ``keys`` it is ignored here, inside it is
    reported.
    """
    records, clean = parse_records(payloads)
    if clean:
        return _group(enumerate(records), keys), []
    lines = payloads.lines()
    chosen: list[tuple[int, Record]] = []
    failures: list[ParseFailure] = []
    for i, item in enumerate(records):
        if type(item) is Record:
            key = item.key
            if type(key) is not str:
                if keys is not None:
                    continue
                item.key = str(key)
            elif keys is not None and key not in keys:
                continue
            chosen.append((i, item))
            continue
        message = str(item) if isinstance(item, Exception) else _check_record(item)
        if (
            keys is not None
            and isinstance(item, dict)
            and message is not None
            and message.startswith("MLLOG record has no")
            and not (isinstance(item.get("key"), str) and item["key"] in keys)
        ):
            continue  # outside the keys read: the official parser crashes, we ignore
        failures.append(
            ParseFailure(index=i, line=lines[i][:200].decode("latin-1"), message=str(message))
        )
    return _group(chosen, None), failures


def time_of(record: Record) -> float:
    """A record's ``time_ms`` as a float: NaN when it is not a finite number (a numeric
    string or an integer too large for a float included), so that no caller raises."""
    try:
        value = float(record.time_ms)
    except (OverflowError, ValueError, TypeError):
        return math.nan
    return value if math.isfinite(value) else math.nan


def finite_or_none(value: object) -> float | None:
    """A finite float from a logged number, else None (bools and strings are not numbers)."""
    if type(value) is not float:  # the common case skips the isinstance chain
        number = number_or_none(value)
        if number is None:
            return None
        value = float(number)
    if math.isfinite(value):
        return value
    return None

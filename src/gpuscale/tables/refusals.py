"""A request's refusal of a value: the field, the value as given and the rule it breaks,
said as Python reads it (keywords: ``invalid steps -5: ...``, ``fixed_ms=30``) and as the
command line does (options: ``--steps -5: ...``, ``--fixed-ms 30``). One wording, two
spellings: a sentence names a field once (:func:`ref`), or a phrase each reader says its
own way (:func:`spelled`), and each reader sees its own.
:func:`check_ranges` refuses a request's numbers past their ranges."""

from __future__ import annotations

import math
import numbers
import re
import shlex
from collections.abc import Callable, Mapping
from contextvars import ContextVar
from dataclasses import fields
from os import PathLike

from gpuscale.quantities import number, read_size
from gpuscale.sizes import SIZES, number_or_none
from gpuscale.tables.commands import quoted_path

# A number's range: (lowest, highest, lowest excluded?)
Range = tuple[float, float, bool]


class FieldError(ValueError):
    """A request's field with a value its rule refuses: ``field`` (the Python name),
    ``value`` (as given) and ``rule`` (what it must be). Reads ``invalid steps -5: must be
    a whole number from 1 to 10,000,000``; the CLI says the option instead of the field
    (``--steps -5: must be ...``), one line, never the option's whole help."""

    def __init__(
        self,
        field: str,
        value: object,
        rule: str,
        *,
        more: tuple[tuple[str, object, str], ...] = (),
    ) -> None:
        self.field, self.value, self.rule = field, value, rule
        self.problems = ((field, value, rule), *more)  # every field refused, first first
        super().__init__(
            "; ".join(_refused(f"invalid {f}", f, v, as_keywords(r)) for f, v, r in self.problems)
        )

    def as_options(self, options: dict[str, str] | None = None) -> str:
        """As the command line reads: the option (``options``: field -> option, where it
        is not ``--field-name``), the value as typed and its rule, one per field refused
        (``--step-ms -5: must be a number at least 0.001 ...``); never the option's help."""
        names = options or {}
        said = []
        for f, v, r in self.problems:
            name = names.get(f, "--" + f.replace("_", "-"))
            said.append(_refused(name, name, v, as_options(r, names)))
        return "; ".join(said)


class NamedError(FieldError):
    """A refusal whose sentence names request fields (each written with :func:`ref`):
    Python reads them as keywords (``fixed_ms=30 is not below step_ms=18.6``), the command
    line as its options (:meth:`as_options`: ``--fixed-ms 30 is not below --step-ms
    18.6``), as a :class:`FieldError` names the field it refuses. ``problems`` is empty:
    no one field's value is refused."""

    def __init__(self, text: str) -> None:
        ValueError.__init__(self, as_keywords(text))
        self.field, self.value, self.rule, self.problems = "", None, text, ()
        self.text = text

    def as_options(self, options: dict[str, str] | None = None) -> str:
        return as_options(self.text, options)


_REF = re.compile("\x1d([^\x1e]*)\x1e([^\x1e]*)\x1e([^\x1d]*)\x1d")
_SPELLED = re.compile("\x1c([^\x1c\x1e]*)\x1e([^\x1c]*)\x1c")
_ALONE = object()
PATH_MAX = 4096  # Linux's longest path, in bytes: a suggested path up to it is said whole


def ref(field: str, value: object = _ALONE, *, flag: bool = False, typed: str | None = None) -> str:
    """``field`` (with ``value``) named in a refusal's sentence (:class:`NamedError`, a
    :class:`FieldError`'s rule) or the advice's words: its keyword from Python
    (``fixed_ms=``, ``fixed_ms=30``, ``scaling='weak'``), its option on the command line
    (``--fixed-ms``, ``--fixed-ms 30``, ``--scaling weak``; a ``flag`` that gives the value
    alone: ``--strong``; ``typed``: the value as the option takes it, ``--samples 10M``).
    The option's value is shell-quoted, as a suggestion is pasted (``--out '/tmp/a b/x'``),
    and a text is whole up to ``PATH_MAX`` (a long path still pastes)."""
    if value is _ALONE:
        return f"\x1d{field}\x1e\x1e\x1d"
    keyword = repr(value) if isinstance(value, str) else _literal(value)
    text = clipped(str(value), PATH_MAX) if isinstance(value, str | PathLike) else shown(value)
    text = text if typed is None else typed
    flag = flag or value is True  # a flag given: the option alone
    return f"\x1d{field}\x1e{keyword}\x1e{'' if flag else ' ' + shlex.quote(text)}\x1d"


def spelled(option: str, keyword: str) -> str:
    """A phrase of a refusal that names no one field of the request (:func:`ref` names
    one), said as each reader acts on it: the command line's ``option`` words (``--round``,
    ``gpuscale advise --device-name X``), Python's ``keyword`` words (``load_round('v4.1')``,
    ``gpuscale.advise(device_name='X', ...)``)."""
    return f"\x1c{option}\x1e{keyword}\x1c"


class Placeholder(str):
    """A value the reader puts in (``T``, ``B``), named bare by either spelling:
    ``step_ms=T``, ``--step-ms T``; ``then``: what Python's keyword takes after it (``,``
    before another keyword of the same call, which the command line leaves out)."""

    then: str = ""

    def __repr__(self) -> str:
        return f"{self}{self.then}"


def _literal(value: object) -> str:
    """``value`` as a Python keyword's literal: a whole number of five digits or more with
    its digits grouped (``samples=10_000_000``, as PEP 515 writes it), else :func:`shown`."""
    number = number_or_none(value)
    if number is not None and float(number).is_integer() and 10_000 <= abs(value) < 1e15:
        return f"{int(value):_}"
    return shown(value)


def given_as(value: str) -> str | bool | int:
    """The value a template gives a field: ``@T`` the :class:`Placeholder` ``T`` (``@T,``:
    one keyword of a call, ``step_ms=T, batch=B`` and ``--step-ms T --batch B``), ``True``
    a flag's (``allow_flagged=True``, ``--allow-flagged``), digits their whole number
    (``2``: ``grad_bytes=2``, ``--grad-bytes 2``), any other text itself (``fp32``:
    ``precision='fp32'``, ``--precision fp32``)."""
    if value == "True":
        return True
    if value.isdigit():
        return int(value)
    if not value.startswith("@"):
        return value
    placeholder = Placeholder(value[1:].rstrip(","))
    placeholder.then = "," if value.endswith(",") else ""
    return placeholder


def as_keywords(text: str) -> str:
    """``text`` with each field named (:func:`ref`) as its keyword: ``fixed_ms=30``, and
    each phrase :func:`spelled` two ways in Python's words."""
    text = _SPELLED.sub(lambda m: m[2], text)
    return _REF.sub(lambda m: f"{m[1]}={m[2]}", text)


def as_options(text: str, options: dict[str, str] | None = None) -> str:
    """``text`` with each field named (:func:`ref`) as its option (``options``: field ->
    option, where it is not ``--field-name``): ``--fixed-ms 30``, and each phrase
    :func:`spelled` two ways in the command line's words."""
    names = options or {}
    text = _SPELLED.sub(lambda m: m[1], text)
    return _REF.sub(lambda m: names.get(m[1], "--" + m[1].replace("_", "-")) + m[3], text)


def _refused(named: str, bare: str, value: object, rule: str) -> str:
    """One refusal: ``named value: rule`` (``invalid steps -5: ...``, ``--steps -5: ...``),
    or ``bare: rule`` where no value was given (``--workload: required ...``)."""
    if _missing(value):
        return f"{bare}: {rule}"
    if isinstance(value, PathLike):  # a path whole (as ref says it), quoted: it pastes
        return f"{named} {clipped(quoted_path(value), PATH_MAX)}: {rule}"
    return f"{named} {shown(value)}: {rule}"


def _missing(value: object) -> bool:
    """No value to show: none given (None or blank text: ``--workload: required ...``),
    or a flag given (True: ``--allow-flagged: applies with --advise``)."""
    return value is None or value is True or (isinstance(value, str) and not value.strip())


def shown(value: object) -> str:
    """A value as a person typed it: ``-5``, not ``-5.0``; text as itself (a command's
    refusal names the option's text as typed: ``tables.request_text.request_of``), cut
    short past 60 characters (:func:`clipped`)."""
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e15:
        return str(int(value))
    return clipped(str(value))


def clipped(text: str, most: int = 60) -> str:
    """``text``, or its first ``most`` characters and how many there were."""
    return text if len(text) <= most else f"{text[:most]}... ({len(text):,} characters)"


def check_ranges(request: object, ranges: Mapping[str, Range], rules: Mapping[str, str]) -> None:
    """Each of ``request``'s (a dataclass's) fields in ``ranges``, every value of one given
    several times (a tuple): ``TypeError`` where it is no number (None where its default is
    not None) or not whole in a field typed ``int``; then :class:`FieldError` past its range
    (``inf`` and ``nan`` too, in a field typed ``int``), the rule as ``rules`` words it,
    else as the range says it: one rule per field, whichever value breaks it. A whole value
    in a field typed ``int`` is then kept as an ``int``: ``8.0`` (or numpy's ``int64``, as a
    table gives) counts, indexes and writes to JSON as ``8`` does."""
    kinds = {f.name: f for f in fields(request)}  # type: ignore[arg-type]
    given: list[tuple[str, numbers.Real]] = []  # each value of a field given several times
    for name in ranges:
        value = getattr(request, name)
        for one in value if isinstance(value, tuple) else (value,):
            if one is None:
                if (default := kinds[name].default) is not None:
                    help = kinds[name].metadata["help"]  # what the field is, said after
                    raise TypeError(
                        f"{name} must be a number, not None (leave it out for its default, "
                        f"{default!r}): {help}"
                    )
                continue
            # numbers.Real: numpy's integers and floats too (a value read from a table)
            if isinstance(one, bool) or not isinstance(one, numbers.Real):
                hint = ""
                if isinstance(one, str) and kinds[name].metadata["parse"] is read_size:
                    typed, e = SIZES.one(*ranges[name])
                    hint = (
                        f" (a size as text, such as {typed!r}, is for the command line: give {e})"
                    )
                raise TypeError(f"{name} must be a number, not {type(one).__name__} {one!r}{hint}")
            # inf and nan: past every range, refused by it below as 0 is
            if _whole_field(kinds[name].type) and not _whole(one) and math.isfinite(one):
                raise TypeError(f"{name} must be a whole number, not {one!r}")
            given.append((name, one))
    for name, value in given:
        low, high, open_low = ranges[name]
        at = float(value)
        if not (math.isfinite(at) and (at > low if open_low else at >= low) and at <= high):
            whole = _whole_field(kinds[name].type)
            raise FieldError(name, value, rules.get(name) or _rule(ranges[name], whole))
    for name in {name for name, _ in given if _whole_field(kinds[name].type)}:
        value = getattr(request, name)
        ints = tuple(int(one) for one in value) if isinstance(value, tuple) else int(value)
        object.__setattr__(request, name, ints)  # a frozen dataclass: set as it sets its own


def check_flags(request: object) -> None:
    """``TypeError`` where a field of ``request`` (a dataclass) typed ``bool`` holds no
    yes/no (numpy's ``bool_`` too): ``explain="no"`` would read as yes."""
    for f in fields(request):  # type: ignore[arg-type]
        if f.type not in ("bool", bool) or not f.init:  # one set later: the request sets it
            continue
        value = getattr(request, f.name)
        if not isinstance(value, bool) and _kind(value) != "b":
            raise TypeError(f"{f.name} must be True or False, not {type(value).__name__} {value!r}")


def _kind(value: object) -> str:  # a numpy scalar's dtype kind ("b": its bool_), else ""
    return str(getattr(getattr(value, "dtype", None), "kind", ""))


def _whole(value: object) -> bool:  # a huge int is whole, never overflows a float
    return isinstance(value, numbers.Integral) or float(value).is_integer()  # type: ignore[arg-type]


def _whole_field(kind: object) -> bool:  # typed ``int`` (``int | None`` ...)
    return str(kind).startswith("int")


def _rule(within: Range, whole: bool) -> str:
    low, high, open_low = within
    if low == 1 and whole:
        return f"must be a positive whole number, at most {_bound(high)}"
    start = f"above {_bound(low)}" if open_low else f"at least {_bound(low)}"
    return f"must be a {'whole number' if whole else 'number'} {start} and at most {_bound(high)}"


def _bound(value: float) -> str:
    """``10^16``, not 10,000,000,000,000,000."""
    exponent = math.log10(value) if value > 0 else 0.0
    if value >= 1e7 and exponent.is_integer():
        return f"10^{int(exponent)}"
    return number(value)


# How words name a request's field where a reader's spelling is in force (the advice's
# ``phrasebook.spelled_as``: Python's keywords or a command's options); None: the command
# line's, each field's own option
SPELLING: ContextVar[Callable[[str], str] | None] = ContextVar("spelling", default=None)


def field_named(field: str) -> str:
    """A request's ``field`` named as :data:`SPELLING` names it, for words made outside a
    template: ``allow_flagged=`` in Python's, ``--allow-flagged`` in the command line's."""
    return (SPELLING.get() or as_options)(ref(field))

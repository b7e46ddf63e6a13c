"""The frozen request dataclasses' shared parts (``AdviceRequest``, ``BenchConfig``,
``PlanRequest``, ...): each field's command-line option written once in its metadata
(:func:`option`), and JSON written with sorted keys, read back with unknown fields an
error (a runner and a worker of different versions must not silently drop a setting).
Pure Python: the CLI imports the requests at start."""

from __future__ import annotations

import difflib
import json
import re
import typing
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import MISSING, Field, asdict, field, fields
from pathlib import Path
from typing import Any, ClassVar, TypeVar

from gpuscale.quantities import BadQuantity, joined, noun_for
from gpuscale.tables import json_depth
from gpuscale.tables.spelling import abbreviation_of

Request = TypeVar("Request", bound="JsonRequest")


def option(
    default: Any = MISSING,
    *,
    help: str,
    names: tuple[str, ...] = (),
    parse: Callable[[Any], Any] | None = None,
    cli: Any = MISSING,
    shown: Any = MISSING,
    one_file: bool = False,
) -> Any:
    """A request field with its command-line option, written once: ``help`` (the option's
    help text), ``names`` (its spellings where they are not ``--field-name``, e.g.
    ``("--timeout",)``, ``("--workload", "-w")``, ``("--check/--no-check",)``), ``parse``
    (the option's value to the field's: a size such as ``7M``, a path, a list; None: as
    typed), ``cli`` (the type the option is typed as, where it is not the field's) and
    ``shown`` (the option's default, where the field's is not what one types), ``one_file``
    (a path naming one file to write). Values are checked by the request itself (one line
    naming the option), never by Typer."""
    meta = {"help": help, "names": names, "parse": parse, "one_file": one_file}
    if cli is not MISSING:
        meta["cli"] = cli
    if shown is not MISSING:
        meta["shown"] = shown
    return field(default=default, metadata=meta)


def argument(*, help: str) -> Any:
    """A request field (``tuple[X, ...] | None``) given as the command's positional
    arguments, any number of them: a tuple of them, None when none is given."""
    return field(
        default=None, metadata={"help": help, "names": (), "parse": tuple, "argument": True}
    )


def text_option(
    default: Any,
    parse: Callable[[str], Any],
    *,
    help: str,
    names: tuple[str, ...] = (),
    shown: Any = MISSING,
) -> Any:
    """An :func:`option` typed as text on the command line and read by ``parse`` (a size
    such as ``7M`` or ``1G``, a list in one text); optional where ``default`` is None."""
    cli = str if default is not None else str | None
    return option(default, help=help, names=names, parse=parse, cli=cli, shown=shown)


def repeatable_option(
    kind: type, *, help: str, names: tuple[str, ...] = (), parse: Callable[[Any], Any] = tuple
) -> Any:
    """An :func:`option` given once or more (``--family A --family B``), each value read
    as ``kind``: a tuple of them (``parse``: the values to the field's), None when not
    given."""
    return option(None, help=help, names=names, parse=parse, cli=list[kind] | None)  # type: ignore[valid-type]


def single_option(*, what: str, help: str, names: tuple[str, ...], required: bool = False) -> Any:
    """An :func:`option` of one name that the command line takes repeatedly, as the
    MLPerf commands take ``-b``, so that a second one is refused, not silently replacing
    the first (``plan -b bert -b retinanet`` planned retinanet alone)."""

    def one(values: list[str]) -> str | None:
        distinct = list(dict.fromkeys(values))
        if len(distinct) > 1:
            raise BadQuantity(", ".join(distinct), f"one {what} at a time: run it once for each")
        return distinct[0] if distinct else ("" if required else None)

    # the command line's default is no value (not None, which ``parse`` is not given)
    default = MISSING if required else None
    return option(default, names=names, help=help, parse=one, cli=list[str] | None, shown=[])


def given_once_each(parser: Any, args: Sequence[str]) -> str:
    """The one-line refusal of a command line (``args``, read by the command's ``parser``:
    click's) that gives a single-valued option more than once, or both spellings of a
    yes/no flag (``--cache --no-cache``), naming them; "" where none is, or where the parser
    refuses ``args`` (its own error says why, as the command reads them). The parser keeps
    the last alone, silently: ``analyze --bench A --bench B`` read B. An option given
    repeatedly on purpose (``multiple``, ``count``) is none of these, nor a flag given
    twice alike (``--png --png`` says one thing)."""
    try:  # each parameter once per time given, in order (click's ``param_order``)
        order = parser.parse_args(args=list(args))[2]
    except Exception:  # a slip: the command's own parse says it
        return ""
    repeatable = ("multiple", "count")  # given several times on purpose
    again = [
        (p, n)
        for p, n in Counter(order).items()
        if n > 1
        and getattr(p, "param_type_name", "") == "option"
        and not any(getattr(p, a, False) for a in repeatable)
    ]
    valued, both = [], []
    for param, times in again:
        if not param.is_flag:
            name = next((o for o in param.opts if o.startswith("--")), param.opts[0])
            valued.append(f"{name} given {'twice' if times == 2 else f'{times} times'}")
        elif {*param.opts} & {*args} and {*param.secondary_opts} & {*args}:
            both.append(f"{param.opts[0]} and {param.secondary_opts[0]} both given: give one")
    if valued:
        each = "it" if len(valued) == 1 else "each"
        rule = f"{each} takes one value (the last would be used alone); give {each} once"
        valued = [f"{joined(valued)}: {rule}"]
    return "; ".join(valued + both)


def price_option() -> Any:
    """The price of a device-hour, as every request that prices a run takes it."""
    return option(
        None, names=("--price",), help="Price per device-hour, any currency (without it, no cost)."
    )


def power_option(default: str) -> Any:
    """The average power per device, as every request that says energy takes it
    (``default``: what stands in for it when not given)."""
    # --power as plan first spelled it; --power-w as advise did
    names = ("--power-w", "--power")
    return option(None, names=names, help=f"Average power per device, W ({default}).")


def flag(spelling: str, *, help: str, default: bool = False) -> Any:
    """A yes/no :func:`option` of one ``spelling``: ``--png`` (off unless given) or a
    pair, ``--cache/--no-cache`` (``default``: on or off when neither is given)."""
    return option(default, names=(spelling,), help=help)


def oversubscribe_option() -> Any:
    """Whether more CPU processes may run than the host has cores, as every command that
    launches ranks takes it (``bench``, ``collectives``)."""
    return flag(
        "--oversubscribe", help="Allow more CPU processes per node than the host has cores."
    )


def help_of(request: Any, name: str) -> str:
    """The help text of ``request``'s field ``name`` (a class or an instance)."""
    return next(f for f in fields(request) if f.name == name).metadata["help"]


def number_option(f: Field, hints: dict[str, Any]) -> tuple[type, bool] | None:
    """(``int`` or ``float``, repeatable) for an option of numbers: a field typed as one
    (``int | None`` too) or an option typed as a list of them; None for any other (text
    read by the field's own ``parse``: sizes, lists in one text)."""
    hint = f.metadata.get("cli", hints[f.name])
    kinds = [k for k in typing.get_args(hint) or (hint,) if k is not type(None)]
    many = len(kinds) == 1 and typing.get_origin(kinds[0]) is list
    if many:
        kinds = list(typing.get_args(kinds[0]))
    elif "cli" in f.metadata:
        return None
    return (kinds[0], many) if len(kinds) == 1 and kinds[0] in (int, float) else None


def has_path(kind: Any) -> bool:
    """Whether a type is, or holds, ``Path`` (``Path | None``, ``tuple[Path, ...]``)."""
    return kind is Path or any(has_path(k) for k in typing.get_args(kind))


def command_line_type(f: Field, hints: dict[str, Any]) -> tuple[Any, str | None]:
    """The type a field's option is taken as on the command line, and what one value is
    called in the help (None: as Typer says it). Numbers and paths are taken as text, read
    by ``cli.options.request_of`` (a refusal in one line, as every other value's; Typer
    read ``--out ''`` as ``.``); a repeatable option or the positional arguments as a list."""
    number = number_option(f, hints)
    if number:  # Typer's box said "Input should be a valid integer"
        return (list[str] | None if number[1] else str | None), f"<{number[0].__name__}>"
    kind = f.metadata.get("cli", hints[f.name])
    each = [k for k in typing.get_args(kind) if typing.get_origin(k) in (list, tuple)]
    many = bool(each) or bool(f.metadata.get("argument"))
    if has_path(kind):
        return (list[str] | None if many else str | None), "<path>"
    if each:
        one = typing.get_args(each[0])[0]
        return list[one] | None, f"<{one.__name__}>"  # type: ignore[valid-type]
    return kind, None


def option_name(f: Field) -> str:
    """The option a field is given by on the command line (``--grad-bytes``; ``-k`` where
    it has only a short one)."""
    if f.metadata.get("argument"):
        return f.name.upper()  # as Typer names the arguments in help: PATHS
    names = f.metadata.get("names") or ()
    long = [n.split("/")[0] for n in names if n.startswith("--")]
    return (long or list(names) or ["--" + f.name.replace("_", "-")])[0]


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
            "; ".join(
                f"{f}: {r}" if _missing(v) else f"invalid {f} {shown(v)}: {r}"
                for f, v, r in ((f, v, as_keywords(r)) for f, v, r in self.problems)
            )
        )

    def as_options(self, options: dict[str, str] | None = None) -> str:
        """As the command line reads: the option (``options``: field -> option, where it
        is not ``--field-name``), the value as typed and its rule, one per field refused
        (``--step-ms -5: must be a number at least 0.001 ...``); never the option's help."""
        names = options or {}
        said = []
        for f, v, r in self.problems:
            name, r = names.get(f, "--" + f.replace("_", "-")), as_options(r, names)
            said.append(f"{name}: {r}" if _missing(v) else f"{name} {shown(v)}: {r}")
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
_ALONE = object()


def ref(field: str, value: object = _ALONE, *, flag: bool = False) -> str:
    """``field`` (with ``value``) named in a refusal's sentence (:class:`NamedError`, a
    :class:`FieldError`'s rule): its keyword from Python (``fixed_ms=``, ``fixed_ms=30``,
    ``scaling='weak'``), its option on the command line (``--fixed-ms``, ``--fixed-ms
    30``, ``--scaling weak``; a ``flag`` that gives the value alone: ``--strong``)."""
    if value is _ALONE:
        return f"\x1d{field}\x1e\x1e\x1d"
    keyword = repr(value) if isinstance(value, str) else shown(value)
    return f"\x1d{field}\x1e{keyword}\x1e{'' if flag else ' ' + shown(value)}\x1d"


def as_keywords(text: str) -> str:
    """``text`` with each field named (:func:`ref`) as its keyword: ``fixed_ms=30``."""
    return _REF.sub(lambda m: f"{m[1]}={m[2]}", text)


def as_options(text: str, options: dict[str, str] | None = None) -> str:
    """``text`` with each field named (:func:`ref`) as its option (``options``: field ->
    option, where it is not ``--field-name``): ``--fixed-ms 30``."""
    names = options or {}
    return _REF.sub(lambda m: names.get(m[1], "--" + m[1].replace("_", "-")) + m[3], text)


def _missing(value: object) -> bool:
    """No value to show: none given (None or blank text: ``--workload: required ...``),
    or a flag given (True: ``--allow-flagged: applies with --advise``)."""
    return value is None or value is True or (isinstance(value, str) and not value.strip())


def one_named(text: str, allowed: Sequence[Any]) -> Any:
    """The one of ``allowed`` that ``text`` names whatever its case (``FSDP`` is fsdp),
    else None: an abbreviation is no name (``glo`` was read as gloo in silence; what a
    prefix would mean changes as choices are added). The rule of every choice below
    ``gpuscale.names`` (which reads names alike); :func:`abbreviation_of` says it."""
    key = text.strip().lower()
    return next((a for a in allowed if str(a).lower() == key), None)


def comma_items(field: str, text: str, example: str, what: str = "item") -> list[str]:
    """The items of a comma-separated option, stripped; :class:`FieldError` for an empty
    one (``1,,2``, ``1,2,``: a slip, never run as if it were not there) and for one given
    twice (``1,2,2`` ran 1,2 without a word: :func:`given_twice`)."""
    items = [item.strip() for item in text.split(",")]
    if not all(items):
        raise FieldError(
            field, text, f"an empty {what} between commas (or at an end); give e.g. {example}"
        )
    if twice := given_twice(items, what):
        raise FieldError(field, text, twice)
    return items


def given_twice(items: Sequence[object], what: str = "item") -> str:
    """The rule a list breaks where an item is in it more than once (``2 given twice; give
    each count once``), "" where each is given once: the one wording of every list option
    (``--nproc``, ``--ops``, ``--models``, ``plan -n``, ``-b``, ``--columns``), given the
    items as each option reads them (``01`` is 1, ``ALL_REDUCE`` all_reduce)."""
    counts = Counter(items)
    twice = [str(i) for i, n in counts.items() if n > 1]
    return f"{', '.join(twice)} given twice; give each {what} once" if twice else ""


def settle_choice(request: Any, field: str, allowed: Sequence[object]) -> None:
    """Set ``request``'s ``field`` (a frozen dataclass's) to the one of ``allowed`` it
    names, whatever its case (``FSDP`` is ``fsdp``); :class:`FieldError` otherwise, the
    closest named (``fsdpp`` gets "did you mean 'fsdp'?", ``clo`` that an abbreviation is
    not read)."""
    value = getattr(request, field)
    found = next((a for a in allowed if a == value), None)
    if found is None and isinstance(value, str):
        found = one_named(value, allowed)
    if found is not None:
        object.__setattr__(request, field, found)
        return
    close = difflib.get_close_matches(str(value).lower(), [str(a) for a in allowed], n=1)
    hint = f" (did you mean {close[0]!r}?)" if close else ""
    short = abbreviation_of(value, allowed) if isinstance(value, str) else ""
    rule = f"must be one of {', '.join(map(str, allowed))}{hint}{short}"
    raise FieldError(field, value, rule)


def check_keywords(request: type, keywords: Any, function: str, *also: str) -> None:
    """A ``TypeError`` naming ``function``'s keyword that is no field of ``request`` (nor one
    of ``also``), the closest named: ``gpuscale.advise(parms=7e6)`` said "AdviceRequest.
    __init__() got an unexpected keyword argument 'parms'", a class the user never named."""
    valid = [f.name for f in fields(request) if f.init] + list(also)
    for name in keywords:
        if name not in valid:
            close = difflib.get_close_matches(name, valid, n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            raise TypeError(f"{function}() has no keyword {name!r}{hint}")


def shown(value: object) -> str:
    """A value as a person typed it: ``-5``, not ``-5.0``; text as itself (a command's
    refusal names the option's text as typed: ``cli.options.request_of``), cut short
    past 60 characters (:func:`clipped`)."""
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e15:
        return str(int(value))
    return clipped(str(value))


def clipped(text: str, most: int = 60) -> str:
    """``text``, or its first ``most`` characters and how many there were (a refusal
    echoed a 100,000-character value whole)."""
    return text if len(text) <= most else f"{text[:most]}... ({len(text):,} characters)"


class JsonRequest:
    """Mixin of a dataclass: :meth:`to_json` and :meth:`from_json`; ``json_name`` names
    the kind in the error message (``"bench config"``)."""

    __slots__ = ()
    json_name: ClassVar[str] = "request"

    def to_json(self) -> str:
        """The fields as a JSON object (tuples as lists), keys sorted."""
        return json.dumps(asdict(self), sort_keys=True)  # type: ignore[call-overload]

    @classmethod
    def from_json(cls: type[Request], text: str) -> Request:
        """The object :meth:`to_json` wrote; unknown fields are a ``ValueError``."""
        data: dict[str, Any] = json_depth.loads(text)
        unknown = set(data) - {f.name for f in fields(cls)}  # type: ignore[arg-type]
        if unknown:
            raise ValueError(
                f"unknown {cls.json_name} {noun_for(len(unknown), 'field')}: "
                f"{joined(sorted(unknown))}"
            )
        return cls(**data)

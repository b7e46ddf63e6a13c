"""The frozen request dataclasses' shared parts (``AdviceRequest``, ``BenchConfig``,
``PlanRequest``, ...): each field's command-line option written once in its metadata
(:func:`option`), choices read whatever their case, and JSON written with sorted keys,
read back with unknown fields an error (a runner and a worker of different versions must
not silently drop a setting). How a field becomes an option is
``gpuscale.tables.command_line``; how a refusal reads, ``gpuscale.tables.refusals`` (both
names are importable from here too). Pure Python: the CLI imports the requests at start."""

from __future__ import annotations

import difflib
import inspect
import json
import re
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import MISSING, Field, field, fields
from pathlib import Path
from typing import Any, ClassVar, TypeVar

from gpuscale.quantities import BadQuantity, article, joined, noun_for
from gpuscale.tables import json_depth
from gpuscale.tables.command_line import (
    CommandParser,
    command_line_type,
    given_once_each,
    has_path,
    help_for,
    help_of,
    number_option,
    option_name,
)
from gpuscale.tables.refusals import (
    FieldError,
    NamedError,
    Range,
    as_keywords,
    as_options,
    clipped,
    ref,
    shown,
)
from gpuscale.tables.spelling import abbreviation_of, likeliest, meant_options, suggested

__all__ = [
    "POWER_RANGE",
    "PRICE_RANGE",
    "CommandParser",
    "FieldError",
    "JsonRequest",
    "NamedError",
    "argument",
    "as_keywords",
    "as_options",
    "check_keywords",
    "clipped",
    "comma_items",
    "command_line_type",
    "flag",
    "folder_out_option",
    "given_once_each",
    "given_twice",
    "has_path",
    "help_for",
    "help_of",
    "keyword_doc",
    "keyword_help",
    "keyword_signature",
    "number_option",
    "one_named",
    "option",
    "option_name",
    "oversubscribe_option",
    "power_option",
    "price_option",
    "ref",
    "repeatable_option",
    "results_out_option",
    "settle_choice",
    "shown",
    "single_option",
    "text_option",
]

Request = TypeVar("Request", bound="JsonRequest")
# the JSON a request's text held where an object belongs, as JSON names it
_JSON_KINDS = {
    list: "an array",
    str: "a string",
    int: "a number",
    float: "a number",
    bool: "true or false",
    type(None): "null",
}
T = TypeVar("T")
# What reads an option's value (text, a list of texts, a number...) as the field's.
Parse = Callable[..., object]


def option(
    default: object = MISSING,
    *,
    help: str,
    names: tuple[str, ...] = (),
    parse: Parse | None = None,
    cli: object = MISSING,
    shown: object = MISSING,
    one_file: bool = False,
    each_command: Mapping[str, str] | None = None,
) -> Any:
    """A request field with its command-line option, written once: ``help``, ``names`` (its
    spellings where they are not ``--field-name``: ``("--workload", "-w")``,
    ``("--check/--no-check",)``), ``parse`` (the option's value to the field's: a size such
    as ``7M``, a path, a list; None: as typed), ``cli`` (the option's type where it is not
    the field's), ``shown`` (the option's default where the field's is not what one types),
    ``one_file`` (a path naming one file to write), ``each_command`` (a command's own
    help, where its default differs: ``tables.command_line.help_for``). The request checks
    the values, never Typer. Typed ``Any`` as :func:`dataclasses.field` is: the field's
    annotation says it."""
    meta: dict[str, object] = {"help": help, "names": names, "parse": parse, "one_file": one_file}
    if each_command:
        meta["each_command"] = each_command
    if cli is not MISSING:
        meta["cli"] = cli
    if shown is not MISSING:
        meta["shown"] = shown
    return field(default=default, metadata=meta)


def argument(*, help: str, each_command: Mapping[str, str] | None = None) -> Any:
    """A request field (``tuple[X, ...] | None``) given as the command's positional
    arguments, any number of them: a tuple of them, None when none is given
    (``each_command``: as :func:`option`'s)."""
    meta: dict[str, object] = {"help": help, "names": (), "parse": tuple, "argument": True}
    if each_command:
        meta["each_command"] = each_command
    return field(default=None, metadata=meta)


def text_option(
    default: T,
    parse: Callable[[str], T],
    *,
    help: str,
    names: tuple[str, ...] = (),
    shown: object = MISSING,
) -> T:
    """An :func:`option` typed as text on the command line and read by ``parse`` (a size
    such as ``7M`` or ``1G``, a list in one text); optional where ``default`` is None."""
    cli = str if default is not None else str | None
    return option(default, help=help, names=names, parse=parse, cli=cli, shown=shown)


def repeatable_option(
    kind: type,
    *,
    help: str,
    names: tuple[str, ...] = (),
    parse: Parse = tuple,
    each_command: Mapping[str, str] | None = None,
) -> Any:
    """An :func:`option` given once or more (``--family A --family B``), each value read
    as ``kind``: a tuple of them (``parse``: the values to the field's), None when not
    given (``each_command``: as :func:`option`'s)."""
    cli = list[kind] | None  # type: ignore[valid-type]
    return option(None, help=help, names=names, parse=parse, cli=cli, each_command=each_command)


def single_option(*, what: str, help: str, names: tuple[str, ...], required: bool = False) -> Any:
    """An :func:`option` of one name that the command line takes repeatedly, as the
    MLPerf commands take ``-b``, so that a second one is refused, not silently replacing
    the first."""

    # the command line's default is no value (not None, which ``parse`` is not given)
    empty, default = ("", MISSING) if required else (None, None)

    def one(values: list[str]) -> str | None:
        distinct = list(dict.fromkeys(values))
        if len(distinct) > 1:
            raise BadQuantity(", ".join(distinct), f"one {what} at a time: run it once for each")
        return next(iter(distinct), empty)

    return option(default, names=names, help=help, parse=one, cli=list[str] | None, shown=[])


# The price of an accelerator-hour (any currency; 0: a cluster already paid for) and a device's
# average power (W; a device drawing 0 W cannot run): one range each, whichever request
# takes them (``refusals.check_ranges``).
PRICE_RANGE: Range = (0, 1e9, False)
POWER_RANGE: Range = (0, 1e5, True)


def price_option() -> float | None:
    """The price of an accelerator-hour, as every request that prices a run takes it."""
    return option(
        None,
        names=("--price",),
        help="Price per accelerator-hour, any currency (without it, no cost).",
    )


def power_option(default: str) -> float | None:
    """The average power per device, as every request that says energy takes it
    (``default``: what stands in for it when not given)."""
    # --power as plan first spelled it; --power-w as advise did
    names = ("--power-w", "--power")
    return option(None, names=names, help=f"Average power per device, W ({default}).")


def flag(spelling: str, *, help: str, default: bool = False) -> bool:
    """A yes/no :func:`option` of one ``spelling``: ``--png`` (off unless given) or a
    pair, ``--cache/--no-cache`` (``default``: on or off when neither is given)."""
    return option(default, names=(spelling,), help=help)


def oversubscribe_option() -> bool:
    """Whether more CPU processes may run than the host has cores, as every command that
    launches ranks takes it (``bench``, ``collectives``)."""
    return flag(
        "--oversubscribe", help="Allow more CPU processes per node than the host has cores."
    )


def folder_out_option(default: Path, what: str) -> Path:
    """The folder a command writes ``what`` into, as every command that writes a folder
    takes it (``ingest``, ``dataset``, ``report``); ``default``: its name where none is given."""
    return option(default, names=("--out",), help=f"Folder for {what}, in a folder that exists.")


def results_out_option(default: Path) -> Path:
    """The file of JSON lines a command appends its measured rows to, as every command that
    measures takes it (``bench``, ``collectives``); ``default``: its name where none is given."""
    return option(
        default,
        names=("--out",),
        help="Results file (JSON lines, appended; in a folder that exists).",
        one_file=True,
    )


def one_named(text: str, allowed: Sequence[T]) -> T | None:
    """The one of ``allowed`` that ``text`` names whatever its case (``FSDP`` is fsdp),
    else None: an abbreviation is no name (what a prefix would mean changes as choices are
    added); :func:`abbreviation_of` says so."""
    key = text.strip().lower()
    return next((a for a in allowed if str(a).lower() == key), None)


def empty_item(what: str, example: str) -> str:
    """The rule a list breaks with an empty item (``1,,2``, ``v5.0,``): every list
    option's one wording."""
    return f"an empty {what} between commas (or at an end); give e.g. {example}"


def comma_items(field: str, text: str, example: str, what: str = "item") -> list[str]:
    """The items of a comma-separated option, stripped; :class:`FieldError` for an empty
    one (``1,,2``, ``1,2,``: a slip) and for one given twice (:func:`given_twice`)."""
    items = [item.strip() for item in text.split(",")]
    if not all(items):
        raise FieldError(field, text, empty_item(what, example))
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
    if not twice:
        return ""
    return f"{', '.join(twice)} given twice; give each {what} once"


def settle_choice(
    request: object,
    field: str,
    allowed: Sequence[object],
    other_names: Mapping[str, str] | None = None,
) -> None:
    """Set ``request``'s ``field`` (a frozen dataclass's) to the one of ``allowed`` it
    names, whatever its case (``FSDP`` is ``fsdp``); :class:`FieldError` otherwise, the
    closest named (``fsdpp`` gets "did you mean 'fsdp'?", ``clo`` that an abbreviation is
    not read), or the one ``other_names`` says it is (``zero3``, full sharding: ``fsdp``),
    never one merely spelled alike."""
    value = getattr(request, field)
    found = next((a for a in allowed if a == value), None)
    if found is None and isinstance(value, str):
        found = one_named(value, allowed)
    if found is not None:
        object.__setattr__(request, field, found)
        return
    close = likeliest(str(value).lower(), map(str, allowed))
    known = {_bare(k): v for k, v in (other_names or {}).items()}
    if isinstance(value, str) and _bare(value) in known:
        close = [known[_bare(value)]]
    rule = f"must be one of {', '.join(map(str, allowed))}{suggested(close, upto=len(close))}"
    if isinstance(value, str):
        rule += abbreviation_of(value, allowed)
    raise FieldError(field, value, rule)


def _bare(name: str) -> str:
    """``name`` without case, spaces, hyphens or underscores (``ZeRO-3`` is ``zero3``)."""
    return "".join(c for c in name.lower() if c not in " -_")


def check_keywords(request: type, keywords: Iterable[str], function: str, *also: str) -> None:
    """A ``TypeError`` naming ``function``'s keyword that is no field of ``request`` (nor one
    of ``also``), the closest named, not ``__init__`` of a class the user never named."""
    valid = [f.name for f in fields(request) if f.init] + list(also)
    # a keyword spelt as the field's command-line option (plan's --price is the field
    # price_per_device_hour): that field is the one meant, however unlike its name
    by_option = {
        spelling.lstrip("-").replace("-", "_"): f.name
        for f in fields(request)
        if f.init
        for names in [f.metadata.get("names", ())]
        for option in names
        for spelling in option.split("/")
        if spelling.startswith("--")
    }
    for name in keywords:
        if name not in valid:
            close = [by_option[name]] if name in by_option else []
            # a near spelling first (device: devices), then a user's word (gpus: devices)
            close = close or difflib.get_close_matches(name, valid, n=1, cutoff=0.8)
            close = close or meant_options(name, valid)
            close = close or difflib.get_close_matches(name, valid, n=1)
            raise TypeError(f"{function}() has no keyword {name!r}{suggested(close)}")


# a size as the command line types it (``7M``, ``4G``): Python's keyword takes the number
_SIZE = re.compile(r"\b(\d+(?:\.\d+)?)([kKMGTP])\b")
_EXPONENT = {"k": 3, "K": 3, "M": 6, "G": 9, "T": 12, "P": 15}


def keyword_help(request: type, name: str) -> str:
    """The help of ``request``'s field ``name`` (its option's, in its metadata) in Python's
    words: each option it names (``--step-ms``, ``--price``, ``--gpus-per-node``) as its
    keyword (``step_ms=``, :func:`~gpuscale.tables.refusals.as_keywords`), a size as a
    number (``7M``: ``7e6``) and a repeatable option as a list."""
    by_option = {
        spelling: f.name
        for f in fields(request)
        if f.init
        for option in (*f.metadata.get("names", ()), "--" + f.name.replace("_", "-"))
        for spelling in option.split("/")
        if spelling.startswith("--")
    }
    # the bare words of an option (``nodes x gpus-per-node``) name it too
    by_option |= {o[2:]: n for o, n in by_option.items() if "-" in o[2:]}
    pattern = "|".join(re.escape(o) for o in sorted(by_option, key=len, reverse=True))
    chosen = next(f for f in fields(request) if f.name == name)
    text = str(chosen.metadata.get("help", ""))
    text = re.sub(rf"(?<![\w-])({pattern})(?![\w-])", lambda m: ref(by_option[m[1]]), text)
    if chosen.metadata.get("parse") is not None and _SIZE.search(text):
        text = _SIZE.sub(lambda m: f"{m[1]}e{_EXPONENT[m[2]]}", text)
    # a keyword's own words (``workload='s RCPs``) read as the field's: ``workload's``
    return as_keywords(text.replace("(repeatable)", "(a list)")).replace("='s ", "'s ")


def keyword_doc(function: Callable[..., object], request: type) -> str:
    """``function``'s docstring with a line per keyword that is a field of ``request``: its
    name, default and meaning with its unit (:func:`keyword_help`), for ``help()`` and the
    API page. The one source of the words is the field's metadata, as the option's help."""
    named = set(inspect.signature(function).parameters)
    lines = [
        f"* ``{f.name}`` ({_default_of(f)}): {keyword_help(request, f.name)}"
        for f in fields(request)
        if f.init and f.name not in named and f.metadata.get("help")
    ]
    own = inspect.cleandoc(function.__doc__ or "")
    return f"{own}\n\nKeywords (the fields of ``{request.__name__}``):\n\n" + "\n".join(lines)


def _default_of(f: Field[object]) -> str:
    """A field's default as its keyword's line says it (``required`` where it has none)."""
    if f.default is not MISSING:
        return f"default ``{f.default!r}``"
    return "required" if f.default_factory is MISSING else f"default ``{f.default_factory()!r}``"


def keyword_signature(function: Callable[..., object], request: type) -> inspect.Signature:
    """``function``'s signature with its ``**fields`` as ``request``'s fields, each a keyword
    with its default: what ``help()`` and ``inspect.signature`` show of a call that takes a
    request or its fields (``gpuscale.advise``, ``gpuscale.plan``). A field ``function``
    names itself keeps its own parameter."""
    signature = inspect.signature(function)
    params = [p for p in signature.parameters.values() if p.kind is not p.VAR_KEYWORD]
    named = {p.name for p in params}
    for f in fields(request):
        if not f.init or f.name in named:
            continue
        default = f.default
        if default is MISSING:
            default = (
                inspect.Parameter.empty if f.default_factory is MISSING else f.default_factory()
            )
        params.append(
            inspect.Parameter(
                f.name, inspect.Parameter.KEYWORD_ONLY, default=default, annotation=f.type
            )
        )
    return signature.replace(parameters=params)


class JsonRequest:
    """Mixin of a dataclass: :meth:`to_json` and :meth:`from_json`; ``json_name`` names
    the kind in the error message (``"bench config"``); ``field_ranges``, each number's
    range (lowest, highest, lowest excluded?), where the request has one to offer examples
    within (a size typed wrong is offered sizes its field takes)."""

    __slots__ = ()
    json_name: ClassVar[str] = "request"
    field_ranges: ClassVar[Mapping[str, Range]] = {}

    def to_json(self) -> str:
        """The fields given as a JSON object (tuples as lists), keys sorted; a field resolved
        from them (``init=False``) is made again when it is read back."""
        given = {f.name: getattr(self, f.name) for f in fields(self) if f.init}  # type: ignore[arg-type]
        return json.dumps(given, sort_keys=True)

    @classmethod
    def from_json(cls: type[Request], text: str) -> Request:
        """The object :meth:`to_json` wrote; unknown fields are a ``ValueError``, text that
        is no JSON a :class:`~gpuscale.tables.json_depth.NotJson` (one, with the line and
        column where it broke)."""
        try:
            data = json_depth.loads(text)
        except json.JSONDecodeError as exc:
            raise json_depth.NotJson(f"the {cls.json_name} {clipped(text)!r}", exc) from None
        if not isinstance(data, dict):
            raise ValueError(
                f"{article(cls.json_name)} {cls.json_name} is a JSON object, not "
                f"{_JSON_KINDS.get(type(data), 'a ' + type(data).__name__)}"
            )
        known = [f for f in fields(cls) if f.init]  # type: ignore[arg-type]
        names = [f.name for f in known]
        unknown = sorted(set(data) - set(names))
        if unknown:
            close = difflib.get_close_matches(unknown[0], names, n=1)
            raise ValueError(
                f"unknown {cls.json_name} {noun_for(len(unknown), 'field')}: "
                f"{joined(unknown)}{suggested(close)}"
            )
        needed = [
            f.name
            for f in known
            if f.default is MISSING and f.default_factory is MISSING and f.name not in data
        ]
        if needed:  # said as the object's fields, not as __init__'s keyword arguments
            raise ValueError(
                f"{article(cls.json_name)} {cls.json_name} needs the "
                f"{noun_for(len(needed), 'field')} "
                f"{joined(needed)}; it has {joined(sorted(data)) or 'none'}"
            )
        return cls(**data)

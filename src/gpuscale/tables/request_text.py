"""A request built from the text of its options: each field's value parsed as its
metadata says (numbers read as quantities, paths checked, the field's own ``parse``), a
value refused being that field's :class:`FieldError`, said as it was typed. Pure Python:
the CLI hands it what the option parser read, a script may hand it strings."""

from __future__ import annotations

import typing
from collections.abc import Mapping
from dataclasses import MISSING, fields, is_dataclass
from os import PathLike
from typing import TypeVar

from gpuscale.quantities import BadQuantity, reading_number
from gpuscale.tables.command_line import EMPTY, number_option, option_name
from gpuscale.tables.out_paths import TypedPath, each_value, typed_paths
from gpuscale.tables.refusals import FieldError

R = TypeVar("R")


def request_of(request: type[R], values: Mapping[str, object], **more: object) -> R:
    """``request`` built from the options' ``values`` (its fields' entries, each parsed as
    its metadata says; text refused is the field's :class:`FieldError`, any example it
    offers within the field's range in ``request.field_ranges``) and ``more``."""
    given: dict[str, object] = {}
    typed: dict[str, object] = {}
    hints = typing.get_type_hints(request)
    for f in fields(request):  # type: ignore[arg-type]
        if f.name not in values or "help" not in f.metadata:
            continue
        value, parse, number = values[f.name], f.metadata["parse"], number_option(f, hints)
        blank = [v for v in each_value(value) if isinstance(v, str) and not v.strip()]
        if blank:  # no default is blank (the command line refuses it first: refused_at_parse)
            raise FieldError(f.name, None, EMPTY)
        value = typed_paths(f, hints, value)
        try:
            if number and value is not None:
                read = reading_number(number[0])
                value = tuple(map(read, value)) if number[1] else read(value)  # type: ignore[call-overload]
            given[f.name] = value if value is None or parse is None else parse(value)
        except BadQuantity as exc:  # the text refused, offered examples within the field's range
            within = getattr(request, "field_ranges", {}).get(f.name)
            exc = exc.within(*within) if within else exc
            raise FieldError(f.name, exc.text, exc.rule) from None
        text = values[f.name]
        if isinstance(text, list | tuple) and len(text) == 1:  # a repeatable option given once
            text = text[0]
        if isinstance(text, str):
            typed[f.name] = text
    try:
        return request(**given, **more)
    except FieldError as exc:  # the value said as typed (`1e99`, not its 100 digits)
        if not exc.problems:  # fields named in a sentence (NamedError): said as they are
            raise
        problems = [(f, _as_typed(typed.get(f, v), v), r) for f, v, r in exc.problems]
        raise FieldError(*problems[0], more=tuple(problems[1:])) from None


def _as_typed(text: object, value: object) -> object:
    """A refused value as typed, a path's text still a path (named quoted)."""
    return TypedPath(text) if isinstance(value, PathLike) and isinstance(text, str) else text


def option_names(*requests: type) -> dict[str, str]:
    """Field -> the option that gives it, for each field of ``requests`` with help."""
    return {f.name: option_name(f) for r in requests for f in fields(r) if "help" in f.metadata}


def required_options(*requests: type) -> frozenset[str]:
    """The options that give a field of ``requests`` with no default: those a command
    cannot run without (``plan``'s ``--workload``, ``--accelerator``)."""
    return frozenset(
        option_name(f)
        for r in requests
        for f in fields(r)
        if "help" in f.metadata and f.default is MISSING and f.default_factory is MISSING
    )


def is_request(kind: object) -> bool:
    """Whether a parameter's type is a request: a dataclass whose fields carry help."""
    return (
        isinstance(kind, type)
        and is_dataclass(kind)
        and any("help" in f.metadata for f in fields(kind))
    )

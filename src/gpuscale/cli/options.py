"""Typer options generated from a request dataclass's fields: the one place an option is
made from a field's metadata (``gpuscale.tables.requests.option``), and the one place its
text becomes the field's value."""

from __future__ import annotations

import inspect
import typing
from collections.abc import Callable
from dataclasses import MISSING, fields
from typing import Annotated, Any

import typer

from gpuscale.quantities import BadQuantity
from gpuscale.tables.requests import FieldError, option_name


def request_options(request: type, skip: tuple[str, ...] = ()) -> list[inspect.Parameter]:
    """One keyword-only Typer option per field of ``request`` that carries help: named,
    typed and defaulted as its metadata says (``names``, ``cli``, ``shown``)."""
    hints = typing.get_type_hints(request)
    params = []
    for f in fields(request):
        if "help" not in f.metadata or f.name in skip:
            continue
        meta = f.metadata
        default = meta.get("shown", f.default)
        number = _number(f, hints)
        # a number is taken as text and read by ``request_of`` (its refusal one line, as
        # every other value's: Typer's box said "Input should be a valid integer")
        typed = {"metavar": f"<{number[0].__name__}>"} if number else {}
        option = typer.Option(*meta["names"], help=meta["help"], **typed)
        cli = meta.get("cli", hints[f.name])
        if number:
            cli = (list[str] | None) if number[1] else (str | None)
        params.append(
            inspect.Parameter(
                f.name,
                inspect.Parameter.KEYWORD_ONLY,
                default=None if default is MISSING else default,
                annotation=Annotated[cli, option],
            )
        )
    return params


def _number(f: Any, hints: dict[str, Any]) -> tuple[type, bool] | None:
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


def _read_number(kind: type) -> Callable[[str], Any]:
    """An option's text as the field's number (``1e3`` is a whole number; ``inf`` and
    ``nan`` are numbers, left to the request's own ranges); ``BadQuantity`` otherwise."""
    rule = "must be a whole number" if kind is int else "must be a number"

    def read(text: Any) -> Any:
        if not isinstance(text, str):  # a default, already a number
            return text
        try:
            return int(text.strip()) if kind is int else float(text)
        except ValueError:
            pass
        try:
            value = float(text)
        except ValueError:
            raise BadQuantity(text, rule) from None
        if kind is int and not value.is_integer():
            raise BadQuantity(text, rule)
        return int(value) if kind is int else value

    return read


def help_paragraphs(text: str) -> str:
    """A docstring as command help: each paragraph's lines joined (Typer keeps a
    docstring's line breaks, which a terminal of another width shows as ragged lines)."""
    paragraphs = inspect.cleandoc(text).split("\n\n")
    return "\n\n".join(" ".join(p.split()) for p in paragraphs)


def request_of(request: type, values: dict[str, Any], **more: Any) -> Any:
    """``request`` built from the options' ``values`` (its fields' entries, each parsed as
    its metadata says; text refused is the field's :class:`FieldError`) and ``more``."""
    given = {}
    hints = typing.get_type_hints(request)
    for f in fields(request):
        if f.name not in values or "help" not in f.metadata:
            continue
        value, parse, number = values[f.name], f.metadata["parse"], _number(f, hints)
        try:
            if number and value is not None:
                read = _read_number(number[0])
                value = tuple(map(read, value)) if number[1] else read(value)
            given[f.name] = value if value is None or parse is None else parse(value)
        except BadQuantity as exc:
            raise FieldError(f.name, exc.text, exc.rule) from None  # the text refused
    return request(**given, **more)


def option_names(*requests: type) -> dict[str, str]:
    """Field -> the option that gives it, for each field of ``requests`` with help."""
    return {f.name: option_name(f) for r in requests for f in fields(r) if "help" in f.metadata}


def command(
    app: typer.Typer, name: str, *requests: type, at: str | None = None, skip: tuple = ()
) -> Callable[[Callable[..., None]], Callable[..., None]]:
    """Register ``fn`` as command ``name`` with its own options and those of each request
    (inserted before its parameter ``at``, else after its own); ``fn`` takes them all as
    keywords (the generated ones through its ``**options``)."""

    def register(fn: Callable[..., None]) -> Callable[..., None]:
        own = [
            p.replace(kind=inspect.Parameter.KEYWORD_ONLY)
            for p in inspect.signature(fn, eval_str=True).parameters.values()
            if p.kind is not inspect.Parameter.VAR_KEYWORD
        ]
        made = [p for r in requests for p in request_options(r, skip)]
        cut = [p.name for p in own].index(at) if at else len(own)
        fn.__signature__ = inspect.Signature([*own[:cut], *made, *own[cut:]])  # type: ignore[attr-defined]
        return app.command(name)(fn)

    return register

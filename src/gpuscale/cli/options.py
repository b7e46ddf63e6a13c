"""Typer options generated from a request dataclass's fields: the one place an option is
made from a field's metadata (``gpuscale.tables.requests.option``), and the one place its
text becomes the field's value."""

from __future__ import annotations

import inspect
import typing
from collections.abc import Callable
from dataclasses import MISSING, fields, is_dataclass
from typing import Annotated, Any

import typer

from gpuscale.cli.output import fail, fail_on
from gpuscale.cli.usage import one_line
from gpuscale.quantities import BadQuantity, reading_number
from gpuscale.tables.out_paths import typed_paths
from gpuscale.tables.requests import (
    FieldError,
    command_line_type,
    given_once_each,
    number_option,
    option_name,
)


def request_options(request: type, skip: tuple[str, ...] = ()) -> list[inspect.Parameter]:
    """One keyword-only Typer option (or argument: ``argument``) per field of ``request``
    that carries help: named, typed and defaulted as its metadata says (``names``,
    ``cli``, ``shown``)."""
    hints = typing.get_type_hints(request)
    params = []
    for f in fields(request):
        if "help" not in f.metadata or f.name in skip:
            continue
        meta = f.metadata
        default = meta.get("shown", f.default)
        cli, metavar = command_line_type(f, hints)
        if meta.get("argument"):  # the command's positional arguments
            option = typer.Argument(help=meta["help"])
        else:
            option = typer.Option(*meta["names"], help=meta["help"], metavar=metavar)
        params.append(
            inspect.Parameter(
                f.name,
                inspect.Parameter.KEYWORD_ONLY,
                default=None if default is MISSING else default,
                annotation=Annotated[cli, option],
            )
        )
    return params


def help_paragraphs(text: str) -> str:
    """A docstring as command help: each paragraph's lines joined (Typer keeps a
    docstring's line breaks, which a terminal of another width shows as ragged lines)."""
    paragraphs = inspect.cleandoc(text).split("\n\n")
    return "\n\n".join(" ".join(p.split()) for p in paragraphs)


def request_of(request: type, values: dict[str, Any], **more: Any) -> Any:
    """``request`` built from the options' ``values`` (its fields' entries, each parsed as
    its metadata says; text refused is the field's :class:`FieldError`) and ``more``."""
    given, typed = {}, {}
    hints = typing.get_type_hints(request)
    for f in fields(request):
        if f.name not in values or "help" not in f.metadata:
            continue
        value, parse, number = values[f.name], f.metadata["parse"], number_option(f, hints)
        many = value if isinstance(value, list | tuple) else [value]
        if any(isinstance(v, str) and not v.strip() for v in many):  # no default is blank
            raise FieldError(f.name, None, "empty: give a value, or leave the option out")
        value = typed_paths(f, hints, value)
        try:
            if number and value is not None:
                read = reading_number(number[0])
                value = tuple(map(read, value)) if number[1] else read(value)
            given[f.name] = value if value is None or parse is None else parse(value)
        except BadQuantity as exc:
            raise FieldError(f.name, exc.text, exc.rule) from None  # the text refused
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
        problems = [(f, typed.get(f, v), r) for f, v, r in exc.problems]
        raise FieldError(*problems[0], more=tuple(problems[1:])) from None


def option_names(*requests: type) -> dict[str, str]:
    """Field -> the option that gives it, for each field of ``requests`` with help."""
    return {f.name: option_name(f) for r in requests for f in fields(r) if "help" in f.metadata}


def _is_request(kind: Any) -> bool:
    """Whether a parameter's type is a request: a dataclass whose fields carry help."""
    return (
        isinstance(kind, type)
        and is_dataclass(kind)
        and any("help" in f.metadata for f in fields(kind))
    )


def command(
    app: typer.Typer, name: str, *, skip: tuple = ()
) -> Callable[[Callable[..., None]], Callable[..., None]]:
    """Register ``fn`` as command ``name``. Each parameter of ``fn`` typed as a request
    (``advise_command(request: AdviceRequest, ...)``) becomes that request's options, in
    its place (``skip`` left out); ``fn`` is called with each request built from them
    (:func:`request_of`), a value its request refuses ending the command first, in one
    line that names the option."""

    def register(fn: Callable[..., None]) -> Callable[..., None]:
        params = inspect.signature(fn, eval_str=True).parameters.values()
        requests = {p.name: p.annotation for p in params if _is_request(p.annotation)}
        own = [p.name for p in params if p.name not in requests]
        options = [
            made
            for p in params
            for made in (
                request_options(requests[p.name], skip)
                if p.name in requests
                else [p.replace(kind=inspect.Parameter.KEYWORD_ONLY)]
            )
        ]

        def run(**values: Any) -> None:
            with fail_on(ValueError, options=option_names(*requests.values())):
                built = {n: request_of(r, values) for n, r in requests.items()}
            fn(**{n: values[n] for n in own}, **built)

        run.__name__, run.__doc__ = fn.__name__, fn.__doc__
        run.__signature__ = inspect.Signature(options)  # type: ignore[attr-defined]
        app.command(name)(run)
        return fn

    return register


class OnceEach(typer.core.TyperCommand):
    """Every command's class: a single-valued option given twice is refused in one line
    naming it (``given_once_each``), before anything runs (click used the last alone); any
    other usage error said in one line too (``cli.usage``)."""

    def _parse(self, ctx: typer.Context, args: list[str]) -> list[str]:
        if (said := given_once_each(self.make_parser(ctx), args)) and not ctx.resilient_parsing:
            fail(said)
        return typer.core.TyperCommand.parse_args(self, ctx, args)

    parse_args = one_line(_parse)

"""Typer options generated from a request dataclass's fields: the one place an option is
made from a field's metadata (``gpuscale.tables.requests.option``); the options' text
becomes the request in the library (``gpuscale.tables.request_text``)."""

from __future__ import annotations

import inspect
import typing
from collections.abc import Callable
from dataclasses import MISSING, fields
from typing import Annotated

import typer

from gpuscale.cli.output import OPTIONS, fail, fail_on, note
from gpuscale.cli.usage import one_line
from gpuscale.tables.command_line import UNREAD, explain_unused, help_alone, refused_at_parse
from gpuscale.tables.request_text import is_request, option_names, request_of, required_options
from gpuscale.tables.requests import command_line_type, help_for


def request_options(request: type, skip: tuple[str, ...], name: str) -> list[inspect.Parameter]:
    """One keyword-only Typer option (or argument: ``argument``) per field of ``request``
    that carries help: named, typed and defaulted as its metadata says (``names``,
    ``cli``, ``shown``), its help as command ``name`` shows it."""
    hints = typing.get_type_hints(request)
    params = []
    for f in fields(request):
        if "help" not in f.metadata or f.name in skip:
            continue
        meta = f.metadata
        default = meta.get("shown", f.default)
        cli, metavar = command_line_type(f, hints)
        if meta.get("argument"):  # the command's positional arguments
            option = typer.Argument(help=help_for(meta, name))
        else:
            option = typer.Option(*meta["names"], help=help_for(meta, name), metavar=metavar)
        params.append(
            inspect.Parameter(
                f.name,
                inspect.Parameter.KEYWORD_ONLY,
                default=None if default is MISSING else default,
                annotation=Annotated[cli, option],
            )
        )
    return params


def command(
    app: typer.Typer, name: str, *, skip: tuple = ()
) -> Callable[[Callable[..., None]], Callable[..., None]]:
    """Register ``fn`` as command ``name``: each parameter typed as a request
    (``advise_command(request: AdviceRequest, ...)``) becomes its options in its place
    (``skip`` left out); ``fn`` is called with each request built (:func:`request_of`), a
    value its request refuses ending the command first in one line naming the option."""

    def register(fn: Callable[..., None]) -> Callable[..., None]:
        params = inspect.signature(fn, eval_str=True).parameters.values()
        requests = {p.name: p.annotation for p in params if is_request(p.annotation)}
        own = [p.name for p in params if p.name not in requests]
        options = [
            made
            for p in params
            for made in (
                request_options(requests[p.name], skip, name)
                if p.name in requests
                else [p.replace(kind=inspect.Parameter.KEYWORD_ONLY)]
            )
        ]

        def run(**values: object) -> None:
            note(*explain_unused(values, name))  # beside -f json or csv: said, not refused
            with fail_on(ValueError, options=option_names(*requests.values())):
                built = {n: request_of(r, values) for n, r in requests.items()}
            fn(**{n: values[n] for n in own}, **built)

        run.__name__, run.__doc__ = fn.__name__, fn.__doc__
        run.__signature__ = inspect.Signature(options)  # type: ignore[attr-defined]
        run.required = required_options(*requests.values())  # type: ignore[attr-defined]
        app.command(name)(run)
        return fn

    return register


class OnceEach(typer.core.TyperCommand):
    """Every command's class: an option given twice, a value typed empty or an option typed
    as a keyword refused in one line before anything runs (``refused_at_parse``); any
    other usage error in one line too (``cli.usage``); its options in ``OPTIONS``."""

    def _parse(self, ctx: typer.Context, args: list[str]) -> list[str]:
        if (said := refused_at_parse(self.make_parser(ctx), args)) and not ctx.resilient_parsing:
            fail(said)
        OPTIONS.set(frozenset(o for p in self.params for o in p.opts))  # what it may name
        return super().parse_args(ctx, help_alone(self.make_parser(ctx), args))  # help wins

    parse_args = one_line(_parse)

    def invoke(self, ctx: typer.Context) -> object:  # a round read not whole: exit 1 once done
        UNREAD.set(frozenset())
        done = super().invoke(ctx)
        return ctx.exit(1) if UNREAD.get() else done

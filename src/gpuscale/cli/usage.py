"""The option parser's errors in the project's one form: one ``error:`` line naming the
closest valid name, exit 2 (``tables.spelling``); Click drew a 4-6 line box."""

from __future__ import annotations

import typer

from gpuscale.cli.output import fail
from gpuscale.tables.spelling import unknown_command, unknown_option, usage_said

try:  # typer 0.2x carries its own click (typer._click), whose errors are its own classes
    from typer._click import exceptions  # type: ignore[import-not-found]
except ImportError:  # an older typer runs on click itself
    from click import exceptions  # type: ignore[no-redef]


def one_line(parse):  # type: ignore[no-untyped-def]
    """``parse`` (a ``parse_args``) with a usage error said in one line; shell completion
    (``resilient_parsing``) gets it as Click raises it."""

    def parse_args(self, ctx, args):  # type: ignore[no-untyped-def]
        try:
            return parse(self, ctx, args)
        except exceptions.UsageError as exc:
            if ctx.resilient_parsing or isinstance(exc, exceptions.NoArgsIsHelpError):
                raise  # a bare `gpuscale`: the help, printed already, as Click ends it
            if not isinstance(exc, exceptions.NoSuchOption):
                fail(usage_said(exc.format_message(), ctx.command_path, exc))
            opts = [p for p in ctx.command.params if p.param_type_name == "option" and not p.hidden]
            fields = {p.name or "": p.opts for p in opts}  # each keyword's options
            fail(unknown_option(exc.option_name, fields, ctx.command_path))

    return parse_args


class OneLineGroup(typer.core.TyperGroup):
    """The app's class: an unknown command, or a usage error of the app's own options, in
    one ``error:`` line."""

    parse_args = one_line(typer.core.TyperGroup.parse_args)

    def resolve_command(self, ctx, args):  # type: ignore[no-untyped-def]
        name = next(iter(args), "")
        if ctx.resilient_parsing or name in self.commands or name.startswith("-"):
            return super().resolve_command(ctx, args)
        shown = [n for n, c in self.commands.items() if not c.hidden]
        fail(unknown_command(name, shown, ctx.command_path))

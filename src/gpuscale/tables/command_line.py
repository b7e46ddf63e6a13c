"""How a request's field is given on the command line: the option's name, the type the
option is taken as (numbers and paths as text, read by the request), its help, and the
refusal of a single-valued option given twice (the parser would keep the last alone).
Pure Python; the CLI builds its options from these."""

from __future__ import annotations

import typing
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import Field, fields
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from gpuscale.quantities import agreeing, joined

if TYPE_CHECKING:
    import click


class CommandParser(Protocol):
    """A command's parser (click's ``Command.make_parser``): ``(values, rest, parameters
    in the order given)`` of a command line."""

    def parse_args(
        self, args: list[str]
    ) -> tuple[dict[str, object], list[str], list[click.Parameter]]: ...


def given_once_each(parser: CommandParser, args: Sequence[str]) -> str:
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
        each = agreeing(len(valued), "it", "each")
        rule = f"{each} takes one value (the last would be used alone); give {each} once"
        valued = [f"{joined(valued)}: {rule}"]
    return "; ".join(valued + both)


# ``--explain`` of the commands whose answer it widens (``analyze``, ``plan``; ``advise``'s is
# its request's field), and what ``-f json`` and ``-f csv`` hold, which it does not change
EXPLAIN_HELP = "Everything behind the answer: each finding, caveat and method note."
EXPLAIN_UNUSED = {
    "json": "the document holds all it says",
    "csv": "the rows are the whole table (its sentences: -f table --explain, or -f json)",
}


def explain_unused(values: Mapping[str, object]) -> list[str]:
    """The note where a command's ``values`` give ``--explain`` beside ``-f json`` or
    ``-f csv``, whose output it does not change: said, not refused (a script may pass it
    to every command), on every command that takes both."""
    fmt = values.get("fmt")
    fmt = str(getattr(fmt, "value", fmt))
    if not values.get("explain") or fmt not in EXPLAIN_UNUSED:
        return []
    return [f"--explain changes nothing with -f {fmt}: {EXPLAIN_UNUSED[fmt]}"]


def help_of(request: object, name: str) -> str:
    """The help text of ``request``'s field ``name`` (a class or an instance)."""
    return next(f for f in fields(request) if f.name == name).metadata["help"]


def help_for(metadata: Mapping[str, object], command: str) -> str:
    """A field's help as ``command`` shows it: the command's own text where the field's
    ``each_command`` gives one (a default that differs by command: ``analyze`` reads the
    study's round, ``scores`` every bundled one), else its ``help``."""
    own = metadata.get("each_command") or {}
    assert isinstance(own, Mapping)
    return str(own.get(command, metadata["help"]))


def number_option(f: Field, hints: dict[str, object]) -> tuple[type, bool] | None:
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


def has_path(kind: object) -> bool:
    """Whether a type is, or holds, ``Path`` (``Path | None``, ``tuple[Path, ...]``)."""
    return kind is Path or any(has_path(k) for k in typing.get_args(kind))


# The type an option read as text is taken as: by whether it is repeatable.
_AS_TEXT: dict[bool, object] = {True: list[str] | None, False: str | None}


def command_line_type(f: Field, hints: dict[str, object]) -> tuple[object, str | None]:
    """The type a field's option is taken as on the command line, and what one value is
    called in the help (None: as Typer says it). Numbers and paths are taken as text, read
    by ``tables.request_text.request_of`` (a refusal in one line, as every other value's;
    Typer would read ``--out ''`` as ``.``); a repeatable option or the positional
    arguments as a list."""
    number = number_option(f, hints)
    if number:  # Typer's box said "Input should be a valid integer"
        return _AS_TEXT[number[1]], f"<{number[0].__name__}>"
    kind = f.metadata.get("cli", hints[f.name])
    each = [k for k in typing.get_args(kind) if typing.get_origin(k) in (list, tuple)]
    many = bool(each) or bool(f.metadata.get("argument"))
    if has_path(kind):
        return _AS_TEXT[many], "<path>"
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

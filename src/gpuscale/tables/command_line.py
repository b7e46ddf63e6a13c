"""How a request's field is given on the command line: the option's name, the type the
option is taken as (numbers and paths as text, read by the request), its help, and the
refusal of a single-valued option given twice (the parser would keep the last alone).
Pure Python; the CLI builds its options from these."""

from __future__ import annotations

import inspect
import os
import re
import shlex
import typing
from collections import Counter
from collections.abc import Container, Mapping, Sequence
from contextvars import ContextVar
from dataclasses import Field, fields
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from gpuscale.quantities import agreeing, joined
from gpuscale.tables.spelling import options_meant, suggested

if TYPE_CHECKING:
    import click

# The rounds the running command read not whole (``tables.views.not_whole``): it exits 1
# once it has said what it read (``cli.options.OnceEach``)
UNREAD: ContextVar[frozenset[str]] = ContextVar("UNREAD", default=frozenset())


class CommandParser(Protocol):
    """A command's parser (click's ``Command.make_parser``): ``(values, rest, parameters
    in the order given)`` of a command line."""

    ctx: click.Context

    def parse_args(
        self, args: list[str]
    ) -> tuple[dict[str, object], list[str], list[click.Parameter]]: ...


# What a value typed empty is told, whichever option or argument it is given to (``''``:
# a path read as the current folder, a name as every one, a list as its default).
EMPTY = "empty: give a value, or leave it out"
# ... and an option the command cannot run without (``plan``'s ``--accelerator``)
EMPTY_REQUIRED = "empty: give a value (it is required)"
# An option typed as a Python keyword or with ``=``: ``step_ms=10``, ``--step_ms=10``.
_KEYWORD = re.compile(r"(-{0,2})([A-Za-z_][\w-]*)=(.*)", re.DOTALL)


def refused_at_parse(parser: CommandParser, args: Sequence[str]) -> str:
    """Why a command line (``args``, read by the command's ``parser``: click's, its
    context the command's) is refused before any value is read, in one line; "" where
    nothing is, or where help is asked (:func:`help_alone`): an option typed as a keyword
    (:func:`keyword_typed`), a flag given a value (``--explain=1``), a value typed empty
    (:data:`EMPTY`, every option's and argument's alike, :data:`EMPTY_REQUIRED` for one
    the command cannot run without: its callback's ``required``, and a word where the
    command takes no argument), an option given twice (:func:`given_once_each`)."""
    required = getattr(getattr(parser.ctx.command, "callback", None), "required", ())
    params = parser.ctx.command.params
    fields = {p.name or "": p.opts for p in params if _is_option(p)}
    flags = {o for p in params if getattr(p, "is_flag", 0) for o in p.opts}  # take no value
    command = parser.ctx.command_path
    try:
        values, rest = parser.parse_args(args=list(args))[:2]
    except Exception as exc:  # `--step_ms=10`: offered with its value; `--explain=1`: alone
        typed = getattr(exc, "option_name", None)
        given = [a for a in args if typed and a.startswith(f"{typed}=")]
        if not given or _help_asked(parser, args):  # the parser's own refusal, or the help
            return ""
        return _valued_flag(parser, typed) or keyword_typed(
            given[0], fields, command, flags, unknown=True
        )
    if values.get("help"):  # help asked for: given, whatever else was typed
        return ""
    for param in params:
        value = values.get(param.name or "")
        if any(isinstance(v, str) and not v.strip() for v in _each(value)):
            name = param.opts[0] if _is_option(param) else (param.name or "").upper()
            return f"{name}: {EMPTY_REQUIRED if name in required else EMPTY}"
    if any(not word.strip() for word in rest):  # the arguments of a command that takes none
        return f"'': {EMPTY} ({command} takes no arguments)"
    words = [*rest, *(v for p in params if not _is_option(p) for v in _each(values.get(p.name)))]
    words = [] if "--" in args else words  # after `--` every word is an argument, as typed
    for word in words:
        if isinstance(word, str) and _KEYWORD.fullmatch(word) and not os.path.lexists(word):
            return keyword_typed(word, fields, command, flags)
    return given_once_each(parser, args)


def _help_asked(parser: CommandParser, args: Sequence[str]) -> str:
    """The help option typed among ``args`` (before any ``--``), "" where none is."""
    return next((a for a in _options_part(args) if a in parser.ctx.help_option_names), "")


def _options_part(args: Sequence[str]) -> list[str]:
    """The words of ``args`` before any ``--`` (after it, every word is an argument)."""
    return list(args)[: list(args).index("--")] if "--" in args else list(args)


def help_alone(parser: CommandParser, args: Sequence[str]) -> list[str]:
    """``args`` as the command reads them: the help option alone where it is typed beside a
    slip the parser refuses (``advise --step_ms=10 --help``), so that help is shown whatever
    else was typed; else ``args`` as they are."""
    if asked := _help_asked(parser, args):
        try:
            parser.parse_args(args=list(args))
        except Exception:  # a slip beside the help: the help wins
            return [asked]
    return list(args)


def _valued_flag(parser: CommandParser, typed: str) -> str:
    """The refusal of a flag (an option that takes no value, the help too) given one with
    ``=`` (``--explain=1``), naming how it is given; "" where ``typed`` is no flag."""
    if typed in parser.ctx.help_option_names:
        return f"{typed} takes no value: give {typed} alone"
    for param in parser.ctx.command.params:
        no = getattr(param, "secondary_opts", [])  # a yes/no flag's other spelling
        if not (getattr(param, "is_flag", 0) or getattr(param, "count", 0)):
            continue
        if typed in param.opts or typed in no:
            spelt = f"{param.opts[0]} or {no[0]}" if no else typed
            return f"{typed} takes no value: give {spelt} alone"
    return ""


def keyword_typed(
    word: str,
    fields: Mapping[str, Sequence[str]],
    command: str,
    flags: Container[str] = (),
    *,
    unknown: bool = False,
) -> str:
    """The refusal of an option typed as a Python keyword where an argument goes
    (``step_ms=10``: ``did you mean '--step-ms 10'?``), or ``unknown`` as an option with its
    value after ``=`` (``--step_ms=10``), the options it may mean offered with the value
    (``tables.spelling.options_meant``; one of ``flags`` alone)."""
    match = _KEYWORD.fullmatch(word)
    assert match is not None
    dashes, key, value = match.groups()
    meant = options_meant(f"{dashes}{key}" if unknown else f"--{key}", fields)
    if unknown and not meant:  # the parser's own refusal says it
        return ""
    offered = [o if o in flags or o == "--help" else f"{o} {shlex.quote(value)}" for o in meant]
    hint = suggested(offered, len(offered))
    if unknown:
        return f"{dashes}{key}: no such option of {command}{hint}; see {command} --help"
    said = hint or f", and {command} has no --{key.replace('_', '-')}"
    return f"{word}: an option is typed as --name VALUE{said}; see {command} --help"


def _is_option(param: object) -> bool:
    """Whether a command's parameter is an option the user may name (not an argument, not
    hidden)."""
    return getattr(param, "param_type_name", "") == "option" and not getattr(param, "hidden", 0)


def _each(value: object) -> tuple[object, ...]:
    """A parsed value's texts: a repeatable option's or the arguments' each, else itself."""
    return tuple(value) if isinstance(value, list | tuple) else (value,)


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
    valued, both, lists = [], [], []
    for param, times in again:
        if not param.is_flag:
            name = next((o for o in param.opts if o.startswith("--")), param.opts[0])
            valued.append(f"{name} given {'twice' if times == 2 else f'{times} times'}")
            lists += [repr(one) for one in [in_one_list(param, args, times)] if one]
        elif {*param.opts} & {*args} and {*param.secondary_opts} & {*args}:
            both.append(f"{param.opts[0]} and {param.secondary_opts[0]} both given: give one")
    if valued:
        each = agreeing(len(valued), "it", "each")
        rule = f"{each} takes one value (the last would be used alone); give {each} once"
        lists = [f" (a list in one value: {joined(lists)})"] if lists else []
        valued = [f"{joined(valued)}: {rule}{''.join(lists)}"]
    return "; ".join(valued + both)


# An option's help that says it takes a list in one value: ``Comma-separated ...``, or an
# example of three or more items (``e.g. 1,2,4``, ``a list (8,16,64)``).
_LIST_HELP = re.compile(r"comma-separated|\w+(,\w+){2,}", re.IGNORECASE)


def in_one_list(param: click.Parameter, args: Sequence[str], times: int) -> str:
    """The values ``args`` give option ``param`` (``times`` times, as parsed), as one comma
    list where its help says it takes one (``plan -n 8 -n 16``: ``-n 8,16``, the spelling
    first typed); "" for any other option, or where the values typed are not told apart
    (one typed empty; fewer or more found than parsed)."""
    if not _LIST_HELP.search(getattr(param, "help", None) or ""):
        return ""
    words, typed, values = _options_part(args), "", []
    for i, word in enumerate(words):
        name, eq, value = word.partition("=")
        if name in param.opts and eq and name.startswith("--"):
            typed, values = typed or name, [*values, value]
        elif word in param.opts and i + 1 < len(words):
            typed, values = typed or word, [*values, words[i + 1]]
        elif word[:2] in param.opts and len(word) > 2 and word[1] != "-":  # -n8
            typed, values = typed or word[:2], [*values, word[2:]]
    if len(values) != times or not all(v.strip() for v in values):
        return ""
    return f"{typed} {shlex.quote(','.join(values))}"


# ``--explain`` of the commands whose answer it widens (``analyze``, ``plan``; ``advise``'s is
# its request's field), and what ``-f json`` and ``-f csv`` hold, which it does not change
EXPLAIN_HELP = "Everything behind the answer: each finding, caveat and method note."
EXPLAIN_UNUSED = {
    "json": "the document holds all it says",
    "csv": "the rows are the whole table (its sentences: -f table --explain, or -f json)",
}
# the commands whose -f json is their rows alone (no document): --explain's sentences (how
# each column is made, the results left out) are in the table's output only
ROWS_ONLY = frozenset({"energy", "trends"})
ROWS_UNUSED = "the rows are the whole table (its sentences: -f table --explain)"


def explain_unused(values: Mapping[str, object], command: str = "") -> list[str]:
    """The note where a command's ``values`` give ``--explain`` beside ``-f json`` or
    ``-f csv``, whose output it does not change: said, not refused (a script may pass it
    to every command), on every command that takes both; where the command's JSON is its
    rows alone (``ROWS_ONLY``), only the table's output is named as holding the sentences."""
    fmt = values.get("fmt")
    fmt = str(getattr(fmt, "value", fmt))
    if not values.get("explain") or fmt not in EXPLAIN_UNUSED:
        return []
    held = ROWS_UNUSED if command in ROWS_ONLY else EXPLAIN_UNUSED[fmt]
    return [f"--explain changes nothing with -f {fmt}: {held}"]


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


def help_paragraphs(text: str) -> str:
    """A docstring as command help: each paragraph's lines joined (Typer keeps a
    docstring's line breaks, which a terminal of another width shows as ragged lines)."""
    paragraphs = inspect.cleandoc(text).split("\n\n")
    return "\n\n".join(" ".join(p.split()) for p in paragraphs)

"""A command gpuscale suggests, as it is pasted: each word shell-quoted (``shlex.quote``),
so a path or a model with a space, a quote or a ``$`` in it is one word of the command
(``gpuscale analyze --bench 'my dir/results.jsonl'``), and the whole in backticks where a
sentence holds it; a path an error or a warning names, quoted the same way
(:func:`quoted_path`). Pure Python: every layer's words use it."""

from __future__ import annotations

import os
import shlex
from os import PathLike


def command_line(*words: str | int | float | PathLike[str]) -> str:
    """``gpuscale`` and ``words``, each shell-quoted: ``command_line("analyze", "--bench",
    Path("my dir/r.jsonl"))`` -> ``gpuscale analyze --bench 'my dir/r.jsonl'``."""
    return shlex.join(["gpuscale", *(str(w) for w in words)])


def suggested_command(*words: str | int | float | PathLike[str]) -> str:
    """:func:`command_line` in backticks, as a sentence holds a command to paste."""
    return f"`{command_line(*words)}`"


def quoted_path(path: str | PathLike[str]) -> str:
    """A file or folder an error or a warning names, as a shell takes it (``shlex.quote``):
    a plain path as itself (``results/v4.1``), one with a space, a quote or a ``$`` quoted
    (``'my results'``), an empty one ``''``. Every message that names a path the user gave,
    or one made from it, names it this way: it shows where the path ends and pastes whole."""
    return shlex.quote(os.fspath(path))

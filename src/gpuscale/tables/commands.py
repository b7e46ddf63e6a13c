"""A command gpuscale suggests, as it is pasted: each word shell-quoted (``shlex.quote``),
so a path or a model with a space, a quote or a ``$`` in it is one word of the command
(``gpuscale analyze --bench 'my dir/results.jsonl'``), and the whole in backticks where a
sentence holds it. Pure Python: every layer's words use it."""

from __future__ import annotations

import shlex
from os import PathLike


def command_line(*words: str | int | float | PathLike[str]) -> str:
    """``gpuscale`` and ``words``, each shell-quoted: ``command_line("analyze", "--bench",
    Path("my dir/r.jsonl"))`` -> ``gpuscale analyze --bench 'my dir/r.jsonl'``."""
    return shlex.join(["gpuscale", *(str(w) for w in words)])


def suggested_command(*words: str | int | float | PathLike[str]) -> str:
    """:func:`command_line` in backticks, as a sentence holds a command to paste."""
    return f"`{command_line(*words)}`"

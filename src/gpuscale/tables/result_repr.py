"""How a result the Python API returns shows in a notebook: its answer in a few lines, then
the fields that hold the rest (a repr of every table and record inside would be a wall of
thousands of characters; the data stays on the object)."""

from __future__ import annotations

from collections.abc import Iterable


def result_repr(kind: str, answer: Iterable[str], looks: Iterable[str]) -> str:
    """``kind``, the answer's lines under it, then ``looks``: the attributes to read for
    the rest (``.predictions``, ``.explanation``)."""
    body = "".join(f"\n  {line}" for line in answer)
    return f"{kind}:{body}\n  fields: {', '.join(looks)}"

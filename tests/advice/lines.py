"""The lines of an advice's text a test hands to its golden file: the lines about the fact the
test guards, whole, so that a changed sentence changes a golden file and a changed fact fails."""

from __future__ import annotations

from collections.abc import Iterable


def lines_on(texts: Iterable[str], *starts: str) -> str:
    """The lines of ``texts`` that start with one of ``starts``, joined by newlines; none is
    an error (the test's fact is not said at all)."""
    found = [t for t in texts if t.startswith(starts)]
    assert found, f"no line starts with any of {starts}"
    return "\n".join(found)


def flat(text: str) -> str:
    """``text`` on one line: the command's wrapping undone."""
    return " ".join(text.split())

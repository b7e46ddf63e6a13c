"""The advice's phrasebook (``data/advice_phrases.json``): what would change a decision,
one row per change (a ``TermId``, or why the search stopped) with its short wording (the
answer's ``To change it:``) and its full one (``--explain``'s ``What would change it:``),
and the phrases the rows share; and the notes the calibration and the search give, one
template per id over the record's values (``sentence``). Renaming a remedy is one row of
the file."""

from __future__ import annotations

import json
from importlib import resources

from gpuscale.advice.explain.phrases import Phrasing
from gpuscale.advice.types import Value

PHRASES_FILE = "advice_phrases.json"
_BOOK = json.loads((resources.files("gpuscale") / "data" / PHRASES_FILE).read_text("utf-8"))
PHRASES: dict[str, str] = _BOOK["phrases"]
# the calibration's and the search's notes by id: a template, or one with its fragments
SENTENCES: dict[str, str | dict] = _BOOK["sentences"]
# the one remedy table: each change's short and full wording
REMEDIES_BY_CHANGE: dict[str, dict[str, str]] = {
    change: {view: text.format(**PHRASES) for view, text in row.items()}
    for change, row in _BOOK["remedies"].items()
}


def remedies(view: str) -> dict[str, str]:
    """Each change's remedy in ``view`` (``short`` or ``full``)."""
    return {change: row[view] for change, row in REMEDIES_BY_CHANGE.items()}


def sentence(key: str, **values: Value) -> str:
    """The note ``key`` over ``values`` (format specs: ``explain.phrases``)."""
    template = SENTENCES[key]
    return Phrasing(template if isinstance(template, dict) else {"text": template}, values).said(
        "text"
    )

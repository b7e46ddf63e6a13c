"""Findings in words: a ``types.Finding`` rendered by its kind's template
(``data/advice_findings.json``) over its values. The templates carry no arithmetic: a
finding holds every number in the unit its name says, and a placeholder's format says how
it is written (``explain.phrasebook.Phrasing``)."""

from __future__ import annotations

import json
from importlib import resources

from gpuscale.advice.explain.phrasebook import Phrasing
from gpuscale.advice.types import Finding, Value

FINDINGS_FILE = "advice_findings.json"
TEMPLATES: dict[str, dict] = json.loads(
    (resources.files("gpuscale") / "data" / FINDINGS_FILE).read_text(encoding="utf-8")
)


def said(found: object, **context: Value) -> str:
    """``found`` in words (a sentence not yet a record passes as it is); ``context``: what
    its template reads beside the finding's own values (the strategy advised)."""
    if not isinstance(found, Finding):
        return str(found)
    return Phrasing(TEMPLATES[found.kind], context | dict(found.values), said).said("text")

"""The model's refusals and notes by id: the ``model`` rows of the advice's phrasebook
(``data/advice_phrases.json``), ``str.format`` templates over values the caller gives,
each a number or a name already written in its unit. The model cannot read the phrasebook
through ``explain`` (which reads the model's records), so it reads its own rows here."""

from __future__ import annotations

import json
from importlib import resources

PHRASES_FILE = "advice_phrases.json"
_BOOK = json.loads((resources.files("gpuscale") / "data" / PHRASES_FILE).read_text("utf-8"))
MODEL_PHRASES: dict[str, str] = _BOOK["model"]


def phrase(key: str, **values: object) -> str:
    """The model's phrase ``key`` over ``values``."""
    return MODEL_PHRASES[key].format(**values)


def strategy_name(strategy: str) -> str:
    """The strategy's name, its row of the phrasebook's ``strategies`` (``zero2``: ZeRO-2)."""
    return _BOOK["strategies"][strategy]["name"]

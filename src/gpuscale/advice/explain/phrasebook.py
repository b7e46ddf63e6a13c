"""The advice's phrasebook (``data/advice_phrases.json``): one row per step term (its
name, the answer's phrase, its table column, its remedies), the collectives of each
strategy, the remedies of the changes that are no term, the inputs that can withhold a
count, and the calibration's and the search's notes. Renaming a term is one row of the
file; every view reads it here, when it speaks.

A template is written over a record's values, without arithmetic: ``{name}`` as it is,
``{name:spec}`` with a Python format spec, or with one of the advice's own ways to write
a number (``quantities``):

* ``ms`` (``format_ms``), ``ms~other`` (in the unit ``other``'s value takes), ``count``
  (``format_count``), ``num`` (``number``), ``whole`` (``number`` to every whole
  digit: ``5,962``, ``3.59``), ``apart~other`` (``fixed_apart``: to the
  digits that tell it from ``other``), ``joined`` (numbers, ``:g``, joined by ``and``),
  ``noun~word`` (the word agreeing with how many numbers), ``signed_at~other`` (each value
  a signed share at the number of ``other`` beside it), ``notes`` (sentences and findings
  joined by ``; ``), ``names`` (names by ``, ``, else ``none``), ``counted~noun``
  (``counted``: ``3 runs``), ``items~fragment`` (findings by ``, ``, else ``fragment``),
  ``above~other`` (``numbers_apart``: the value to the digits that tell it above
  ``other``), ``beside~other`` (the value as printed beside ``other`` so written);
* ``list`` (values by ``, ``), ``factor`` (``factor_interval`` of a log half-width),
  ``pct_span~other`` (the value to ``other`` as signed percentages, one where alike);
* ``pick`` (the fragment of the template keyed by the value, else by ``*``), ``opt``
  (the fragment of the template named like the value, where the value is not None; else
  nothing);
* ``shell`` (the value shell-quoted, ``shlex.quote``: a command that pastes as is),
  ``batch`` (``format_batch``), ``minutes`` (``format_minutes``), ``nums`` (numbers as
  ``number`` writes them, joined by ``and``);
* ``{fragment}``, a name no value has: the template's fragment of that name.
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Callable
from importlib import resources
from numbers import Real
from string import Formatter

from gpuscale.advice.types import Reading, Value, maybe
from gpuscale.quantities import (
    counted,
    factor_interval,
    fixed_apart,
    format_batch,
    format_count,
    format_minutes,
    format_ms,
    joined,
    noun_for,
    number,
    numbers_apart,
    span,
)

PHRASES_FILE = "advice_phrases.json"
_BOOK = json.loads((resources.files("gpuscale") / "data" / PHRASES_FILE).read_text("utf-8"))
PHRASES: dict[str, str] = _BOOK["phrases"]
TERMS: dict[str, dict[str, str]] = _BOOK["terms"]
STRATEGIES: dict[str, dict[str, str]] = _BOOK["strategies"]
CHANGES: dict[str, dict[str, str]] = _BOOK["changes"]
WITHHELD: dict[str, dict[str, str]] = _BOOK["withheld"]
# the calibration's and the search's notes by id: a template, or one with its fragments
SENTENCES: dict[str, str | dict] = _BOOK["sentences"]


def strategy_words(strategy: str) -> dict[str, str]:
    """The strategy's row: its name and the collectives its step issues."""
    return STRATEGIES.get(strategy, STRATEGIES["ddp"])


def _row(term: str) -> dict[str, str]:
    """The term's row; a term with none (``compute``) is named by its id."""
    return TERMS.get(term, {"name": term})


def term_name(term: str) -> str:
    """The term's name (``bandwidth``)."""
    return _row(term)["name"]


def term_says(term: str, strategy: str = "ddp") -> str:
    """The answer's phrase of ``term`` under ``strategy``."""
    row = TERMS[term]
    return row["says"].format(**{**strategy_words(strategy), "name": row["name"]})


def term_subject(term: str) -> str:
    """``the bandwidth term``: ``term`` as --explain names it."""
    row = _row(term)
    return row.get("subject", "the {name} term").format(name=row["name"])


def remedy(change: str, view: str, strategy: str = "ddp", **values: object) -> str:
    """What would change a decision whose ``change`` is a term or why the search stopped,
    in ``view`` (``short``: the answer's; ``full``: --explain's, over ``values``)."""
    row = TERMS.get(change) or CHANGES[change]
    return row[view].format(**PHRASES, **strategy_words(strategy), **values)


def withheld_value(r: Reading) -> str:
    """The withholding term's value at one end of its range, with what it is."""
    return sentence_of({"text": WITHHELD[r.term]["value"]}, value=r.value)


def sentence(key: str, **values: Value) -> str:
    """The note ``key`` over ``values``."""
    template = SENTENCES[key]
    return sentence_of(template if isinstance(template, dict) else {"text": template}, **values)


def sentence_of(template: dict, **values: Value) -> str:
    """A template's ``text`` over ``values``."""
    return Phrasing(template, values).said("text")


def _floats(value: object) -> tuple[float, ...]:
    if not isinstance(value, tuple):
        raise TypeError(f"{value!r} is not numbers")
    return value


def _float(value: object) -> float:
    if not isinstance(value, Real):  # numpy's numbers too
        raise TypeError(f"{value!r} is not a number")
    return float(value)


class Phrasing(Formatter):
    """The fragments of one template (``text`` and those it names) over ``values``."""

    def __init__(
        self, template: dict, values: dict[str, Value], said: Callable[[object], str] = str
    ) -> None:
        self.template = template
        self.values = values
        self.nested = said  # how a sentence or finding among the values is said

    def said(self, key: str) -> str:
        return self.format(self.template[key], **self.values)

    def get_value(self, key: int | str, args: object, kwargs: dict[str, object]) -> object:
        if isinstance(key, str) and key not in kwargs and key in self.template:
            return self.format(self.template[key], **self.values)  # a fragment, said whole
        return super().get_value(key, args, kwargs)  # type: ignore[arg-type]

    def format_field(self, value: object, format_spec: str) -> str:
        kind, _, other = format_spec.partition("~")
        of = self.values.get(other)
        if kind == "ms":
            return format_ms(_float(value), maybe(_float, of))
        if kind == "count":
            return format_count(_float(value))
        if kind == "num":
            return number(value)
        if kind == "whole":  # every whole digit, at least three significant: 5,962, 0.449
            return number(value, max(3, len(f"{abs(_float(value)):.0f}")))
        if kind == "apart":
            return fixed_apart(_float(value), _float(of))
        if kind == "above":
            return numbers_apart(_float(value), _float(of))[0]
        if kind == "beside":
            return numbers_apart(_float(of), _float(value))[1]
        if kind == "joined":
            return joined(f"{b:g}" for b in _floats(value))
        if kind == "noun":
            return noun_for(len(_floats(value)), other)
        if kind == "signed_at":
            at = zip(_floats(of), _floats(value), strict=True)
            return ", ".join(f"{e:+.0%} at {b:g}" for b, e in at)
        if kind == "counted":
            return counted(int(_float(value)), other)
        if kind == "factor":
            return factor_interval(_float(value))
        if kind == "pct_span":  # ``-12% to +30%``, one value where both ends read alike
            return span(f"{_float(value):+.0%}", f"{_float(of):+.0%}", " to ")
        if kind == "list":
            return ", ".join(map(str, value))  # type: ignore[call-overload]
        if kind == "names":
            return ", ".join(map(str, value)) or "none"  # type: ignore[call-overload]
        if kind == "items":  # findings by ``, ``; ``other``'s fragment where none
            said = ", ".join(map(self.nested, value))  # type: ignore[call-overload]
            return said or self.format(self.template[other], **self.values)
        if kind == "notes":
            return "; ".join(map(self.nested, value))  # type: ignore[call-overload]
        if kind == "pick":  # the fragment keyed by the value, else the one keyed "*"
            fragments = self.template[other]
            return self.format(fragments.get(str(value), fragments.get("*")), **self.values)
        if kind == "batch":
            return format_batch(_float(value))
        if kind == "minutes":
            return format_minutes(_float(value))
        if kind == "nums":
            return joined([number(v) for v in _floats(value)])
        if kind == "shell":
            return shlex.quote(str(value))
        if kind == "opt":
            return "" if value is None else self.format(self.template[other], **self.values)
        return super().format_field(value, format_spec)

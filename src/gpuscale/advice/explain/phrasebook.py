"""The advice's phrasebook (``data/advice_phrases.json``: one row per step term, the
strategies' collectives, the remedies, the sentences) and the finding templates
(``data/advice_findings.json``). Renaming a term is one row of the file.

A template is written over a record's values, without arithmetic: ``{name}`` as it is
(``{d.focus.step_ms}``: a record's field, ``{row[speedup]}``: a row's or a dict's item,
``{terms[bandwidth][name]}``: the phrasebook's term rows), ``{name:spec}`` with a Python
format spec or a kind of :data:`KINDS` (``kind~other``: ``other`` names a second value, as
a template names it, or a fragment of the template), ``{fragment}`` (a name no value has)
the template's fragment of that name, else the one every template shares (``phrases``).

A request's field is named as its reader names it (``tables.refusals.ref``): ``{--samples}``
is ``--samples`` on the command line and ``samples=`` in Python; with a value, its name and
spec after a colon (``{--strategy:run.strategy}``, ``{--samples:samples~count}``: the option
takes it as the spec writes it) or ``=`` and the value itself (``{--scaling:=weak}``). The
reader is the spelling in force (:func:`spelled_as`): the command line's unless a Python
advice's words are being made. A command to paste (in backticks) is the shell's in both."""

from __future__ import annotations

import math
import shlex
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from itertools import groupby
from numbers import Real
from string import Formatter

import pandas as pd

from gpuscale.advice.request_fields import RequestFields
from gpuscale.advice.types import FINDINGS, Finding, Measure, Reading, Value, maybe, read_data
from gpuscale.analysis.bench_sentences import speedup_over
from gpuscale.plausibility import remedies
from gpuscale.quantities import (
    article,
    counted,
    ends_alike,
    factor_interval,
    format_batch,
    format_bytes,
    format_count,
    format_minutes,
    format_ms,
    format_ms_span,
    joined,
    noun_for,
    number,
    numbers_apart,
    of_the,
    share_text,
    span,
    with_article,
)
from gpuscale.tables.refusals import SPELLING, as_keywords, as_options, given_as, ref
from gpuscale.tables.request_text import option_names

PHRASES_FILE = "advice_phrases.json"
_BOOK = read_data(PHRASES_FILE)
PHRASES: dict[str, str | dict] = _BOOK["phrases"]  # the fragments every template shares
TERMS: dict[str, dict[str, str]] = _BOOK["terms"]
TABLE: dict = _BOOK["table"]  # the terminal's columns, what it drops first, the formats
STRATEGIES: dict[str, dict[str, str]] = _BOOK["strategies"]
CHANGES: dict[str, dict[str, str]] = _BOOK["changes"]
WITHHELD: dict[str, dict[str, str]] = _BOOK["withheld"]
MODEL: dict[str, str] = _BOOK["model"]  # the model's own phrases (``model.priors.phrase``)
# the sentences by id: a template, or one with its fragments
SENTENCES: dict[str, str | dict] = _BOOK["sentences"]


# The options of ``gpuscale advise`` not spelt as their fields (``--price``: the field
# price_per_device_hour, as plan's)
OPTIONS = option_names(RequestFields)


def as_advise_options(text: str) -> str:
    """``text`` with each field named as ``gpuscale advise``'s option that gives it."""
    return as_options(text, OPTIONS)


@contextmanager
def spelled_as(keywords: bool) -> Iterator[None]:
    """The words made inside name a request's fields (``tables.refusals.SPELLING``) as
    Python's keywords where ``keywords``, else as ``gpuscale advise``'s options."""
    token = SPELLING.set(as_keywords if keywords else as_advise_options)
    try:
        yield
    finally:
        SPELLING.reset(token)


def _spelling() -> Callable[[str], str]:
    """The spelling in force: ``gpuscale advise``'s options where none is set."""
    return SPELLING.get() or as_advise_options


def strategy_words(strategy: str) -> dict[str, str]:
    """The strategy's row: its name and the collectives its step issues."""
    return STRATEGIES.get(strategy, STRATEGIES["ddp"])


def term_words(term: str, form: str = "name", strategy: str = "ddp", **values: object) -> str:
    """A step term's row (or a change that is no term's: why the search stopped, the cap) as
    ``form`` says it, under ``strategy``: ``name`` (``bandwidth``; a term with no row, such as
    ``compute``, is its id), ``says`` (the answer's), ``subject`` (--explain's, ``the
    bandwidth term``), or what would change a decision it decides, ``short`` (the answer's)
    or ``full`` (--explain's, over ``values``)."""
    row = {"name": term, "subject": "the {name} term", **(TERMS.get(term) or CHANGES.get(term, {}))}
    said = {**strategy_words(strategy), "strategy": strategy, **values, "name": row["name"]}
    return Phrasing(row, said).said(form)


def reading(r: Reading, speedup: bool = False) -> str:
    """``at <the withholding term's value at one end of its range>, 4 devices``, with the
    speedup read there where ``speedup``."""
    return sentence("reading", value=reading_value(r), r=r, speedup=speedup)


def reading_value(r: Reading) -> str:
    """The assumed term's value at one end of its range (``pcie-sys, 10 GB/s at 25 us``)."""
    return Phrasing({"text": WITHHELD[r.term]["value"]}, {"value": r.value, "r": r}).said("text")


def withheld_words(term: str, form: str) -> str:
    """How a withheld count's moving ``term`` is settled, in ``form`` (``settle``, ``short``),
    its options named as the spelling in force names them."""
    return Phrasing({"text": WITHHELD[term][form]}, {}).said("text")


def sentence(key: str, **values: object) -> str:
    """The sentence ``key`` over ``values`` (numbers, or records whose fields it reads)."""
    template = SENTENCES[key]
    if isinstance(template, str):
        template = {"text": template}
    return Phrasing(template, values, said).said("text")


def first_case(cases: dict[str, object]) -> str:
    """The first of ``cases`` (a template's fragments, in order) whose condition holds."""
    return next(case for case, holds in cases.items() if holds)


def speedup_interval(low: float, high: float) -> str:
    """``0.652-1.07x, 80% interval``, or ``one run: no interval`` where there is none (NaN)."""
    one = pd.isna(low) or pd.isna(high)  # a row resting on a single run
    return sentence("speedup_interval", one=one, low=low, high=high)


def _floats(value: object) -> tuple[float, ...]:
    if not isinstance(value, tuple):
        raise TypeError(f"{value!r} is not numbers")
    return value


def _texts(value: object) -> tuple[str, ...]:
    if not isinstance(value, tuple):  # a text alone would be said letter by letter
        raise TypeError(f"{value!r} is not a tuple of words")
    return tuple(map(str, value))


def _float(value: object) -> float:
    if not isinstance(value, Real):  # numpy's numbers too
        raise TypeError(f"{value!r} is not a number")
    return float(value)


def _signed_at(value: object, at: object) -> str:
    pairs = zip(_floats(at), _floats(value), strict=True)
    return ", ".join(f"{e:+.0%} at {b:g}" for b, e in pairs)


def _ms_at(value: object, at: object) -> str:
    steps_ms = _floats(value)
    pairs = zip(_floats(at), steps_ms, strict=True)
    return ", ".join(f"{format_ms(ms, max(steps_ms))} at batch {b:g}" for b, ms in pairs)


def _spans(value: object, of: object) -> str:
    """``1, 2, 4, 5-7``: each run of three or more consecutive counts its ends."""
    found: list[str] = []
    for _, run in groupby(enumerate(int(n) for n in _floats(value)), lambda at: at[1] - at[0]):
        seen = [c for _, c in run]
        found += [f"{seen[0]}-{seen[-1]}"] if len(seen) > 2 else list(map(str, seen))
    return ", ".join(found)


# The advice's own ways to write a value (``quantities``), by a placeholder's format
# ``kind~other``: each over the value and ``other``'s value.
KINDS: dict[str, Callable[[object, object], str]] = {
    "ms": lambda v, of: format_ms(_float(v), maybe(_float, of)),  # in the unit ``of``'s takes
    "ms_span": lambda v, of: format_ms_span(_float(v), _float(of)),  # v to of, unit once
    "count": lambda v, of: format_count(_float(v)),
    "num": lambda v, of: number(v),
    # a value beside an interval, to the figures of its ends (1.70x, 1.26-2.00x)
    "num_at": lambda v, of: ends_alike(v, v)[0],
    "num_to": lambda v, of: span(number(v), number(of)),  # 10-24, one value where alike
    # every whole digit, at least three significant: 5,962, 0.449
    "whole": lambda v, of: number(v, max(3, len(f"{abs(_float(v)):.0f}"))),
    "above": lambda v, of: numbers_apart(_float(v), _float(of))[0],  # the digits: above of
    "beside": lambda v, of: numbers_apart(_float(of), _float(v))[1],  # as printed beside of
    # counts, batches or names, numbers whole with thousands separators (1,000,000, not 1e+06)
    "joined": lambda v, of: joined(map(number, v)),  # type: ignore[call-overload]
    # values beside an interval (measured speedups), each as ``num_at`` writes it
    "joined_at": lambda v, of: joined(ends_alike(x, x)[0] for x in v),  # type: ignore[attr-defined]
    "either": lambda v, of: joined(map(str, v), "or"),  # type: ignore[call-overload]
    "signed_at": _signed_at,  # each value a signed share at the number of ``of`` beside it
    "ms_at": _ms_at,  # each value ms (in the unit the largest takes) at the batch of ``of``
    "factor": lambda v, of: factor_interval(_float(v)),  # of a log half-width
    "ratio": lambda v, of: "infinity" if _float(v) == math.inf else number(v),
    # an interval's ends, each to the other's decimals (0.157-0.190x), one value where alike
    "num_span": lambda v, of: span(*ends_alike(v, of)),
    # ``-12% to +30%``, one value where both ends read alike
    "pct_span": lambda v, of: span(f"{_float(v):+.0%}", f"{_float(of):+.0%}", " to "),
    "g_list": lambda v, of: ", ".join(f"{x:g}" for x in _floats(v)),  # 8, 16, 32
    "bytes": lambda v, of: joined(map(format_bytes, _floats(v))),  # 512 KiB and 1 MiB
    "spans": _spans,
    # flag kinds' remedies (plausibility.REMEDIES); kinds it does not know: their flags' own
    "remedies": lambda v, of: "; ".join(remedies(v)) or "bench again as the flags say",  # type: ignore[arg-type]
    "batch": lambda v, of: format_batch(_float(v)),
    "minutes": lambda v, of: format_minutes(_float(v)),
    "shell": lambda v, of: shlex.quote(str(v)),  # a command that pastes as it is
    "basis": lambda v, of: speedup_over(*_texts(v)),  # the one-device steps a speedup is over
    "file": lambda v, of: shlex.quote(str(v)) if v else "the bench results",  # as pasted
    "a": lambda v, of: f"{article(str(v))} {v}",  # an H100, a B200
    "a_count": lambda v, of: with_article(format_count(_float(v))),  # a 7M, an 8.03B
    "strategy": lambda v, of: strategy_words(str(v))["name"],  # zero2: ZeRO-2
    "config": lambda v, of: sentence("config", c=v),  # a row's or a record's count and batch
    "devices": lambda v, of: f"{joined(v)} {noun_for(v[-1], 'device')}",  # type: ignore[index]
    "upper": lambda v, of: str(v)[:1].upper() + str(v)[1:],  # a sentence's first word
    "lower": lambda v, of: str(v)[:1].lower() + str(v)[1:],  # a name inside a sentence
    # the speedup interval of a row or a record (its ``speedup_low`` and ``speedup_high``)
    "interval": lambda v, of: speedup_interval(v.speedup_low, v.speedup_high),  # type: ignore[attr-defined]
}


# Sentences and findings run together by ``kind``: by ``, `` (``list``; ``items~fragment``:
# the fragment where there are none), by ``; `` (``notes``) or ``. `` (``sentences``), a
# measure's parts (``words``).
JOINS = {"list": ", ", "items": ", ", "notes": "; ", "sentences": ". ", "words": ""}


@dataclass(frozen=True, slots=True)
class _Field:
    """A request's field a template names (``{--samples}``): its Python name."""

    field: str


class Phrasing(Formatter):
    """The fragments of one template (``text`` and those it names) over ``values``; the
    kinds that read the template itself: ``noun~word`` (the word agreeing with how many
    values), ``counted~noun`` (``3 runs``), ``of_the~whole~noun`` (``1 of the 3 runs``: the
    value of ``whole``, in ``noun``), :data:`JOINS`, ``listed`` (as a sentence lists them:
    ``a, b and c``), ``pick~fragments`` (the one keyed by the value, a tuple's by
    how many it holds, else by ``*``), ``opt~fragment`` (the fragment where the value is not
    None)."""

    def __init__(
        self, template: dict, values: dict[str, object], said: Callable[[object], str] = str
    ) -> None:
        self.template = {**PHRASES, **template}
        self.values = {"terms": TERMS, **values}
        self.nested = said  # how a sentence or finding among the values is said

    def said(self, key: str) -> str:
        return self.format(self.template[key], **self.values)

    def _named(self, name: str) -> object:
        """The value ``name`` names (``at.step_ms``); None where none does."""
        try:
            return self.get_field(name, (), self.values)[0]
        except (KeyError, AttributeError):
            return None

    def get_value(self, key: int | str, args: object, kwargs: dict[str, object]) -> object:
        if isinstance(key, str) and key.startswith("--"):  # a request's field, named
            return _Field(key[2:].replace("-", "_"))
        if isinstance(key, str) and key not in kwargs and key in self.template:
            return self.said(key)  # a fragment, said whole
        return super().get_value(key, args, kwargs)  # type: ignore[arg-type]

    def _field(self, field: str, spec: str) -> str:
        """``field`` named as the spelling in force names it (``ref``: a refusal's fields
        among the values stay named for the refusal to spell), with the value ``spec``
        gives: none, ``=value``, or a value's name and how the option takes it
        (``samples~count``: 10M; in Python its number, a text as written)."""
        named = ref(field)
        if spec.startswith("="):
            named = ref(field, given_as(spec[1:]))
        elif spec:
            name, _, how = spec.partition("~")
            value = self._named(name)
            typed = self.format_field(value, how)
            named = ref(field, value if isinstance(value, Real) else typed, typed=typed)
        return _spelling()(named)

    def format_field(self, value: object, format_spec: str) -> str:
        if isinstance(value, _Field):
            return self._field(value.field, format_spec)
        if isinstance(value, Finding) and not format_spec:
            return self.nested(value)
        if isinstance(value, Measure) and format_spec in ("", "words"):  # its parts in turn
            return "".join(map(self.nested, value.parts()))
        kind, _, other = format_spec.partition("~")
        if kind in KINDS:
            return KINDS[kind](value, self._named(other))
        if kind == "noun":
            return noun_for(len(_floats(value)), other)
        if kind == "of_the":  # ``1 of the 3 runs``: ``of_the~whole~noun``, whole a value's name
            whole, _, noun = other.partition("~")
            return of_the(int(_float(value)), int(_float(self._named(whole))), noun)
        if kind in JOINS:  # none: the fragment ``other`` (``items~none``)
            said = JOINS[kind].join(map(self.nested, value))  # type: ignore[call-overload]
            return said or (other and self.said(other))
        if kind == "counted":  # a number, or how many items
            many = len(value) if isinstance(value, tuple) else _float(value)
            return counted(int(many), other)
        if kind == "listed":  # sentences and findings as a sentence lists them
            return joined(map(self.nested, value))  # type: ignore[call-overload]
        if kind == "pick":  # a tuple keyed by how many it holds (``1``: one run)
            fragments, key = self.template[other], len(value) if isinstance(value, tuple) else value
            return self.format(fragments.get(str(key), fragments.get("*")), **self.values)
        if kind == "opt":
            return "" if value is None else self.said(other)
        if format_spec.endswith("%") and not format_spec.startswith("+"):  # as the table
            return share_text(value, format_spec)  # an efficiency of 0.15%: 0.1%, not 0%
        return super().format_field(value, format_spec)


def said(found: object, **context: Value) -> str:
    """``found`` in words (a sentence not yet a record passes as it is); ``context``: what
    its template reads beside the finding's own values (the strategy advised)."""
    if not isinstance(found, Finding):
        return str(found)
    return Phrasing(FINDINGS[found.kind], context | dict(found.values), said).said("text")


def measured(how: Measure, short: bool = False) -> str:
    """How to measure a term in words (``short``: up to its bench run's command)."""
    return "".join(map(said, how.parts(short)))

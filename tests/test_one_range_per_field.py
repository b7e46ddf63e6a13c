"""One range per numeric field of an advice and a plan request, said one way: a value past
it is refused by that range however it came (Python's number, the command line's text;
``0`` and ``1e20`` samples, ``1e400`` and ``nan`` alike: ``--samples 0`` was told a size's
range, ``--samples 1e20`` the field's), naming the field; the range's bounds are taken."""

from __future__ import annotations

import math
import typing
from collections.abc import Callable
from dataclasses import fields

import pytest

from gpuscale.advice.request import AdviceRequest
from gpuscale.advice.request_fields import RANGES as ADVICE_RANGES
from gpuscale.planning.request import RANGES as PLAN_RANGES
from gpuscale.planning.request import PlanRequest
from gpuscale.tables.command_line import number_option
from gpuscale.tables.refusals import FieldError, Range
from gpuscale.tables.request_text import request_of

PLANNED = {"workload": "bert", "accelerator": "H100"}
CASES = [
    *((AdviceRequest, name, within, {}) for name, within in ADVICE_RANGES.items()),
    *((PlanRequest, name, within, PLANNED) for name, within in PLAN_RANGES.items()),
]


def _refused(make: Callable[[], object]) -> FieldError:
    with pytest.raises(FieldError) as refused:
        make()
    return refused.value


def _text(kind: type, name: str, text: str) -> object:
    """``text`` as the command line hands it to the request (a repeatable option: a list)."""
    f = next(f for f in fields(kind) if f.name == name)  # type: ignore[arg-type]
    number = number_option(f, typing.get_type_hints(kind))
    return [text] if number and number[1] else text


@pytest.mark.parametrize(
    ("kind", "name", "within", "base"), CASES, ids=[f"{c[0].__name__}.{c[1]}" for c in CASES]
)
def test_a_field_is_told_its_one_range_however_the_value_came(
    kind: type, name: str, within: Range, base: dict[str, str]
) -> None:
    low, high, open_low = within
    past = [low - 1, high * 10, math.inf, math.nan]
    said = [_refused(lambda v=v: kind(**base, **{name: v})) for v in past]
    typed = [repr(low - 1), repr(high * 10), "1e400", "nan", "0" if low > 0 else "-1"]
    said += [
        _refused(lambda t=t: request_of(kind, {name: _text(kind, name, t)}, **base)) for t in typed
    ]
    assert {(e.field, e.rule) for e in said} == {(name, said[0].rule)}
    for bound in (high,) if open_low else (low, high):  # the bounds themselves are taken
        try:
            kind(**base, **{name: bound})
        except FieldError as other:  # another check of the request (a field given alone)
            assert other.field != name, other


@pytest.mark.parametrize(
    ("advised", "planned", "value"),
    [("price_per_device_hour", "price_per_device_hour", -1), ("power_w", "power_w", 0)],
)
def test_a_price_and_a_power_are_refused_alike_by_advise_and_plan(
    advised: str, planned: str, value: float
) -> None:
    """``--price`` and ``--power-w`` are one option of both commands: one range each."""
    by_advise = _refused(lambda: AdviceRequest(**{advised: value}))
    by_plan = _refused(lambda: PlanRequest(**PLANNED, **{planned: value}))
    assert ADVICE_RANGES[advised] == PLAN_RANGES[planned]
    assert (by_advise.field, by_plan.field, by_advise.rule) == (advised, planned, by_plan.rule)

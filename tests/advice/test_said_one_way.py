"""A new user's walk (round c14): the same thing written two ways. The fixed cost's range
was "2 ms (1 ms-2 ms)" in ``-f json``'s ``said`` and "2 ms (range 1 ms-2 ms)" in
``--explain``; "To settle it:" dropped the backticks and ``--batch B`` that the fixed
cost's own measurement keeps; a link given by its numbers was titled "on custom"."""

from __future__ import annotations

import re

import gpuscale
from gpuscale.advice.explain.answer import change_line
from gpuscale.advice.explain.document import advice_view
from gpuscale.advice.types import TermId
from gpuscale.quantities import format_ms, number

# by numbers, one step time: the fixed cost assumed, its range moving the count
WITHHELD = {"params": 7e6, "step_ms": 2, "batch": 64, "global_batch": 1000}


def test_the_fixed_cost_and_its_range_are_written_as_json_says_them() -> None:
    advice = gpuscale.advise(**WITHHELD)
    fixed = next(a for a in advice.assumptions if a.term == TermId.FIXED)
    q = fixed.quantity
    assert q is not None and q.low is not None and q.high is not None and q.low < q.high
    span = f"{format_ms(q.low, q.high)}-{format_ms(q.high)}"
    text = "\n".join(advice.explanation)
    written = re.findall(rf"(\S+ \S+ \((?:\w+ )?){re.escape(span)}\)", text)
    assert written  # the premise: --explain writes the range
    assert {w + span + ")" for w in written} == {fixed.value}


def test_to_settle_it_gives_the_fixed_cost_measurement_as_the_assumption_does() -> None:
    advice = gpuscale.advise(**WITHHELD)
    assert advice.decision.withheld_by == "fixed_cost"  # the premise
    fixed = next(a for a in advice.assumptions if a.term == TermId.FIXED)
    assert fixed.measure.short() in change_line(advice)


def test_a_custom_link_is_titled_by_its_numbers() -> None:
    advice = gpuscale.advise(params=7e6, step_ms=2, batch=64, busbw_gbs=50, max_devices=8)
    link = advice.calibration.machine.network.intra
    assert link.name == "custom"  # the premise: the link's name says nothing of it
    title = advice_view(advice, terminal=True).title
    assert f"{number(link.busbw_gbs)} GB/s" in title and f"{number(link.latency_us)} us" in title
    assert not title.endswith(link.name)

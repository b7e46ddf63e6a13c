"""Ranges as the answer says them: the ends of an assumed term's range only where they
differ from the value assumed (a 100M-parameter model with no link given or device named:
pcie-phb, 10 GB/s, assumed; the link's range 10-24 GB/s), an interval too wide to test
said so."""

from __future__ import annotations

from pathlib import Path

import gpuscale
from gpuscale.advice.explain.answer import decision_line, readings_apart
from gpuscale.advice.types import TermId
from gpuscale.tables.advice import TOO_WIDE_TO_TEST

HERE = Path(__file__).parent


def test_an_end_at_the_value_assumed_is_not_said_as_an_alternative() -> None:
    advice = gpuscale.advise(params=100e6, step_ms=200, batch=32)
    d = advice.decision
    assert d.withheld_by == "link"
    (link,) = [a for a in advice.assumptions if a.term == TermId.LINK]
    assert link.quantity is not None
    ends = [r for r in d.readings if r.term == "link"]
    assert link.quantity.value in {r.value for r in ends}  # the low end is pcie-phb's own
    apart = readings_apart(d, advice.assumptions)
    assert apart and all(r.value != link.quantity.value for r in apart)
    assert {r.value for r in apart} == {r.value for r in ends} - {link.quantity.value}


def test_an_interval_too_wide_to_test_is_said_so_in_the_short_answer() -> None:
    """README's CPU quickstart file: the 2-device row's interval spans a factor of over 100
    (``TOO_WIDE_TO_TEST``: 4); the answer's decision says it is too wide."""
    advice = gpuscale.advise(bench=str(HERE / "cpu_tiny_model_gloo.jsonl"))
    two = advice.predictions.set_index("accelerators").loc[2]
    assert two["speedup_high"] / two["speedup_low"] > TOO_WIDE_TO_TEST
    assert "too wide" in decision_line(advice)

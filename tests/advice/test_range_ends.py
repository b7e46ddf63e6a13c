"""The ends of an assumed term's range, said only where they differ from the value
assumed: a 100M-parameter model with no link given or device named (pcie-phb, 10 GB/s,
assumed; the link's range 10-24 GB/s)."""

from __future__ import annotations

import gpuscale
from gpuscale.advice.explain.answer import readings_apart
from gpuscale.advice.types import TermId


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

"""An assumption's words are a view of its record: the range its value finding is said with
is the range its quantity holds (``-f json``'s ``low`` and ``high``), in the quantity's unit."""

from __future__ import annotations

from pathlib import Path

from gpuscale.advice.api import advise_by_keywords
from gpuscale.advice.records import Assumption
from gpuscale.advice.types import Finding, Source, TermId


def _term(term: TermId, **fields: object) -> Assumption:
    (found,) = (a for a in advise_by_keywords(**fields).assumptions if a.term == term)
    return found


def _said_range(found: Assumption) -> tuple[object, object]:
    assert isinstance(found.value, Finding) and found.quantity is not None
    return found.value["low"], found.value["high"]


def test_the_flops_range_said_is_the_records() -> None:
    found = _term(
        TermId.FLOPS,
        params=7e9,
        strategy="zero2",
        step_ms=500,
        batch=64,
        max_devices=16,
        interconnect="nvlink4",
    )
    assert found.quantity is not None
    assert found.quantity.low == 6 * 7e9  # the low end priced: 6 x parameters
    assert _said_range(found) == (found.quantity.low, found.quantity.high)


def test_ddp_work_range_said_is_the_records_with_the_copies() -> None:
    found = _term(TermId.DDP, params=7e6, step_ms=2, batch=64, interconnect="pcie-phb")
    assert found.quantity is not None and found.quantity.copies_ms
    assert found.quantity.unit == "ms per step"
    assert _said_range(found) == (found.quantity.low, found.quantity.high)


def test_the_assumed_links_range_said_is_the_records() -> None:
    found = _term(TermId.LINK, params=7e6, step_ms=2, batch=64)
    assert found.quantity is not None and found.quantity.low is not None
    assert found.quantity.low < found.quantity.high  # type: ignore[operator]
    assert _said_range(found) == (found.quantity.low, found.quantity.high)


def test_cpu_processes_link_is_an_assumption_record() -> None:
    bench = Path(__file__).parent / "cpu_tiny_model_gloo.jsonl"
    found = _term(TermId.LINK, bench=str(bench))
    assert found.source == Source.ASSUMED and found.quantity is not None
    assert isinstance(found.value, Finding)
    # the figures the steps price: the quantity and the value said
    assert found.quantity.value == found.value["busbw_gbs"] == 10.0
    assert found.quantity.unit == "GB/s bus bandwidth"
    assert found.value["latency_us"] == 20.0

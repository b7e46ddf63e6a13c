"""``-f json`` as one serialisation of the records (``explain.document.plain``): a field added
to a record is in the document with no second edit, and a choice (no quantity) keeps the
number's keys, as null."""

from __future__ import annotations

import json
from dataclasses import make_dataclass
from pathlib import Path

from gpuscale.advice.explain.as_json import plain
from gpuscale.advice.records import Assumption
from gpuscale.advice.types import MeasuredCount, Source, TermId

from ..builders import measured_count

GOLDEN = Path(__file__).parent / "golden" / "bench_cpu_tiny_model_gloo.json"


def test_a_field_added_to_a_record_is_in_the_json() -> None:
    (measured,) = json.loads(GOLDEN.read_text())["measured"]
    assert set(plain(measured_count())) == set(measured)
    grown = make_dataclass(
        "MeasuredCount", [("spread_ms", float)], bases=(MeasuredCount,), frozen=True
    )
    found = plain(measured_count(grown, spread_ms=0.25))
    assert set(found) == {*measured, "spread_ms"} and found["spread_ms"] == 0.25
    assert found["trusted_runs"] == [1.5]  # derived: the trusted runs' speedups


def test_a_choice_without_a_quantity_keeps_the_number_keys_as_null() -> None:
    choice = Assumption(
        term=TermId.LINK_CLASS, value="nvlink", source=Source.ASSUMED, basis="a preset"
    )
    found = plain(choice)
    assert {k: found[k] for k in ("value", "low", "high", "unit")} == dict.fromkeys(
        ("value", "low", "high", "unit")
    )
    assert (found["term"], found["said"], found["kind"], found["source"]) == (
        "Link class",
        "nvlink",
        "link_class",
        "assumed",
    )
    assert "strategy" not in found and found["measure"] == ""

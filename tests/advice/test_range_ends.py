"""Ranges as the answer says them: the ends of an assumed term's range only where they
differ from what was assumed (a 100M-parameter model with no link given or device named:
pcie-phb, 10 GB/s at 20 us, assumed; the link's range pcie-sys, 10 GB/s at 25 us, to
pcie4-x16, 24 GB/s), an interval too wide to test said so."""

from __future__ import annotations

from pathlib import Path

import pytest

import gpuscale
from gpuscale.advice.explain.answer import decision_line, readings_apart
from gpuscale.advice.types import TermId
from gpuscale.tables.advice import TOO_WIDE_TO_TEST

HERE = Path(__file__).parent


def test_an_end_is_an_alternative_where_it_differs_from_what_was_assumed() -> None:
    """The link's low end, pcie-sys, has the assumed pcie-phb's 10 GB/s at a longer latency:
    an alternative, said by its preset (it was taken for pcie-phb's own and left out); an
    end that is the link assumed would not be."""
    advice = gpuscale.advise(params=100e6, step_ms=200, batch=32)
    d = advice.decision
    assert d.withheld_by == "link"
    (assumed,) = [a for a in advice.assumptions if a.term == TermId.LINK]
    link = advice.calibration.machine.network.intra
    assert assumed.quantity is not None and assumed.quantity.value == link.busbw_gbs
    ends = [r for r in d.readings if r.term == "link"]
    assert link.busbw_gbs in {r.value for r in ends}  # an end at the bandwidth assumed
    apart = readings_apart(advice)
    assert apart == [r for r in ends if r.preset != link.name] and apart
    assert all((r.value, r.latency_us) != (link.busbw_gbs, link.latency_us) for r in apart)


def test_an_interval_too_wide_to_test_is_said_so_in_the_short_answer() -> None:
    """README's CPU quickstart file: the 2-device row's interval spans a factor of over 100
    (``TOO_WIDE_TO_TEST``: 4); the answer's decision says it is too wide."""
    advice = gpuscale.advise(bench=str(HERE / "cpu_tiny_model_gloo.jsonl"))
    two = advice.predictions.set_index("accelerators").loc[2]
    assert two["speedup_high"] / two["speedup_low"] > TOO_WIDE_TO_TEST
    assert "too wide" in decision_line(advice)


def test_a_reading_of_an_assumed_term_has_its_assumptions_unit() -> None:
    """Each end read of an assumed term's range is in the unit its assumption is (the FLOPs
    per sample as ``assumptions`` gives them, not bare FLOPs)."""
    advice = gpuscale.advise(params=7e9, step_ms=900, batch=4, device_name="H100")
    units = {a.term.value: a.quantity.unit for a in advice.assumptions if a.quantity}
    flops = [r for r in advice.decision.readings if r.term == TermId.FLOPS.value]
    assert flops and all(r.unit == units[TermId.FLOPS.value] for r in flops)


@pytest.mark.parametrize(("params", "fewest"), [(340e6, 1), (7e9, 2), (13e9, 4)])
def test_an_end_reads_its_count_as_the_advised_count_is(params: float, fewest: int) -> None:
    """The count read at each end is chosen as the advised one is: its speedup's 80% interval
    above that of the fewest devices that hold the model (1 device's 1x where one holds it),
    so a count below 1x is read at an end only where it is that fewest (memory forces it:
    13B with ZeRO-2 at pcie-sys, 4 devices at 0.30x, fewer cannot hold it)."""
    asked = {"step_ms": 600, "batch": 48, "flops_per_sample": 1e12, "fixed_ms": 4}
    advice = gpuscale.advise(params=params, **asked, scaling="weak", device_name="H100")
    memory, strategy = advice.memory, advice.calibration.run.strategy
    assert (1 if memory is None else memory.fits_from(strategy)) == fewest
    readings = advice.decision.readings
    assert readings and all(r.accelerators >= fewest for r in readings)
    assert all(r.speedup > 1 or r.accelerators == fewest for r in readings)

"""Where memory (or the search) fixes the count but an assumed term's range moves that
count's speedup outside its 80% interval, the interval alone would promise too much: the
reading at that end is marked ``beyond_interval`` and the answer says the time is unsure,
at what speedup, and how to settle it (the text: golden case ``tpu_memory_time_unsure``)."""

from __future__ import annotations

import pytest

import gpuscale

# a 70B model: 1,120 GB of state, so the fewest devices that hold it decide the count
SEVENTY_B = {"params": 70e9, "step_ms": 900, "batch": 256, "max_devices": 64}


@pytest.mark.parametrize(
    ("device", "term", "faster", "fewest"),
    [("TPU-v5p", "fabric", "nvlink5", 16), ("L40S", "link", "pcie4-x16", 32)],
)
def test_a_range_that_moves_the_time_not_the_count_is_marked(
    device: str, term: str, faster: str, fewest: int
) -> None:
    advice = gpuscale.advise(device_name=device, **SEVENTY_B)
    d = advice.decided
    assert d.withheld_by is None and d.count == d.read.accelerators == fewest
    ends = {r.end: r for r in d.readings if r.term == term}
    assert {r.accelerators for r in ends.values()} == {fewest}  # the count does not move
    high = ends["high"]
    assert high.preset == faster and high.beyond_interval
    assert high.speedup > 1.5 * d.read.speedup_high  # well outside the interval said
    assert not ends["low"].beyond_interval  # pcie-sys: within it
    assert d.read.speedup_low <= ends["low"].speedup <= d.read.speedup_high
    unsure = [w for w in advice.decision.warnings if w.startswith("Time unsure")]
    assert len(unsure) == 1 and faster in unsure[0]
    # the end priced as -f json's reading has it: its preset at its latency (a fabric's too)
    assert f"{faster}, {high.value:g} GB/s at {high.latency_us:g} us" in unsure[0]


def test_a_link_given_leaves_no_time_unsure() -> None:
    advice = gpuscale.advise(device_name="L40S", interconnect="pcie4-x16", **SEVENTY_B)
    assert not [r for r in advice.decided.readings if r.term == "link"]
    assert not [r for r in advice.decided.readings if r.beyond_interval]
    assert not [w for w in advice.decision.warnings if w.startswith("Time unsure")]


def test_a_withheld_count_is_not_also_said_unsure() -> None:
    advice = gpuscale.advise(
        device_name="TPU-v5p",
        params=7e9,
        flops_per_sample=42e9,
        step_ms=800,
        batch=8,
        max_devices=8,
    )
    d = advice.decided
    assert d.withheld_by == "fabric"
    assert not [r for r in d.readings if r.beyond_interval]  # the moved end is another count
    assert not [w for w in advice.decision.warnings if w.startswith("Time unsure")]

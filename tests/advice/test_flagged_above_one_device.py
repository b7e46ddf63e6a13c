"""An input flagged IMPLAUSIBLE allows no count above 1 (docs/advice.md); where memory
needs more than one device, no count is advised: the answer says so and names the fewest
devices that would hold the model, and what to measure first."""

import gpuscale
from gpuscale.advice.explain.answer import decision_line
from gpuscale.advice.explain.as_json import advice_document, plain

# 382 TFLOP/s on an A100 40GB's 312 peak; a 7B model needs 4 devices under hybrid sharding
FLAGGED_7B = dict(
    params=7e9,
    step_ms=900.0,
    batch=8192,
    device_name="A100 40GB",
    link="nvlink3",
    strategy="hybrid",
    max_devices=32,
    inter_node="ib-hdr200",
)


def test_no_count_is_advised_where_memory_needs_more_than_one(golden) -> None:
    advice = gpuscale.advise(**FLAGGED_7B)
    d = advice.decision
    assert d.refused and advice.memory is not None and advice.memory.fits_from("hybrid") == 4
    assert d.read.accelerators == 4 and d.chosen is None  # the fewest that hold it, shown
    assert d.count is None and advice.recommended is None
    assert plain(d)["accelerators"] is None and d.settle
    assert advice_document(advice)["decision"]["chosen"] is None
    # no rule picks a count the refusal rules out: none is fastest, efficient or cheapest
    picks = advice.picks
    assert (d.fastest, picks.efficient, picks.cheapest, picks.numbers) == (None,) * 4
    assert set(picks.equilibrium.values()) == {None}
    golden.check("advice/flagged", "7b_a100_40gb_hybrid_decision", decision_line(advice))


def test_one_device_that_holds_it_is_still_advised_when_flagged() -> None:
    advice = gpuscale.advise(**{**FLAGGED_7B, "device_name": "A100 80GB", "strategy": "fsdp"})
    # FSDP holds it from 2 on 80 GiB: still no count, refused above one device
    assert advice.decision.refused and advice.recommended is None
    # a model one device holds (1B, 16 GB), flagged (491 TFLOP/s): 1 device, as before
    small = gpuscale.advise(**{**FLAGGED_7B, "params": 1e9, "step_ms": 100.0, "strategy": "ddp"})
    assert small.decision.refused and small.memory is None and small.recommended == 1

"""A new user's walk (round c14): the same thing written two ways. The fixed cost's range
was "2 ms (1 ms-2 ms)" in ``-f json``'s ``said`` and "2 ms (range 1 ms-2 ms)" in
``--explain``; "To settle it:" dropped the backticks and ``--batch B`` that the fixed
cost's own measurement keeps; a link given by its numbers was titled "on custom"."""

from __future__ import annotations

import re

import gpuscale
from gpuscale.advice.explain.answer import change_line, deciding_line, issued
from gpuscale.advice.explain.document import advice_view
from gpuscale.advice.explain.phrasebook import strategy_name
from gpuscale.advice.types import Source, TermId
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


# hybrid sharding over two nodes of 8: the focus, 8 devices, is one node
HYBRID = {
    **{"params": 7e9, "step_ms": 900, "batch": 8192, "device_name": "H100", "link": "nvlink4"},
    **{"nodes": 2, "inter_node": "ib-ndr400"},
}


def test_hybrid_within_one_node_is_worded_as_the_fsdp_it_issues() -> None:
    """Within one node hybrid sharding issues FSDP's collectives only (docs/memory.md): the
    answer said "the shards' all-reduce across nodes ... at 8 devices", one node."""
    hybrid = gpuscale.advise(**HYBRID, strategy="hybrid")
    fsdp = gpuscale.advise(**HYBRID, strategy="fsdp")
    d = hybrid.decision
    network = hybrid.calibration.machine.network
    assert not network.spans_nodes(d.focus.accelerators)  # the premise: the focus is one node
    assert d.focus == fsdp.decision.focus and d.limit == fsdp.decision.limit  # the same numbers
    assert issued(hybrid.calibration, d.focus.accelerators) == "fsdp"
    assert issued(hybrid.calibration) == "hybrid"  # 16 devices span the nodes
    assert deciding_line(hybrid) == deciding_line(fsdp)
    assert change_line(hybrid) == change_line(fsdp)


def test_the_overlap_assumed_is_the_pipeline_of_the_strategy_advised() -> None:
    """--explain's Overlap line said "DDP's pipeline" under every strategy."""
    one_node = {k: v for k, v in HYBRID.items() if k not in ("nodes", "inter_node")}

    def basis(**asked: object) -> str:
        advice = gpuscale.advise(**asked)
        overlap = next(a for a in advice.assumptions if a.term == TermId.OVERLAP)
        assert overlap.source is Source.ASSUMED  # the premise: the prior's
        return str(overlap.basis)

    ddp = basis(**{**one_node, "params": 7e6, "batch": 64, "step_ms": 2})
    fsdp, hybrid_one_node = basis(**one_node, strategy="fsdp"), basis(**one_node, strategy="hybrid")
    hybrid_two_nodes = basis(**HYBRID, strategy="hybrid")
    assert fsdp == hybrid_one_node
    assert len({ddp, fsdp, hybrid_two_nodes}) == 3
    names = [strategy_name(s) for s in ("ddp", "fsdp", "hybrid")]
    assert [n in b for n, b in zip(names, (ddp, fsdp, hybrid_two_nodes), strict=True)] == [True] * 3

"""The link between nodes, where none is named (``--nodes 4``, no ``--inter-node``): an
assumption with its number and unit in -f json, named by the Provisional caveat; named, it
is no assumption."""

from __future__ import annotations

import gpuscale
from gpuscale.advice.explain.phrasebook import said
from gpuscale.advice.request_fields import DEFAULT_INTER_NODE
from gpuscale.advice.types import FindingKind as K
from gpuscale.advice.types import TermId
from gpuscale.hardware.links import PRESETS

SEVEN_B = {
    "params": 7e9,
    "step_ms": 900,
    "batch": 4,
    "global_batch": 64,
    "device_name": "H100",
    "interconnect": "nvlink4",
    "nodes": 4,
}


def test_an_unnamed_link_between_nodes_is_an_assumption_the_caveat_names() -> None:
    advice = gpuscale.advise(**SEVEN_B)
    (inter,) = [a for a in advice.assumptions if a.term == TermId.INTER_NODE]
    assert inter.source == "assumed" and inter.quantity is not None
    assert inter.quantity.value == PRESETS[DEFAULT_INTER_NODE].busbw_gbs
    assert inter.quantity.value == advice.calibration.machine.network.inter.busbw_gbs
    assert inter.quantity.unit == "GB/s bus bandwidth"
    assert inter.measure.before.kind == K.MEASURE_INTER_NODE
    assert inter.value["preset"] == DEFAULT_INTER_NODE
    (provisional,) = [c for c in advice.caveats if c.startswith("Provisional")]
    assert said(inter.value) in provisional and "inter_node=" in provisional


def test_a_named_link_between_nodes_is_not_assumed() -> None:
    advice = gpuscale.advise(**SEVEN_B, inter_node="eth25")
    assert TermId.INTER_NODE not in {a.term for a in advice.assumptions}
    assert not any("between nodes" in c for c in advice.caveats if c.startswith("Provisional"))
    # one node: nothing between nodes to assume
    one = gpuscale.advise(**{**SEVEN_B, "nodes": 1})
    assert TermId.INTER_NODE not in {a.term for a in one.assumptions}

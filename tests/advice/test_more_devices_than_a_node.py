"""``--max-devices`` above the devices the nodes hold (8 a node by default): the counts
beyond one node span nodes joined by the inter-node link, and the advice says so (a user
walk: ``--max-devices 16`` modelled 16 GPUs inside one NVLink node, without a word)."""

from __future__ import annotations

from pathlib import Path

import gpuscale

MEASURED = Path(__file__).with_name("h100_resnet50_bf16.jsonl")


def test_counts_beyond_a_node_span_nodes_and_it_is_said() -> None:
    advice = gpuscale.advise(bench=MEASURED, link="nvlink4", max_devices=16, scaling="weak")
    assert advice.calibration is not None
    network = advice.calibration.machine.network
    assert network.per_node == 8 and network.inter is not None
    assert network.spans_nodes(16) and not network.spans_nodes(8)
    assert advice.predictions["accelerators"].max() == 16
    said = "\n".join(advice.explanation)
    assert "max_devices=16 is more than 1 node of 8 devices" in said, said


def test_within_a_node_nothing_changes() -> None:
    advice = gpuscale.advise(bench=MEASURED, link="nvlink4", max_devices=8)
    assert advice.calibration is not None and advice.calibration.machine.network.inter is None
    assert "Nodes:" not in "\n".join(advice.explanation)

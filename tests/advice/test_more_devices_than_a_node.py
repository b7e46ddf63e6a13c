"""``--max-devices`` above the devices the nodes hold (8 a node by default): the counts
beyond one node span nodes joined by the inter-node link, and the advice says so (a user
walk: ``--max-devices 16`` modelled 16 GPUs inside one NVLink node, without a word)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

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


@pytest.mark.parametrize(
    ("nodes", "per_node", "verb"), [(1, 1, "holds"), (1, 8, "holds"), (2, 2, "hold")]
)
def test_the_verb_agrees_with_the_nodes_counted(nodes: int, per_node: int, verb: str) -> None:
    advice = gpuscale.advise(
        params=7e6, step_ms=40, batch=32, nodes=nodes, gpus_per_node=per_node, max_devices=16
    )
    (said,) = [s for s in advice.explanation if s.startswith("Nodes:")]
    found = re.search(rf"{nodes} nodes? of {per_node} devices? (\w+):", said)
    assert found is not None and found.group(1) == verb, said

"""The link between nodes is named (the header, a sentence) only where a count searched
spans nodes. A walk: ``--max-devices 12`` at 8 devices per node searches 1, 2, 4 and 8
(past one node only whole nodes, and 12 is none), yet the header said "nvlink4 x 8,
ib-ndr400 between nodes" and a bullet described the NICs between nodes. The network keeps
its nodes (12 stays no one-node count); only the words follow the counts searched."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

import gpuscale
from gpuscale.cli import app

NIC = "ib-ndr400"  # the default link between nodes
NUMBERS = {"params": 7e6, "step_ms": 40.0, "batch": 32, "link": "nvlink4"}
# (the request's node fields, devices per node)
CASES = {
    "12 of 8 a node": ({"max_devices": 12}, 8),
    "12 of 8 a node, --gpus-per-node 8": ({"max_devices": 12, "gpus_per_node": 8}, 8),
    "12 on 2 nodes of 8": ({"max_devices": 12, "nodes": 2, "gpus_per_node": 8}, 8),
    "16 of 8 a node": ({"max_devices": 16}, 8),
    "6 of 4 a node": ({"max_devices": 6, "gpus_per_node": 4}, 4),
    "8 of 4 a node": ({"max_devices": 8, "gpus_per_node": 4}, 4),
}


def _flags(fields: dict) -> list[str]:
    return [f"--{k.replace('_', '-')}={v}" for k, v in fields.items()]


@pytest.mark.parametrize("case", sorted(CASES))
def test_the_link_between_nodes_is_named_only_where_a_count_spans_nodes(case: str) -> None:
    fields, per_node = CASES[case]
    advice = gpuscale.advise(**NUMBERS, **fields)
    counts = [int(n) for n in advice.predictions["accelerators"]]
    spans = max(counts) > per_node  # from the table: a count shown past one node
    explanation = "\n".join(advice.explanation)
    assert (NIC in explanation) == spans, (counts, explanation)
    assert ("Between nodes:" in explanation) == spans
    # the model keeps its nodes: the counts past one node are whole nodes or none
    assert advice.calibration.machine.network.inter is not None
    assert all(n <= per_node or n % per_node == 0 for n in counts)
    # the header, as typed
    typed = ["advise", "--explain", "--params", "7M", "--step-ms", "40", "--batch", "32"]
    result = CliRunner().invoke(app, [*typed, "--interconnect", "nvlink4", *_flags(fields)])
    assert result.exit_code == 0, result.output
    # the table's title, under the answer
    header = next(line for line in result.output.splitlines() if line.startswith("predicted"))
    assert (NIC in header) == spans, header
    assert (f"x {per_node}" in header) == spans, header


@pytest.mark.parametrize(
    ("fields", "assumed"),
    [
        ({}, True),
        ({"inter_node": "eth100"}, True),  # its NICs per node still one per device, assumed
        ({"inter_node": "eth100", "nics_per_node": 1}, False),
    ],
)
def test_the_link_between_nodes_says_whether_it_was_named(fields: dict, assumed: bool) -> None:
    """A workstation's nodes were said to talk over 8 NDR400 NICs each, as if named: the
    default NICs (``ib-ndr400``, one per device) are said assumed where not named."""
    from gpuscale.advice.types import Finding, FindingKind

    advice = gpuscale.advise(**NUMBERS, nodes=2, **fields)
    found = [
        f
        for f in advice.calibration.said.sources
        if isinstance(f, Finding) and f.kind == FindingKind.BETWEEN_NODES
    ]
    assert len(found) == 1
    values = dict(found[0].values)
    assert values["assumed"] is assumed
    assert (values["name"], values["nics"]) == (
        fields.get("inter_node", NIC),
        fields.get("nics_per_node", 8),
    )

"""Hybrid sharding across nodes: what is issued after backward ends (the last unit's
reduce-scatter within its node, then the all-reduce of its shard across nodes) is exposed,
so a second node cannot hide more communication than one node did while the step's
communication grows and the backward that hides it shrinks."""

from __future__ import annotations

import gpuscale

HYBRID = dict(
    params=7e9,
    strategy="hybrid",
    device_name="H100",
    step_ms=900,
    batch=8,
    nodes=2,
    gpus_per_node=8,
    global_batch=64,
    flops_per_sample=40e12,
    interconnect="nvlink4",
)


def test_a_second_node_exposes_no_less_communication() -> None:
    table = gpuscale.advise(**HYBRID).predictions.set_index("accelerators")
    one_node, two_nodes = table.loc[8], table.loc[16]
    assert two_nodes["comm_ms"] > one_node["comm_ms"]
    assert two_nodes["compute_ms"] < one_node["compute_ms"]  # less backward to hide behind
    assert two_nodes["exposed_comm_ms"] >= one_node["exposed_comm_ms"]

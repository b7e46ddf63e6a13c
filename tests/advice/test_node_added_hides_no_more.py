"""A count across nodes hides no more of its communication than its in-node leg lets it:
ResNet-50 by numbers on A100s behind a PCIe host bridge (no P2P: NCCL stages through host
memory, overlap 0.5 by ``data/advice_priors.json``), two nodes of eight over InfiniBand
(multinode: overlap 1). Adding the second node adds communication, so neither the step's
unhidden communication nor its wait may fall and the efficiency at 16 devices is not
above that at 8 on one node."""

from __future__ import annotations

import pandas as pd
import pytest

import gpuscale

REQUEST = {
    "params": 25.6e6,
    "flops_per_sample": 12.3e9,
    "step_ms": 98.0,
    "batch": 256,
    "scaling": "weak",
    "device_name": "A100 SXM",
    "interconnect": "pcie-phb",
    "nodes": 2,
    "gpus_per_node": 8,
    "inter_node": "ib-ndr400",
    "max_devices": 16,
}


@pytest.fixture(scope="module")
def table() -> pd.DataFrame:
    return gpuscale.advise(**REQUEST).predictions.set_index("accelerators")


def test_a_second_node_over_a_slower_path_raises_no_efficiency(table: pd.DataFrame) -> None:
    one, two = table.loc[8], table.loc[16]
    assert two["comm_ms"] > one["comm_ms"]
    assert two["exposed_comm_ms"] >= one["exposed_comm_ms"]
    assert two["efficiency"] <= one["efficiency"]
    assert two["step_ms"] >= one["step_ms"]


def test_the_count_across_nodes_hides_half_as_its_node_does(table: pd.DataFrame) -> None:
    # overlap 0.5 of each count's communication (the backward, ~65 ms, outlasts it)
    for n in (8, 16):
        at = table.loc[n]
        assert at["exposed_comm_ms"] == pytest.approx(0.5 * at["comm_ms"], rel=1e-6)


def test_a_node_of_device_to_device_links_keeps_the_multinode_overlap() -> None:
    # NVLink within the node (overlap 1) and between nodes: all but the last bucket hides
    nvlink = gpuscale.advise(**{**REQUEST, "interconnect": "nvlink4"})
    at = nvlink.predictions.set_index("accelerators").loc[16]
    assert at["exposed_comm_ms"] < 0.5 * at["comm_ms"]

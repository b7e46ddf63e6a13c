"""A count within one node is priced as on one node (its communication, overlap, DDP work,
fixed cost, wait for the slowest rank and interval), whatever the machine's nodes: the one
term that may differ is the fitted contention share (kappa) of a step given by numbers,
which on nodes given (``--nodes``) is the machine's class, multinode, as
``benchmarks/fit_step_terms.py`` fitted it (a published multi-node row's base count within
one node took the multi-node terms: ``model/network.py`` ``terms_class``,
docs/advice-model.md); the rank spread (sigma) is the compute's, the same in every class.
Where the nodes are only the search's spill (``--max-devices`` past one node) each count
keeps its own class. Counts spanning nodes take the multi-node class. Checked as numbers on
several devices and links."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pandas as pd
import pytest

import gpuscale
from gpuscale.advice.api import Advice
from gpuscale.advice.model import network

SEVEN_B = {"params": 7e9, "step_ms": 500.0, "batch": 32}
BENCH = Path(__file__).parent / "h100_resnet50_bf16.jsonl"
MULTINODE_KAPPA = network.FITTED.contention("multinode")
# the fitted terms with the multi-node kappa in every class: one node priced as a count
# within one node of a machine of nodes given is
EVERY_CLASS_MULTINODE = dataclasses.replace(
    network.FITTED, contention_share=tuple((c, MULTINODE_KAPPA) for c in network.CLASSES)
)
MACHINES = [  # (options, devices per node)
    ({"nodes": 2}, 8),
    ({"max_devices": 16}, 8),
    ({"gpus_per_node": 4, "nodes": 4}, 4),
]


def _within(advice: Advice, per_node: int) -> pd.DataFrame:
    table = advice.predictions.set_index("accelerators")
    return table.loc[[n for n in table.index if n <= per_node]]


@pytest.mark.parametrize(
    ("link", "strategy"),
    [
        ({"device_name": "MI300X"}, "ddp"),  # xgmi-mi300x, taken as NVLink's class
        ({"device_name": "H100"}, "hybrid"),  # nvlink4; hybrid shards over a node
        ({"interconnect": "pcie4-x16"}, "ddp"),  # PCIe with P2P
        ({"interconnect": "pcie-phb"}, "zero2"),  # PCIe through host memory
    ],
)
def test_a_count_within_a_node_is_priced_as_on_one_node_but_the_fitted_contention(
    link: dict[str, str], strategy: str
) -> None:
    """Counts up to a node's devices on two nodes, 16 devices searched, or four nodes of
    four: every column as on one node (nodes given: at the multi-node kappa in every
    class); counts above a node: the multi-node class."""
    one_node = gpuscale.advise(**link, strategy=strategy, **SEVEN_B)
    with network.using(EVERY_CLASS_MULTINODE):
        at_multinode_sigma = gpuscale.advise(**link, strategy=strategy, **SEVEN_B)
    own = network.count_class(one_node.calibration.machine.network, 2)
    # the wait for the slowest rank is the compute's: the same sigma on every link
    assert network.FITTED.spread(own) == network.FITTED.spread("multinode")
    for options, per_node in MACHINES:
        advice = gpuscale.advise(**link, strategy=strategy, **options, **SEVEN_B)
        expected = at_multinode_sigma if "nodes" in options else one_node
        within = _within(advice, per_node)
        assert len(within) >= 3, options
        pd.testing.assert_frame_equal(within, _within(expected, per_node), check_exact=True)
        machine = advice.calibration.machine.network
        spanning = [n for n in advice.predictions["accelerators"] if n > per_node]
        assert spanning, options
        for n in spanning:
            assert network.count_class(machine, n) == "multinode", (options, n)
            assert network.terms_class(machine, n) == "multinode", (options, n)


def test_a_measured_wait_within_a_node_is_the_same_on_any_nodes() -> None:
    """On a bench file the wait is measured (no fitted sigma): every count within a node is
    the same on one node and on two."""
    one, two = (gpuscale.advise(bench=BENCH, nodes=nodes) for nodes in (1, 2))
    assert not two.predictions[two.predictions["accelerators"] > 8].empty
    pd.testing.assert_frame_equal(_within(two, 8), _within(one, 8), check_exact=True)

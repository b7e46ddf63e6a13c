"""One sweep id on every node: each node's runner makes its own, the ranks agree on the
one of the node given --node-rank 0, wherever torchrun put global rank 0."""

from __future__ import annotations

import pytest

pytest.importorskip("torch")

from gpuscale.bench.ranks import agreed_sweep_id


def test_the_node_given_node_rank_0_names_the_sweep() -> None:
    # torchrun numbered the command given --node-rank 1 first: its ranks come first
    assert agreed_sweep_id([(1, "b1"), (1, "b1"), (0, "a0"), (0, "a0")]) == "a0"
    assert agreed_sweep_id([(0, "a0"), (1, "b1")]) == "a0"

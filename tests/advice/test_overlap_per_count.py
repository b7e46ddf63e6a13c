"""The overlap assumed where nothing measured it is said per count where the counts' link
classes differ (``Quantity.at``); half while a count's gradients go through host memory
(PCIe without P2P), across nodes of such links too (a count across nodes runs its in-node
leg: at most that leg's overlap); one value, no ``at``, where every count shares it."""

from __future__ import annotations

import gpuscale
from gpuscale.advice.types import TermId

ASKED = dict(params=100e6, step_ms=50.0, batch=32, device_name="RTX 4090")


def _overlap(**more: object) -> tuple[float, dict[int, float]]:
    advice = gpuscale.advise(**ASKED, **more)
    (found,) = [a for a in advice.assumptions if a.term is TermId.OVERLAP]
    assert found.quantity is not None
    return found.quantity.value, dict(found.quantity.at)


def test_half_within_a_node_without_p2p_and_across_nodes_of_it() -> None:
    # 16 devices span two nodes of eight: the in-node leg still goes through host memory
    assert _overlap(link="pcie-sys", max_devices=16) == (0.5, {})


def test_one_class_one_value() -> None:
    assert _overlap(link="nvlink4") == (1.0, {})
    assert _overlap(link="pcie-sys", max_devices=8) == (0.5, {})

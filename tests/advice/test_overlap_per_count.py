"""The overlap assumed where nothing measured it is said per count where the counts' link
classes differ (``Quantity.at``): half while a count's gradients stay in a node of PCIe
without P2P (through host memory), DDP's pipeline (1) once they cross nodes; one value,
no ``at``, where every count shares a class."""

from __future__ import annotations

import gpuscale
from gpuscale.advice.types import TermId

ASKED = dict(params=100e6, step_ms=50.0, batch=32, device_name="RTX 4090")


def _overlap(**more: object) -> tuple[float, dict[int, float]]:
    advice = gpuscale.advise(**ASKED, **more)
    (found,) = [a for a in advice.assumptions if a.term is TermId.OVERLAP]
    assert found.quantity is not None
    return found.quantity.value, dict(found.quantity.at)


def test_half_within_a_node_without_p2p_and_the_pipeline_across_nodes() -> None:
    value, at = _overlap(link="pcie-sys", max_devices=16)
    assert at == {1: 0.5, 2: 0.5, 4: 0.5, 8: 0.5, 16: 1.0}
    assert value == 1.0  # the value across nodes, as the words' last


def test_one_class_one_value() -> None:
    assert _overlap(link="nvlink4") == (1.0, {})
    assert _overlap(link="pcie-sys", max_devices=8) == (0.5, {})

"""A device named without a link: the link assumed is the one of the board the advice
reads the peak and power of. ``--device-name H100`` read the peak and the 700 W of an
H100 SXM board ("'H100' names no single part: read as H100 SXM5 80GB") and the link of a
PCIe card (pcie-phb, 10 GB/s), where the same H100 from bench rows was on its NVLink. An
RTX 3090 is a PCIe card whose NVLink bridge is an option: not assumed."""

from __future__ import annotations

import pytest

import gpuscale
from gpuscale.advice.types import Finding, Source, TermId
from gpuscale.advice.types import FindingKind as K
from gpuscale.hardware.links import PRESETS


def _advice(device: str) -> gpuscale.Advice:
    return gpuscale.advise(params=300e6, step_ms=100, batch=16, device_name=device)


def test_an_sxm_board_is_advised_on_its_nvlink() -> None:
    advice = _advice("H100")
    said = " ".join(str(advice).split())
    # the board the power and peak are read of, said with the parts the name could mean
    assert "'H100' names no single part: read as H100 SXM5 80GB" in said
    assert "H100 PCIe 80GB or H100 NVL 94GB" in said and "700 W" in said
    assert advice.calibration.machine.network.intra.name == "nvlink4"
    (link,) = [a for a in advice.calibration.said.assumptions if a.term == TermId.LINK]
    assert link.source == Source.ASSUMED and link.quantity.value == PRESETS["nvlink4"].busbw_gbs
    # PCIe cards: the link to give instead (pcie-phb)
    assert link.measure.before == Finding.of(K.MEASURE_LINK_ASSUMED, case="board")
    assert "an assumed link, nvlink4" in said  # the caveat says the link it assumed


@pytest.mark.parametrize("device", ["H100 PCIe", "H100 NVL", "RTX 4090", "RTX 3090"])
def test_a_card_without_an_sxm_board_keeps_pcie(device: str) -> None:
    advice = _advice(device)
    assert advice.calibration.machine.network.intra.name == "pcie-phb"

"""An NVLink or xGMI preset given for a device that has not that link (an RTX 4090 has no
NVLink, an MI300X has Infinity Fabric, an H100 SXM5 has NVLink 4, not 5) is taken as given,
and the answer says first that it is not the device's link and which link is usual for it; a link
the device has, a PCIe preset, or no device named says nothing. A device joined by a fabric
of its own (a TPU's ICI, a Gaudi's RoCE) has no GPU link: the answer says what prices its
fabric instead."""

from __future__ import annotations

import pytest

import gpuscale
from gpuscale.advice.explain.answer import lines as answer_lines
from gpuscale.advice.types import Finding, FindingKind

from ..golden import Golden

VIEW = "advice/link_of_device"


def _mismatch(device: str | None, link: str) -> Finding | None:
    advice = gpuscale.advise(
        params=1e9, step_ms=300, batch=16, device_name=device, interconnect=link
    )
    found = [
        w
        for w in advice.decided.warnings
        if isinstance(w, Finding) and w.kind == FindingKind.LINK_NOT_OF_DEVICE
    ]
    assert len(found) <= 1
    return found[0] if found else None


@pytest.mark.parametrize(
    ("device", "link", "part", "gpu_link", "usual"),
    [
        ("RTX 4090", "nvlink4", "RTX 4090", None, "pcie-phb"),
        ("RTX 3090", "nvlink3", "RTX 3090", "nvlink3-bridge", "pcie-phb"),
        ("H100", "nvlink5", "H100 SXM5 80GB", "nvlink4", "nvlink4"),
        ("L40S", "nvlink4", "L40S", None, "pcie4-x16"),
        ("MI300X", "nvlink4", "MI300X", "infinity-fabric", "xgmi-mi300x"),
        ("MI300X", "xgmi-mi250x", "MI300X", "infinity-fabric", "xgmi-mi300x"),
        ("H100", "xgmi-mi300x", "H100 SXM5 80GB", "nvlink4", "nvlink4"),
    ],
)
def test_an_nvlink_the_device_has_not_is_said(
    device: str, link: str, part: str, gpu_link: str | None, usual: str | None
) -> None:
    found = _mismatch(device, link)
    assert found is not None
    assert dict(found.values) == {
        "given": link,
        "device": part,
        "gpu_link": gpu_link,
        "usual": usual,
        "fabric": None,
    }


@pytest.mark.parametrize(
    ("device", "link", "fabric", "product"),
    [
        ("TPU-v5p", "nvlink4", "ICI", "TPU-v5p"),
        ("Gaudi 3", "nvlink5", "RoCE", "Gaudi3"),
        ("TPU v4", "xgmi-mi300x", "ICI", "TPU-v4"),
    ],
)
def test_a_gpu_fabric_given_for_a_device_of_its_own_fabric_is_said(
    device: str, link: str, fabric: str, product: str
) -> None:
    found = _mismatch(device, link)
    assert found is not None
    assert dict(found.values) == {
        "given": link,
        "device": product,  # as the product table names it, as the memory line does
        "gpu_link": None,
        "usual": None,
        "fabric": fabric,
    }


@pytest.mark.parametrize(
    ("device", "link"),
    [
        ("H100", "nvlink4"),
        ("A100 PCIe 80GB", "nvlink3"),  # its bridge
        ("RTX 4090", "pcie-phb"),
        ("B200", "nvlink5"),
        (None, "nvlink4"),  # the device the link implies
        ("MI300X", "xgmi-mi300x"),
        ("MI250X", "xgmi-mi250x"),
        (None, "xgmi-mi300x"),
    ],
)
def test_a_link_the_device_has_says_nothing(device: str | None, link: str) -> None:
    assert _mismatch(device, link) is None


def test_the_answer_says_it_before_what_decides(golden: Golden) -> None:
    for device, case in (("RTX 4090", "RTX 4090 with nvlink4"), ("MI300X", "MI300X with nvlink4")):
        advice = gpuscale.advise(
            params=8e9, step_ms=900, batch=4, device_name=device, interconnect="nvlink4"
        )
        lines = answer_lines(advice)
        link = next(i for i, line in enumerate(lines) if line.startswith("Link:"))
        decides = [i for i, line in enumerate(lines) if line.startswith("Decides:")]
        # no count predicted holds 8B on RTX 4090s (FSDP from 8): no focus is read, none decides
        assert decides == ([link + 1] if advice.decision.holds else [])
        assert advice.decision.holds == (device == "MI300X")
        golden.check(VIEW, case, lines[link])


def test_a_tpu_given_nvlink_is_told_what_prices_its_fabric(golden: Golden) -> None:
    advice = gpuscale.advise(
        params=1e9, step_ms=300, batch=16, device_name="TPU-v5p", interconnect="nvlink4"
    )
    lines = answer_lines(advice)
    link = next(i for i, line in enumerate(lines) if line.startswith("Link:"))
    assert [i for i, line in enumerate(lines) if line.startswith("Decides:")] == [link + 1]
    assert advice.calibration.machine.network.intra.name == "nvlink4"  # priced as given
    golden.check(VIEW, "TPU-v5p with nvlink4", lines[link])

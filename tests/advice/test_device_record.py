"""The device an advice runs on is resolved once into a record (``calibrate.link``):
named, recorded by a bench, or implied by the link; what needs the device later reads it."""

from __future__ import annotations

import pytest

from gpuscale.advice.model.hardware import (
    NO_DEVICE,
    device_power,
    device_record,
    rate_warnings,
)
from gpuscale.hardware.links import implied_device


def test_a_product_name_is_read_as_its_board_with_what_it_left_open() -> None:
    h100 = device_record("H100")
    assert h100.part is not None and h100.part.name == "H100 SXM5 80GB"
    assert h100.peak is not None and h100.peak.bf16 == h100.part.bf16_tflops
    # 80 GiB, as the memory check counts it: 85.9e9 bytes, not 80e9
    assert h100.memory_bytes == 80 * 2**30 == pytest.approx(85.9e9, rel=1e-3)
    assert h100.board_link == "nvlink4"
    assert "H100 PCIe" in h100.assumed  # the parts it could also be, said
    # its peak at each precision the advice reads, resolved with it (fp32: TF32 on or off)
    part = h100.part
    assert h100.tflops("bf16") == h100.tflops("fp16") == part.bf16_tflops
    assert h100.tflops("fp32") == part.fp32_tflops
    assert h100.tflops("fp32", tf32=True) == part.tf32_tflops
    assert h100.tflops("bf16", tf32=True) == part.bf16_tflops


def test_a_pcie_card_has_no_board_link() -> None:
    card = device_record("H100 PCIe")
    assert card.part is not None and card.part.form_factor == "PCIe"
    assert card.board_link is None
    assert card.assumed == ""


@pytest.mark.parametrize("link", ["nvlink4", "NVLINK4", "nvlink4 (detected)"])
def test_with_no_device_named_the_link_implies_one(link: str) -> None:
    assert implied_device(link) == "H100 SXM5 80GB"
    implied = device_record(None, link)
    assert implied.name == "H100 SXM5 80GB"
    assert implied.part is not None and implied.part.name == "H100 SXM5 80GB"


def test_a_named_device_wins_over_the_link() -> None:
    assert device_record("RTX 4090", "nvlink4").part.name.endswith("4090")


@pytest.mark.parametrize("link", [None, "pcie-phb", "custom"])
def test_no_device_named_nor_implied_is_no_device(link: str | None) -> None:
    assert device_record(None, link) == NO_DEVICE
    assert NO_DEVICE.memory_bytes is None and NO_DEVICE.board_link is None


def test_an_unknown_name_keeps_its_name_and_the_closest() -> None:
    unknown = device_record("Acme Tensor 12GB")
    assert unknown.name == "Acme Tensor 12GB"
    assert unknown.part is None and unknown.peak is None and unknown.memory_bytes is None
    assert unknown.tflops("bf16") is None
    a10g = device_record("A10G")
    assert a10g.part is None
    assert a10g.closest  # the catalogue's nearest names, for a did-you-mean


def test_power_and_rate_checks_read_the_record() -> None:
    h100 = device_record("NVIDIA H100 80GB HBM3")
    assert device_power("cuda", h100).watts == h100.part.board_power_w == 700.0
    assert device_power("cuda", device_record("A10G")).watts is None
    assert rate_warnings(2 * h100.peak.bf16, h100, "bf16")  # above the peak: flagged
    assert rate_warnings(0.5 * h100.peak.bf16, h100, "bf16") == []
    # without a part only a rate above every known peak is flagged
    assert rate_warnings(0.5 * h100.peak.bf16, NO_DEVICE, "bf16") == []
    assert rate_warnings(1e9, NO_DEVICE, "bf16")


@pytest.mark.parametrize(
    ("name", "link", "part", "watts"),
    [
        ("H100", "pcie-phb", "H100 PCIe 80GB", 350.0),
        ("H100", "pcie5-x16", "H100 PCIe 80GB", 350.0),
        ("H100", "nvlink4", "H100 SXM5 80GB", 700.0),
        ("A100", "pcie4-x16", "A100 PCIe 80GB", 300.0),
        ("A100 40GB", "pcie-sys", "A100 PCIe 40GB", 250.0),
        ("V100", "pcie3-x16", "V100 PCIe 16GB", 250.0),
        ("H200", "pcie5-x16", "H200 NVL 141GB", 600.0),
        ("H100", "ib-ndr400", "H100 SXM5 80GB", 700.0),  # a network says no form
        ("H100 SXM", "pcie-phb", "H100 SXM5 80GB", 700.0),  # the form written stands
    ],
)
def test_a_name_of_several_forms_takes_the_form_its_link_implies(
    name: str, link: str, part: str, watts: float
) -> None:
    record = device_record(name, link)
    assert record.part is not None and record.part.name == part
    assert device_power("cuda", record).watts == watts
    assert record.part.name not in {o.name for o in record.others}
    moved = part != device_record(name).part.name
    assert (link in record.assumed) == moved  # the reading by the link is said


@pytest.mark.parametrize(
    ("name", "sizes"),
    [("V100", {16.0, 32.0}), ("H100", {80.0, 94.0}), ("A100", {40.0, 80.0})],
)
def test_a_product_of_several_memory_sizes_lists_them_all(name: str, sizes: set[float]) -> None:
    record = device_record(name)
    assert {d.memory_gib for d in (record.part, *record.others)} == sizes


@pytest.mark.parametrize(
    ("name", "link", "checked", "assumed"),
    [
        ("V100", "nvlink2", "V100 SXM2 16GB", True),  # read as the smallest: still said
        ("H100", "nvlink4", "H100 SXM5 80GB", True),
        ("A100", "nvlink3", "A100 SXM4 40GB", True),
        ("A100", "pcie4-x16", "A100 PCIe 40GB", True),
        ("H100 PCIe", "pcie5-x16", "H100 PCIe 80GB", False),  # one part: nothing assumed
        ("V100 32GB", "pcie3-x16", "V100 PCIe 32GB", False),
    ],
)
def test_the_memory_check_says_a_name_of_several_sizes_however_it_is_read(
    name: str, link: str, checked: str, assumed: bool
) -> None:
    from gpuscale.advice.model.hardware import checked_device

    record, said = checked_device(device_record(name, link), link)
    assert record.part is not None and record.part.name == checked and said == assumed

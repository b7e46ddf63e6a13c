"""The device catalogue is one room: every value plausible and sourced, every table read
from it (peaks, board power, NVLink), and no module outside ``gpuscale.hardware`` keeps a
table of devices of its own."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from gpuscale.hardware.catalogue import devices, sources
from gpuscale.hardware.links import (
    LINK_DEVICE,
    NVLINK,
    PRESETS,
    board_link,
    fabric_preset,
    nvlink_for_gpu,
    own_link,
    usual_preset,
)
from gpuscale.hardware.peaks import peak_for
from gpuscale.hardware.power import board_power

SRC = Path(__file__).resolve().parents[2] / "src" / "gpuscale"
# a string literal that matches device names by pattern, e.g. r"h100.*pcie" or "a100|a800"
DEVICE_PATTERN = re.compile(r"""r?["'][^"'\n]*\b(?:h100|a100|b200|mi300x|v100)[^"'\n]*\|""")
# the GPUs people own, datacenter and workstation/consumer: each is a part
OWNED = (
    "A100 PCIe 40GB", "A100 PCIe 80GB", "A100 SXM4 40GB", "A100 SXM4 80GB", "H100 PCIe 80GB",
    "H100 SXM5 80GB", "H100 NVL 94GB", "H200 SXM5 141GB", "B200 180GB", "L4", "L40", "L40S",
    "A10", "A30", "V100 SXM2 16GB", "MI250X", "MI300X", "RTX A4000", "RTX A5000", "RTX A6000",
    "RTX 6000 Ada", "RTX 4070 Ti SUPER", "RTX 4080", "RTX 4090", "RTX 3090", "RTX 5090",
)  # fmt: skip
PARTS = {d.name: d for d in devices()}


def test_the_gpus_people_own_are_parts() -> None:
    assert [n for n in OWNED if n not in PARTS] == []
    assert len(PARTS) == len(devices())  # one row per name


@pytest.mark.parametrize("name", list(PARTS))
def test_every_part_is_plausible(name: str) -> None:
    d = PARTS[name]
    assert 1.5 <= d.bf16_tflops / d.fp32_tflops <= 40, "bf16/fp32"
    assert d.fp32_tflops <= d.tf32_tflops <= d.bf16_tflops
    assert d.fp8_tflops is None or d.bf16_tflops < d.fp8_tflops <= 2.5 * d.bf16_tflops
    assert 25 <= d.board_power_w <= 1500
    assert 8 <= d.memory_gib <= 300 and 100 <= d.memory_bw_gbs <= 10_000
    # the peak cannot need more power than the board has: under 10 TFLOP/s per watt dense
    assert d.bf16_tflops / d.board_power_w < 10
    assert d.gpu_link in (None, "infinity-fabric", *NVLINK)
    assert (d.gpu_link is None) == (d.gpu_link_gbs is None)
    assert d.pcie_gen is None or 3 <= d.pcie_gen <= 6
    assert re.search(d.match, d.name.lower()) or d.product.lower() in d.name.lower()


@pytest.mark.parametrize("name", list(PARTS))
def test_every_value_names_its_source(name: str) -> None:
    for what, source in PARTS[name].sources().items():
        assert source.url.startswith("https://"), what
        assert source.citation and source.table and source.read_at, what


def test_every_source_is_used_and_says_where_it_was_read() -> None:
    used = {s.id for d in devices() for s in d.sources().values()}
    assert used == set(sources())
    for source in sources().values():  # confirmed at a page, or said not to be
        assert "confirmed" in source.read_at, source.id


def test_one_default_part_per_product() -> None:
    for product in {d.product for d in devices()}:
        parts = [d for d in devices() if d.product == product]
        assert sum(d.default_part for d in parts) == 1, product


def test_geforce_cards_have_no_p2p_and_their_usual_link_is_through_the_host() -> None:
    assert sum(any(a.startswith("GeForce") for a in d.aliases) for d in devices()) == 5
    for d in devices():
        geforce = any(a.startswith("GeForce") for a in d.aliases)
        assert d.p2p_pcie is not geforce, d.name
        if geforce:
            assert usual_preset(d) == "pcie-phb"
    assert usual_preset(PARTS["RTX 6000 Ada"]) == "pcie4-x16"
    assert usual_preset(PARTS["H100 PCIe 80GB"]) == "pcie5-x16"
    assert usual_preset(PARTS["H100 SXM5 80GB"]) == "nvlink4"
    assert usual_preset(PARTS["A100 SXM4 40GB"]) == "nvlink3"


def test_every_table_reads_the_catalogue() -> None:
    for d in devices():
        for name in (d.name, *d.aliases):
            assert board_power(name) == (d.board_power_w, d.name)
            peak = peak_for(name)
            assert peak is not None and (peak.fp32, peak.tf32, peak.bf16) == (
                d.fp32_tflops, d.tf32_tflops, d.bf16_tflops
            )  # fmt: skip
            assert nvlink_for_gpu(name) == d.nvlink


def test_a_device_implied_by_a_link_is_a_part_of_that_link() -> None:
    for preset, device in LINK_DEVICE.items():
        assert preset in PRESETS
        assert own_link(PARTS[device]) == preset and usual_preset(PARTS[device]) == preset


def test_every_infinity_fabric_board_has_its_xgmi_preset() -> None:
    """A part on an Infinity Fabric board (MI300X, MI250X: OAM) is read as its xGMI preset,
    by its architecture, as an SXM part is read as its NVLink; no NVIDIA part has one."""
    found = {d.name: fabric_preset(d) for d in devices() if fabric_preset(d) is not None}
    assert found == {"MI300X": "xgmi-mi300x", "MI250X": "xgmi-mi250x"}
    assert all(board_link(PARTS[name]) == preset for name, preset in found.items())
    assert {d.vendor for d in devices() if d.gpu_link == "infinity-fabric"} == {"AMD"}


def test_every_nvlink_generation_is_a_preset() -> None:
    assert set(NVLINK) <= set(PRESETS)


def test_no_device_table_outside_the_catalogue() -> None:
    found = [
        f"{path.relative_to(SRC)}: {match.group(0)}"
        for path in SRC.rglob("*.py")
        if "hardware" not in path.relative_to(SRC).parts
        for match in DEVICE_PATTERN.finditer(path.read_text())
    ]
    assert found == []

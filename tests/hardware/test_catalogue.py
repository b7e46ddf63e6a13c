"""The hardware catalogue is one room: its tables agree with each other, and no module
outside ``gpuscale.hardware`` keeps a table of devices of its own."""

from __future__ import annotations

import re
from pathlib import Path

from gpuscale.hardware.links import LINK_DEVICE, NVLINK, PRESETS, nvlink_for_gpu
from gpuscale.hardware.peaks import peak_for
from gpuscale.hardware.power import BOARD_POWER_W

SRC = Path(__file__).resolve().parents[2] / "src" / "gpuscale"
# a string literal that matches device names by pattern, e.g. r"h100.*pcie" or "a100|a800"
DEVICE_PATTERN = re.compile(r"""r?["'][^"'\n]*\b(?:h100|a100|b200|mi300x|v100)[^"'\n]*\|""")


def test_a_device_implied_by_a_link_is_known_to_every_table() -> None:
    for preset, device in LINK_DEVICE.items():
        assert preset in PRESETS
        assert nvlink_for_gpu(device) == preset
        assert peak_for(device) is not None, device
        assert any(re.search(p, device.lower()) for p, _, _ in BOARD_POWER_W), device


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

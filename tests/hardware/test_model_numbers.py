"""Device names are resolved once, on whole model numbers (``hardware.device_names``): what
people, torch and NVML write reaches one part of the catalogue; a name that leaves the
part open is read as its default part with the assumption said; a name that only
begins like a part's (``--device-name "RTX A1000"``, no A100 SXM4; ``H1000``, no H100) is
refused with the closest one."""

from __future__ import annotations

import re

import pytest
from typer.testing import CliRunner

import gpuscale
from gpuscale.cli import app
from gpuscale.hardware.accelerators import _PRODUCTS, normalise_accelerator
from gpuscale.hardware.catalogue import devices
from gpuscale.hardware.device_names import UnknownDevice, closest, find, lookup, resolve

# what people type, and what torch and NVML report -> the part
NAMES = {
    "4090": "RTX 4090",
    "RTX 4090": "RTX 4090",
    "rtx4090": "RTX 4090",
    "NVIDIA GeForce RTX 4090": "RTX 4090",
    "RTX 6000 Ada": "RTX 6000 Ada",
    "NVIDIA RTX 6000 Ada Generation": "RTX 6000 Ada",
    "RTX A6000": "RTX A6000",
    "NVIDIA RTX A5000": "RTX A5000",
    "4070 Ti SUPER": "RTX 4070 Ti SUPER",
    "NVIDIA GeForce RTX 5090": "RTX 5090",
    "NVIDIA A100-SXM4-80GB": "A100 SXM4 80GB",
    "NVIDIA A100-PCIE-40GB": "A100 PCIe 40GB",
    "NVIDIA A100 80GB PCIe": "A100 PCIe 80GB",
    "NVIDIA H100 80GB HBM3": "H100 SXM5 80GB",
    "NVIDIA H100 PCIe": "H100 PCIe 80GB",
    "NVIDIA H100 NVL": "H100 NVL 94GB",
    "H100SXM": "H100 SXM5 80GB",
    "Tesla V100-SXM2-16GB": "V100 SXM2 16GB",
    "Tesla V100-PCIE-32GB": "V100 PCIe 32GB",
    "Tesla V100S-PCIE-32GB": "V100S PCIe 32GB",
    "NVIDIA L40S": "L40S",
    "Tesla T4": "T4",
    "AMD Instinct MI300X": "MI300X",
    "NVIDIA GH200 480GB": "GH200 96GB",
}
# names that leave the part open: the default part, with the others named
OPEN = {
    "H100": ("H100 SXM5 80GB", {"H100 PCIe 80GB", "H100 NVL 94GB"}),
    "A100 80GB": ("A100 SXM4 80GB", {"A100 PCIe 80GB"}),
    "A100 40GB": ("A100 SXM4 40GB", {"A100 PCIe 40GB"}),
    "A100": ("A100 SXM4 80GB", {"A100 SXM4 40GB", "A100 PCIe 40GB", "A100 PCIe 80GB"}),
    "V100": ("V100 SXM2 16GB", {"V100 SXM2 32GB", "V100 PCIe 16GB", "V100 PCIe 32GB"}),
    "H200": ("H200 SXM5 141GB", {"H200 NVL 141GB"}),
}


@pytest.mark.parametrize(("typed", "part"), NAMES.items())
def test_a_name_that_names_one_part(typed: str, part: str) -> None:
    found = resolve(typed)
    assert (found.device.name, found.assumed, found.others) == (part, "", ())


@pytest.mark.parametrize(("typed", "expected"), OPEN.items())
def test_a_name_that_leaves_the_part_open_says_how_it_was_read(typed, expected) -> None:  # type: ignore[no-untyped-def]
    part, others = expected
    found = resolve(typed)
    assert found.device.name == part and set(found.others) == others
    assert repr(typed) in found.assumed and part in found.assumed
    assert all(o in found.assumed for o in others)


@pytest.mark.parametrize(
    ("typed", "nearest"),
    [("RTX A1000", "RTX A6000"), ("H1000", "H100"), ("NVIDIA A1000", "A100"), ("h10", "H100"),
     ("RTX 4070", "RTX 4070 Ti SUPER"), ("A10G", "A10"), ("MI250", "MI250X"),
     ("A100 48GB", "A100")],
)  # fmt: skip
def test_an_unknown_name_gets_the_closest(typed: str, nearest: str) -> None:
    with pytest.raises(UnknownDevice) as missed:
        resolve(typed)
    assert missed.value.closest[0].startswith(nearest), missed.value.closest
    assert lookup(typed) is None
    assert find(typed) is None  # the same miss, without the exception


@pytest.mark.parametrize("part", devices(), ids=[d.name for d in devices()])
def test_every_name_matches_itself_and_no_longer_model_number(part) -> None:  # type: ignore[no-untyped-def]
    for name in (part.name, *part.aliases):
        for spelled in (name, f"NVIDIA {name}", name.upper(), name.replace(" ", "-")):
            assert lookup(spelled) is part, spelled
        longer = re.sub(r"(\d+)", r"\g<1>0", name, count=1)  # A100 -> A1000
        found = lookup(longer)
        assert found is None or found is not part, longer


def test_nothing_else_is_a_device() -> None:
    for name in ("cpu", "", "  ", "Z999", "TPU v4", "Quadro RTX 6000"):
        assert lookup(name) is None, name
    assert closest("Z999") == []


def test_mlperf_products_are_still_named_whole() -> None:
    """The MLPerf name normaliser (``hardware.accelerators``) reads no longer model number
    as one of its products either (``H1000`` is no H100)."""
    for p in _PRODUCTS:
        if re.search(r"\d", p.product) and "TPU" not in p.product:
            assert normalise_accelerator(p.product).product == p.product
            longer = re.sub(r"(\d+)", r"\g<1>0", p.product, count=1)
            assert normalise_accelerator(longer).product != p.product, longer


@pytest.mark.parametrize("name", ["RTX A1000", "H1000", "NVIDIA A1000"])
def test_an_unknown_device_name_is_refused_with_the_closest(name: str) -> None:
    args = ["advise", "--params", "7M", "--step-ms", "2", "--batch", "64"]
    result = CliRunner().invoke(app, [*args, "--device-name", name])
    assert result.exit_code != 0
    said = " ".join(result.output.split())
    assert "--device-name" in said and "unknown device" in said and "did you mean" in said
    with pytest.raises(ValueError, match="unknown device"):
        gpuscale.advise(params=7e6, step_ms=2.0, batch=64, device_name=name)


@pytest.mark.parametrize(
    ("name", "part"),
    [
        ("H100 40GB", "H100 SXM5 80GB"),
        ("H100 SXM 94GB", "H100 NVL 94GB"),
        ("B200 80GB", "B200 180GB"),  # 192 GB, announced, reads as the part sold
    ],
)
def test_a_catalogued_product_at_a_memory_it_has_not_is_refused_with_its_parts(
    name: str, part: str
) -> None:
    """A product the catalogue knows, written with a memory or form no part of it has, is no
    part: advised on, it would have no memory, peak or power, so a model no part holds would
    be advised on DDP. Refused, naming the product's parts."""
    args = ["advise", "--params", "7B", "--step-ms", "900", "--batch", "8192"]
    result = CliRunner().invoke(app, [*args, "--device-name", name])
    assert result.exit_code != 0
    said = " ".join(result.output.split())
    assert "--device-name" in said and part in said
    with pytest.raises(ValueError, match="unknown device"):
        gpuscale.advise(params=7e9, step_ms=900.0, batch=8192, device_name=name)

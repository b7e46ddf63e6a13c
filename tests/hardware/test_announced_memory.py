"""The GH200 with HBM3e is a part (144 GB, 4.9 TB/s: the same GPU and module as the 96 GB
HBM3 part), read from the names torch and NVML give it; a name writing the memory a product
was announced with but is not sold with (``B200 192GB``: sold as 180 GB; ``GH200 141GB``:
announced in 2023, sold as 144 GB) reads as the part sold and says so; a memory no part
has, announced or sold, is still refused naming the parts."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

import gpuscale
from gpuscale.cli import app
from gpuscale.hardware.catalogue import announced, device
from gpuscale.hardware.device_names import UnknownDevice, resolve

runner = CliRunner()


@pytest.mark.parametrize(
    ("typed", "part", "memory_gib", "bandwidth_gbs"),
    [
        ("GH200 144GB", "GH200 144GB", 144, 4900),
        ("NVIDIA GH200 144G HBM3e", "GH200 144GB", 144, 4900),  # torch's and NVML's name
        ("GH200 96GB", "GH200 96GB", 96, 4000),
        ("NVIDIA GH200 480GB", "GH200 96GB", 96, 4000),  # NVML's name of the HBM3 part
    ],
)
def test_each_gh200_name_reads_its_part(
    typed: str, part: str, memory_gib: float, bandwidth_gbs: float
) -> None:
    found = resolve(typed)
    assert (found.device.name, found.assumed) == (part, "")
    assert found.device.memory_gib == memory_gib
    assert found.device.memory_bw_gbs == bandwidth_gbs


def test_the_two_gh200_parts_share_the_gpu_and_module() -> None:
    hbm3, hbm3e = device("GH200 96GB"), device("GH200 144GB")
    for field in ("bf16_tflops", "tf32_tflops", "fp8_tflops", "board_power_w", "gpu_link"):
        assert getattr(hbm3, field) == getattr(hbm3e, field), field
    assert hbm3.default_part and not hbm3e.default_part


def test_a_bare_gh200_names_no_single_part() -> None:
    found = resolve("GH200")
    assert found.device.name == "GH200 96GB"
    assert found.others == ("GH200 144GB",)


@pytest.mark.parametrize(
    ("typed", "part", "written", "sold"),
    [("B200 192GB", "B200 180GB", 192, 180), ("GH200 141GB", "GH200 144GB", 141, 144)],
)
def test_an_announced_memory_reads_as_the_part_sold(
    typed: str, part: str, written: float, sold: float
) -> None:
    found = resolve(typed)
    assert found.device.name == part and found.device.memory_gib == sold
    assert f"{written} GB" in found.assumed and f"{sold} GB" in found.assumed
    known = {(a.part.name, a.memory_gib) for a in announced()}
    assert (part, written) in known
    for a in announced():  # each names the source that says both memories
        assert a.source.url.startswith("https://")
        assert f"{a.memory_gib:g} GB" in a.source.read_at


def test_advise_sizes_an_announced_name_on_the_part_sold() -> None:
    advice = gpuscale.advise(
        params=70e9, step_ms=900, batch=64, device_name="B200 192GB", interconnect="nvlink5"
    )
    assert advice.memory is not None
    assert advice.memory.device.memory.gib == 180
    assert advice.memory.fits_from("fsdp") == 8  # 1,120 GB of state over 8 x 193 GB


@pytest.mark.parametrize(("typed", "parts"), [("GH200 64GB", "GH200 96GB or GH200 144GB")])
def test_a_memory_no_part_has_is_still_refused(typed: str, parts: str) -> None:
    with pytest.raises(UnknownDevice):
        resolve(typed)
    result = runner.invoke(
        app, ["advise", "--params", "7M", "--step-ms", "2", "--device-name", typed]
    )
    assert result.exit_code == 2 and parts in " ".join(result.output.split()), result.output

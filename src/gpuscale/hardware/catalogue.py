"""The device catalogue: one table of the accelerators people train on, read once.

``gpuscale/data/devices.csv`` holds one row per part (an A100 SXM4 80GB, an RTX 4090):
its dense peak TFLOP/s by precision, memory (GiB, as the vendor's "GB" of GPU memory is)
and bandwidth (GB/s), board power (W), its GPU-to-GPU link (the NVLink generation of
``hardware.links``, or AMD's Infinity Fabric, with the vendor's bidirectional GB/s per GPU),
its PCIe generation and lanes, and whether the driver allows peer-to-peer over PCIe
(GeForce cards: no). Every group of values names its source (``data/device_sources.csv``:
the vendor's datasheet or whitepaper, its URL and table, and where the value was read or
that it could not be confirmed).

Peaks are **dense** (half a datasheet's "with sparsity" figure); ``bf16`` is the FP16/BF16
tensor figure with FP32 accumulate (what mixed-precision training runs); ``tf32`` is the
peak of FP32 matrix multiplications on tensor or matrix cores (FP32 where a part has none);
``bf16_native`` is False where the part has no BF16 tensor cores (Volta, Turing: the
column holds the FP16 figure). This module reads the tables; ``hardware.device_names``
resolves what a person types to a row.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass, fields
from typing import Any

from gpuscale.hardware.cited import Source, data_rows

DEVICES_FILE = "devices.csv"
SOURCES_FILE = "device_sources.csv"
# parts announced with another memory than the parts sold hold (B200: 192 GB announced,
# 180 GB sold): a name writing the announced memory reads as the part, said
ANNOUNCED_FILE = "device_memory_announced.csv"


@dataclass(frozen=True, slots=True)
class DeviceSource(Source):
    """Where a group of a device's values comes from: the vendor's document (citation,
    URL, table) and where it was read, or that it could not be confirmed (``read_at``)."""

    table: str
    read_at: str


@dataclass(frozen=True, slots=True)
class Device:
    """One part of the catalogue (see the module docstring for each field's meaning)."""

    name: str
    product: str
    vendor: str
    form_factor: str
    memory_gib: float
    default_part: bool  # the part a bare product name (``H100``) is read as
    aliases: tuple[str, ...]
    match: str  # regex on the normalised name (``device_names.normalised``)
    architecture: str
    fp32_tflops: float
    tf32_tflops: float
    bf16_tflops: float
    bf16_native: bool
    fp8_tflops: float | None
    memory_bw_gbs: float
    board_power_w: float
    gpu_link: str | None  # nvlink2..nvlink5, nvlink3-bridge, infinity-fabric
    gpu_link_gbs: float | None  # vendor's bidirectional GB/s per GPU
    pcie_gen: int | None
    pcie_lanes: int | None
    p2p_pcie: bool
    peak_source: str
    memory_source: str
    power_source: str
    link_source: str
    note: str

    @property
    def nvlink(self) -> str | None:
        """The NVLink generation (a key of ``hardware.links.NVLINK``), None without one."""
        return self.gpu_link if (self.gpu_link or "").startswith("nvlink") else None

    @property
    def board(self) -> bool:
        """Whether the part is a board on an NVLink or Infinity Fabric baseboard (SXM,
        OAM, superchip), not a PCIe card (which may take an NVLink bridge)."""
        return self.form_factor not in ("PCIe", "NVL")

    def sources(self) -> dict[str, DeviceSource]:
        """The source of each group of values: peaks, memory, power and links."""
        table = sources()
        return {
            "peaks": table[self.peak_source],
            "memory": table[self.memory_source],
            "power": table[self.power_source],
            "links": table[self.link_source],
        }


def _number(text: str, kind: Callable[[float], float] = float) -> float | None:
    """The number a cell holds, as ``kind`` (``int`` for a count); None for an empty cell."""
    return kind(float(text)) if text.strip() else None


def _yes(text: str) -> bool:
    if text not in ("yes", "no"):
        raise ValueError(f"{DEVICES_FILE}: expected yes or no, got {text!r}")
    return text == "yes"


def _whole(text: str) -> int | None:
    return _number(text, int)


def _names(text: str) -> tuple[str, ...]:
    return tuple(a.strip() for a in text.split(";") if a.strip())


# How a cell of the devices table is read: by the type of the Device field its column
# fills (an empty cell is None where the field may be None).
_READ_AS: dict[str, Callable[[str], object]] = {
    "str": str,
    "float": float,
    "bool": _yes,
    "float | None": _number,
    "int | None": _whole,
    "str | None": lambda text: text or None,
    "tuple[str, ...]": _names,
}


def _device(row: dict[str, str]) -> Device:
    cells: dict[str, Any] = {f.name: _READ_AS[str(f.type)](row[f.name]) for f in fields(Device)}
    return Device(**cells)


@functools.cache
def sources() -> dict[str, DeviceSource]:
    """Every source of the catalogue by its id."""
    return {row["id"]: DeviceSource(**row) for row in data_rows(SOURCES_FILE)}


@functools.cache
def devices() -> tuple[Device, ...]:
    """Every part of the catalogue, in the file's order."""
    return tuple(_device(row) for row in data_rows(DEVICES_FILE))


@dataclass(frozen=True, slots=True)
class Announced:
    """A part announced with ``memory_gib`` (GiB, as the vendor's "GB"), not the memory the
    parts sold hold (``part.memory_gib``), and where that is read (``source``)."""

    part: Device
    memory_gib: float
    source: DeviceSource


@functools.cache
def announced() -> tuple[Announced, ...]:
    """Every part announced with another memory than it is sold with, in the file's order."""
    return tuple(
        Announced(device(row["part"]), float(row["memory_gib"]), sources()[row["source"]])
        for row in data_rows(ANNOUNCED_FILE)
    )


def device(name: str) -> Device:
    """The part called exactly ``name`` (``KeyError`` otherwise)."""
    found = next((d for d in devices() if d.name == name), None)
    if found is None:
        raise KeyError(name)
    return found


def products() -> list[str]:
    """The catalogue's products (``H100``, ``RTX 4090``), in the file's order."""
    return list(dict.fromkeys(d.product for d in devices()))

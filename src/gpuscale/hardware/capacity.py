"""One accelerator's memory: the vendor's figure in GiB (as ``hardware.catalogue`` reads it)
from the catalogue's part, the size a family's name states (``H100-SXM5-96GB``),
``data/accelerator_memory.csv`` for the accelerators the catalogue lacks (TPUs, Gaudi,
MI325X), or a bench's record of the device it ran on; and the share of it a run may fill
(``data/usable_memory.csv``), the one rule every memory check compares against."""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

from gpuscale.hardware.cited import Source, data_rows
from gpuscale.hardware.device_names import lookup
from gpuscale.quantities import number

BYTES_PER_GB = 1e9
BYTES_PER_GIB = 2**30

# the source of a device's memory a bench recorded (torch's total_memory), not catalogued
BENCH_RECORD = "the bench's record (torch total_memory)"
# the source of a memory read from ``data/accelerator_memory.csv`` (the device catalogue
# lacks the part): this, then the row's own citation
LISTED = "the accelerator memory table (data/accelerator_memory.csv)"


@dataclass(frozen=True, slots=True)
class UsableShare:
    """The ``share`` of a device's memory a run may fill, and its ``source``: the CUDA
    context, library workspaces and the caching allocator's fragmentation hold the rest."""

    share: float
    source: Source


@functools.cache
def usable_share() -> UsableShare:
    """The usable share of a device's memory (``data/usable_memory.csv``, one row)."""
    (row,) = data_rows("usable_memory.csv")
    source = Source(id=row["id"], citation=row["citation"], url=row["url"])
    return UsableShare(share=float(row["share"]), source=source)


@dataclass(frozen=True, slots=True)
class AcceleratorMemory:
    """One accelerator's memory, GiB as the vendor states it, and where it was read."""

    family: str
    gib: float
    source: str

    @property
    def gb(self) -> float:
        return self.gib * BYTES_PER_GIB / BYTES_PER_GB

    @property
    def usable_gb(self) -> float:
        """What a run may fill (GB): :func:`usable_share` of :attr:`gb`."""
        return usable_share().share * self.gb

    def said(self) -> str:
        """The memory in GB (10^9 bytes), the unit of the model state it is compared with,
        then the GiB the catalogue (or a bench's record) holds, then the share a run may fill:
        ``85.9 GB, 80 GiB as catalogued, 77.3 GB (90%) usable`` (no "; " nor ":": a plan's
        flags are joined by the one, its reasons split at the other)."""
        if self.source == BENCH_RECORD:
            held = "as the bench recorded"
        elif self.source.startswith(LISTED):
            held = "as the accelerator memory table lists"
        else:
            held = "as catalogued"
        usable = f"{number(self.usable_gb)} GB ({usable_share().share:.0%}) usable"
        return f"{number(self.gb)} GB, {number(self.gib)} GiB {held}, {usable}"


_STATED = re.compile(r"(\d+)\s*GB\b", re.IGNORECASE)


@functools.cache
def _listed() -> dict[str, AcceleratorMemory]:
    return {
        row["family"]: AcceleratorMemory(row["family"], float(row["memory_gib"]), row["source"])
        for row in data_rows("accelerator_memory.csv")
    }


def accelerator_memory(family: str) -> AcceleratorMemory | None:
    """The memory of one device of ``family`` (an MLPerf accelerator family): the size
    its name states, else the catalogue's part, else ``accelerator_memory.csv``; None
    where none of them knows it."""
    stated = _STATED.search(family)
    if stated:
        return AcceleratorMemory(family, float(stated.group(1)), f"the family's name ({family})")
    if family in _listed():
        return _listed()[family]
    device = lookup(family)
    if device is None:
        return None
    return AcceleratorMemory(family, device.memory_gib, f"device catalogue: {device.name}")


def listed_memory(name: str) -> AcceleratorMemory | None:
    """The memory ``data/accelerator_memory.csv`` records for the accelerator ``name`` means,
    read as MLPerf's accelerator names are (``a10g``, ``Gaudi 2``, ``TPU v5p``), its source
    :data:`LISTED` then the row's citation; None where the table records none."""
    from gpuscale.hardware.accelerators import normalise_accelerator  # lazy: the catalogue

    row = _listed().get(normalise_accelerator(name).family)
    return (
        None if row is None else AcceleratorMemory(row.family, row.gib, f"{LISTED}: {row.source}")
    )

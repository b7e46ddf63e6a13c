"""The device an advice runs on, resolved once: the name a person gave (``--device-name``),
the one a bench recorded, or, with none named, the one the link implies (``nvlink4``: an
H100 SXM board), read through the device catalogue's one resolver
(``hardware.device_names``) into a :class:`DeviceRecord`. Everything that needs the
device later (the link of its board, its power, the rate checked against its peak, its
memory) reads the record, never the name again.
"""

from __future__ import annotations

from dataclasses import dataclass

from gpuscale.hardware.catalogue import Device
from gpuscale.hardware.device_names import UnknownDevice, resolve
from gpuscale.hardware.links import LINK_DEVICE, PRESETS
from gpuscale.hardware.peaks import Peak, peak_of


def implied_device(link_name: str) -> str | None:
    """The device a link preset's name implies, whatever its case (``nvlink4``,
    ``NVLINK4``, ``nvlink4 (detected)`` -> H100 SXM), else None."""
    name = link_name.strip().lower()
    for prefix, device in LINK_DEVICE.items():
        if name.startswith(prefix):
            return device
    return None


@dataclass(frozen=True, slots=True)
class DeviceRecord:
    """A device as the catalogue knows it: ``part`` (its peak by precision in ``peak``,
    board power, memory, NVLink and P2P) and ``assumed``, the sentence saying what the name
    left open and how it was read ("" where it names one part); a name the catalogue has
    no part for has ``part`` None and the ``closest`` names. ``name`` as named, recorded
    or implied; None where there is none (no device named and the link implies none)."""

    name: str | None = None
    part: Device | None = None
    peak: Peak | None = None
    assumed: str = ""
    closest: tuple[str, ...] = ()

    @property
    def memory_bytes(self) -> float | None:
        """The part's memory in bytes (the vendor's "GB" read as the decimal unit: an
        H100 80GB holds 80e9), None for an unknown device."""
        return self.part.memory_gib * 1e9 if self.part is not None else None

    @property
    def nvlink_board(self) -> str | None:
        """The NVLink preset of a part on an NVLink baseboard (``H100``: the SXM5 part),
        None for PCIe and NVL cards (an NVLink bridge is no given), parts without NVLink
        and unknown devices."""
        part = self.part
        return part.nvlink if part is not None and part.board and part.nvlink in PRESETS else None


# No device: none named, recorded or implied.
NO_DEVICE = DeviceRecord()


def device_record(name: str | None, implied_by: str | None = None) -> DeviceRecord:
    """The record of the device ``name`` (as named, or recorded by a bench); with none
    named, of the device the link preset ``implied_by`` implies (:func:`implied_device`);
    an empty record where neither gives a device."""
    if not name and implied_by:
        name = implied_device(implied_by)
    if not name or not name.strip():
        return DeviceRecord(name)
    try:
        found = resolve(name)
    except UnknownDevice as unknown:
        return DeviceRecord(name, closest=tuple(unknown.closest))
    return DeviceRecord(name, found.device, peak_of(found.device), found.assumed)

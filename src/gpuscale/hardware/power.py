"""Board power limits per device, for energy per trained model when nothing measured it.

The board power (W) is the device catalogue's (``gpuscale/data/devices.csv``, each with
its datasheet in ``device_sources.csv``), found by the one resolver of device names
(``hardware.device_names``). Training runs near the limit, so it is an upper estimate
(``gpuscale.advice.model.hardware`` puts a measured figure before it). CPUs and devices
the catalogue does not know have no entry.
"""

from __future__ import annotations

from gpuscale.hardware.catalogue import devices, products
from gpuscale.hardware.device_names import lookup


def board_power(device_name: str | None) -> tuple[float, str] | None:
    """(board power W, the catalogue part it is of) of a device by its name, None when
    the catalogue does not know it."""
    if (part := lookup(device_name)) is None:
        return None
    return part.board_power_w, part.name


def board_labels() -> list[str]:
    """Every product and part the catalogue names, for a did-you-mean."""
    return list(dict.fromkeys([*products(), *(d.name for d in devices())]))

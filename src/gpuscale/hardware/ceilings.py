"""The numbers a user types above which none can be true, by field: ten times
(``CEILING_FACTOR``) the highest the package's cited data holds, as the floors
(``plausibility.TYPED_FLOORS``) are a tenth of the lowest. A link's bus bandwidth above ten
times the fastest line rate of ``data/links.json`` (NVLink 5: 900 GB/s per direction, the
B200's 18 links x 50 GB/s, its datasheet) is a unit mistaken (MB/s typed as GB/s), and a
device's power above ten times the highest board power of ``data/devices.csv`` (1,000 W:
B200, GH200, their datasheets) is one in mW, or a node's or a rack's typed for one device.
Flagged where the request is read and kept out of advice, as numbers under their floors are."""

from __future__ import annotations

import functools
import math
from collections.abc import Mapping
from dataclasses import dataclass

from gpuscale.hardware.catalogue import devices
from gpuscale.hardware.links import PRESETS

CEILING_FACTOR = 10.0


@dataclass(frozen=True, slots=True)
class Ceiling:
    """A field's ceiling (its unit's), ``CEILING_FACTOR`` x ``top``, the highest the data
    holds, which is ``of``'s (a link preset, a catalogue part)."""

    field: str
    ceiling: float
    top: float
    of: str


@functools.cache
def typed_ceilings() -> dict[str, Ceiling]:
    """Each typed number's ceiling by its field (the advice request's and the plan's)."""
    rated = [p for p in PRESETS.values() if p.line_rate_gbs is not None]
    link = max(rated, key=lambda p: p.line_rate_gbs or 0.0)
    part = max(devices(), key=lambda d: d.board_power_w)
    top_gbs, top_w = float(link.line_rate_gbs or 0.0), part.board_power_w
    return {
        "busbw_gbs": Ceiling("busbw_gbs", CEILING_FACTOR * top_gbs, top_gbs, link.name),
        "power_w": Ceiling("power_w", CEILING_FACTOR * top_w, top_w, part.name),
    }


def above_ceiling(typed: Mapping[str, object]) -> list[tuple[Ceiling, float]]:
    """(its ceiling, the value) of each number ``typed`` (field -> value; None: not given)
    above the ceiling of its field; fields without one are not checked."""
    found = []
    for name, value in typed.items():
        ceiling = typed_ceilings().get(name)
        if ceiling is None or not isinstance(value, int | float) or not math.isfinite(value):
            continue
        if value > ceiling.ceiling:
            found.append((ceiling, float(value)))
    return found

"""One plan request: what ``gpuscale plan`` and ``gpuscale.planning`` are asked, written once.

The CLI builds a :class:`PlanRequest` from its options; ``gpuscale.planning`` takes one (or the
same fields as keywords). Validation happens here, so both paths refuse the same input
with the same message.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import ClassVar

from gpuscale.tables import DEFAULT_EFFICIENCY_THRESHOLD
from gpuscale.tables.requests import JsonRequest

HELP: dict[str, str] = {
    "workload": "MLPerf benchmark or the study's name (e.g. llama2_70b_lora, bert, sd).",
    "accelerator": "Accelerator or family (e.g. H100 = H100-SXM5-80GB, B200, MI300X).",
    "devices": "Device counts: a list (8,16,64) or a range (8-256: powers of two; "
    "8-64:8 in steps of 8).",
    "devices_per_node": "Devices per node (for the node count shown); default 8.",
    "interconnect": "Interconnect of the planned cluster, as free text (noted, not modelled).",
    "price_per_device_hour": "Price per device-hour (any currency) for the cost column.",
    "power_w": "Average power per device in watts (for energy_kwh).",
    "threshold": "Efficiency threshold of the equilibrium criterion E' >= threshold x best.",
}

MAX_DEVICES = 1_000_000


def parse_devices(text: str) -> tuple[int, ...]:
    """``8,16,64`` -> (8, 16, 64); ``8-256`` -> powers of two from 8 to 256; ``8-64:8``
    -> 8, 16, ..., 64. ValueError on anything else."""
    out: list[int] = []
    for part in (p.strip() for p in str(text).split(",")):
        if not part:
            continue
        match = re.fullmatch(r"(\d+)\s*-\s*(\d+)(?:\s*:\s*(\d+))?", part)
        if match:
            low, high = int(match.group(1)), int(match.group(2))
            if low < 1 or high < low:
                raise ValueError(f"device range {part!r}: need 1 <= low <= high")
            if match.group(3):
                step = int(match.group(3))
                if step < 1:
                    raise ValueError(f"device range {part!r}: the step must be >= 1")
                out.extend(range(low, high + 1, step))
            else:
                n = low
                while n <= high:
                    out.append(n)
                    n *= 2
        elif part.isdigit():
            out.append(int(part))
        else:
            raise ValueError(
                f"device count {part!r} is not a whole number or a range "
                "(e.g. 8,16,64 or 8-256 or 8-64:8)"
            )
    if not out:
        raise ValueError("no device count given (e.g. --devices 8,16,64)")
    return tuple(sorted(set(out)))


@dataclass(frozen=True, kw_only=True, slots=True)
class PlanRequest(JsonRequest):
    """What to plan; see ``HELP`` for each field. ``devices`` may be given as a string
    (``"8,16,64"``, ``"8-256"``) or a sequence of counts."""

    json_name: ClassVar[str] = "plan request"
    workload: str
    accelerator: str
    devices: tuple[int, ...] = (8, 16, 32, 64, 128, 256)
    devices_per_node: int = 8
    interconnect: str | None = None
    price_per_device_hour: float | None = None
    power_w: float | None = None
    threshold: float = DEFAULT_EFFICIENCY_THRESHOLD

    def __post_init__(self) -> None:
        devices = self.devices
        if isinstance(devices, str):
            devices = parse_devices(devices)
        try:
            devices = tuple(sorted({int(d) for d in devices}))
        except (TypeError, ValueError):
            raise ValueError(f"devices must be whole numbers, got {self.devices!r}") from None
        object.__setattr__(self, "devices", devices)
        if not devices or devices[0] < 1 or devices[-1] > MAX_DEVICES:
            raise ValueError(f"device counts must be between 1 and {MAX_DEVICES:,}")
        for name in ("workload", "accelerator"):
            if not str(getattr(self, name) or "").strip():
                raise ValueError(f"{name} is required: {HELP[name]}")
        if self.devices_per_node < 1:
            raise ValueError(f"devices_per_node must be >= 1: {HELP['devices_per_node']}")
        for name in ("price_per_device_hour", "power_w"):
            value = getattr(self, name)
            if value is not None and not (math.isfinite(value) and value >= 0):
                raise ValueError(f"{name} must be a finite number >= 0, got {value!r}")
        if not 0 < self.threshold <= 1:
            raise ValueError(f"threshold must be in (0, 1], got {self.threshold}")

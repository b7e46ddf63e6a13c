"""Device power for energy per trained model: measured where the bench measured it, else a
documented table chosen by the recorded device, never a guess for an unknown one.

Board power limits (W), the vendors' datasheets (retrieved 2026): H100 SXM5 700, H100 PCIe
350, H100 NVL 400, H200 SXM 700, H200 NVL 600, B200 1,000, A100 SXM4 400, A100 PCIe 300
(80 GB; 250 for 40 GB), L40S 350, L4 72, A10 150, T4 70, RTX 4090 450, RTX 4070 Ti SUPER
285, RTX 3090 350, RTX A5000 230, RTX A6000 300, V100 SXM2 300, MI300X 750. Training runs
near the limit,
so the table is an upper estimate; NVML's measured mean replaces it when present. CPUs
have no entry: their package power comes from RAPL (``gpuscale bench`` on a CPU device)
or from ``--power-w``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# (pattern on the lower-cased device name, board power W, what it is). First match wins.
BOARD_POWER_W: tuple[tuple[str, float, str], ...] = (
    (r"h100.*nvl", 400.0, "H100 NVL"),
    (r"h100.*pcie", 350.0, "H100 PCIe"),
    (r"h200.*nvl", 600.0, "H200 NVL"),
    (r"gh200|h100|h200|h800", 700.0, "H100/H200 SXM"),
    (r"gb200|b200", 1000.0, "B200"),
    (r"a100.*pcie.*40|a100-pcie-40", 250.0, "A100 PCIe 40 GB"),
    (r"a100.*pcie", 300.0, "A100 PCIe"),
    (r"a100|a800", 400.0, "A100 SXM4"),
    (r"l40s", 350.0, "L40S"),
    (r"\bl4\b", 72.0, "L4"),
    (r"\ba10\b", 150.0, "A10"),
    (r"\bt4\b", 70.0, "T4"),
    (r"rtx 4090", 450.0, "RTX 4090"),
    (r"rtx 4070 ti super", 285.0, "RTX 4070 Ti SUPER"),
    (r"rtx 3090", 350.0, "RTX 3090"),
    (r"rtx a5000", 230.0, "RTX A5000"),
    (r"rtx a6000", 300.0, "RTX A6000"),
    (r"v100", 300.0, "V100 SXM2"),
    (r"mi300x", 750.0, "MI300X"),
)


@dataclass(frozen=True, slots=True)
class Power:
    """Watts per device and where the figure comes from; ``watts`` None when unknown."""

    watts: float | None
    source: str
    # (N, W of the whole job) measured at N by the bench (every device, each CPU package
    # once): energy at a measured N uses it instead of watts x N
    total_w_at: tuple[tuple[int, float], ...] = ()

    def total_w(self, devices: int) -> float | None:
        """Watts of ``devices`` devices: measured at that count, else ``watts`` x N."""
        measured = dict(self.total_w_at)
        if devices in measured:
            return measured[devices]
        return None if self.watts is None else self.watts * devices

    def source_at(self, devices: int) -> str:
        """Where the power charged at ``devices`` comes from."""
        if devices in dict(self.total_w_at):
            return f"measured at {devices} device(s) (whole job)"
        if self.watts is None:
            return "unknown"
        return self.source if devices == 1 else f"{self.source} x {devices}"


def device_power(
    device: str | None,
    device_name: str | None,
    *,
    measured_w: float | None = None,
    given_w: float | None = None,
) -> Power:
    """The power to charge per device: given > measured > the board table; a CPU or an
    unknown device without a measurement gets None (no energy claimed)."""
    if given_w is not None:
        if not given_w >= 0:
            raise ValueError(f"power must be >= 0 W, got {given_w}")
        return Power(given_w, "given")
    if measured_w is not None and measured_w > 0:
        kind = "RAPL package share" if device == "cpu" else "NVML"
        return Power(measured_w, f"measured ({kind})")
    if device == "cpu":
        return Power(None, "unknown: no RAPL reading on this CPU; give --power-w")
    name = (device_name or "").lower()
    for pattern, watts, label in BOARD_POWER_W:
        if name and re.search(pattern, name):
            assumed = "SXM" in label and not re.search(r"sxm|hgx|dgx", name)
            return Power(
                watts,
                f"board power of {label} (datasheet)"
                + (
                    f"; {device_name!r} names no form factor, so SXM ({watts:g} W) is "
                    "assumed: name it (e.g. 'H100 PCIe', 'H100 NVL') or give --power-w"
                    if assumed
                    else ""
                ),
            )
    what = device_name or "an unrecorded device"
    return Power(None, f"unknown: no board power for {what}; give --power-w")

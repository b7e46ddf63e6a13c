"""Device power for energy per trained model: measured where the bench measured it, else a
documented table chosen by the recorded device, never a guess for an unknown one.

The board power limits are the hardware catalogue's (``gpuscale.hardware.power``, with
the vendors' datasheets). Training runs near the limit,
so the table is an upper estimate; NVML's measured mean replaces it when present. CPUs
have no entry: their package power comes from RAPL (``gpuscale bench`` on a CPU device)
or from ``--power-w``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from gpuscale.hardware.power import BOARD_POWER_W
from gpuscale.tables.bench import BATCH_PART, group_and_batch

if TYPE_CHECKING:  # a bench table: pandas, not imported to say a device's power
    import pandas as pd


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


def power_at_batch(
    table: pd.DataFrame, cal: Any, batch: int
) -> tuple[float | None, tuple[tuple[int, float], ...]]:
    """(watts per device at N = 1, the job's watts measured at each N) for the advice's
    per-device ``batch``: the calibrated run's, unless a trustworthy N = 1 run of the same
    configuration measured power at that batch (a device's power follows its batch: 469 W
    at 64 and 597 W at 256 on the H100 tf-7m rows), whose watts then stand for every N."""
    if batch == cal.batch or "config_group" not in table:
        return cal.power_w, cal.power_w_at
    same = group_and_batch(table["config_group"])[0]
    rows = table[
        (same == cal.config_group.rsplit(BATCH_PART, 1)[0])
        & (table["accelerators"] == 1)
        & (table["batch_per_device"] == batch)
        & (table["status"] == "ok")
        & ~table["flagged"].fillna(False).astype(bool)
    ].dropna(subset=["power_w_mean"])
    if rows.empty:
        return cal.power_w, cal.power_w_at
    return float(rows["power_w_mean"].iloc[-1]), ()

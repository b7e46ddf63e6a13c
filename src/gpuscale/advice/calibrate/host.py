"""The host a bench's runs recorded (:func:`host_of`): its link, the board that link implies,
its GPUs and cores, read from the bench table; the machine an advice predicts stands on it
where this machine detects no link or another (``link.machine_of``)."""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from gpuscale.advice.calibration import Calibration
from gpuscale.advice.model.hardware import implied_device
from gpuscale.hardware import links
from gpuscale.interconnect.network import Link


@dataclass(frozen=True, slots=True)
class BenchHost:
    """The host the runs calibrated on recorded (None: not recorded): its link (a preset,
    and the device it implies) stands where none is given, measured or detected here, or
    this machine detected another; its cores cap CPU processes."""

    link: Link | None
    board: str | None
    gpus: int | None
    cores: int | None
    kind: str | None
    threads: int | None
    device: str | None


def host_of(table: pd.DataFrame, cal: Calibration) -> BenchHost:
    """Of ``cal``'s configuration in ``table`` (every device count)."""
    rows = table[table["config_group"] == cal.bench.config_group]

    def most(column: str) -> int | None:
        values = pd.to_numeric(rows.get(column, pd.Series(dtype=float)), errors="coerce")
        return None if values.isna().all() else int(values.max())

    named = set(rows.get("host_link", pd.Series(dtype=object)).dropna().astype(str)) - {""}
    link = named.pop() if len(named) == 1 and next(iter(named)) in links.PRESETS else None
    gpus, cores = most("host_devices"), most("host_cpu_count")
    return BenchHost(
        None if link is None else Link.from_preset(link),
        None if link is None else implied_device(link),
        gpus,
        cores,
        cal.bench.device_kind,
        cal.bench.threads,
        cal.machine.device.name,
    )

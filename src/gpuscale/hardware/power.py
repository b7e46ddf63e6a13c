"""Board power limits per device, for energy per trained model when nothing measured it.

The board power (W) is the device catalogue's (``gpuscale/data/devices.csv``, each with
its datasheet in ``device_sources.csv``), found by the one resolver of device names
(``hardware.device_names``). Training runs near the limit, so it is an upper estimate
(``gpuscale.advice.model.hardware`` puts a measured figure before it). CPUs and devices
the catalogue does not know have no entry. A bench's measured watts per batch are charged
to another batch by :func:`watts_at`.
"""

from __future__ import annotations

import math

from gpuscale.hardware.device_names import lookup


def board_power(device_name: str | None) -> tuple[float, str] | None:
    """(board power W, the catalogue part it is of) of a device by its name, None when
    the catalogue does not know it."""
    if (part := lookup(device_name)) is None:
        return None
    return part.board_power_w, part.name


# (per-device batch, W per device) a bench measured, and (N, per-device batch, W of the
# whole job)
PerBatch = tuple[tuple[int, float], ...]
WholeJob = tuple[tuple[int, int, float], ...]


def charged_at(at_batch: PerBatch, batch: float) -> tuple[str, tuple[float, ...]]:
    """How per-device ``batch`` is charged from the watts measured per batch (``at_batch``,
    not empty): ``("own", (batch,))`` measured at it, ``("between", (low, high))`` the two
    measured around it, else ``("nearest", (b,))``."""
    measured = dict(at_batch)
    if batch in measured:
        return "own", (batch,)
    below = [b for b in measured if b < batch]
    above = [b for b in measured if b > batch]
    if below and above:
        return "between", (max(below), min(above))
    return "nearest", (min(measured, key=lambda b: abs(b - batch)),)


def watts_at(at_batch: PerBatch, batch: float) -> float:
    """W per device at per-device ``batch`` (:func:`charged_at`); between two measured
    batches interpolated in log batch: ``w_low + (w_high - w_low) ln(b / low) / ln(high / low)``."""
    measured = dict(at_batch)
    how, batches = charged_at(at_batch, batch)
    if how != "between":
        return measured[batches[0]]
    low, high = batches
    share = math.log(batch / low) / math.log(high / low)
    return measured[low] + share * (measured[high] - measured[low])


def whole_job_w(total_w_at: WholeJob, devices: int, batch: float | None) -> float | None:
    """The whole job's watts measured at ``devices`` and per-device ``batch`` (any batch
    where ``batch`` is None), else None."""
    for n, b, watts in total_w_at:
        if n == devices and (batch is None or b == batch):
            return watts
    return None

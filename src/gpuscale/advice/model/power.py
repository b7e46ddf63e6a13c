"""A device's power per device (``device_power``: given > measured by the bench > the
catalogue part's board power, an upper estimate, of the device named, else of the one
assumed where none is (the one the memory check reads); None for a CPU or an unknown
device unmeasured), and a job's watts at each count and batch (``Power``)."""

from __future__ import annotations

import operator
from dataclasses import dataclass

from gpuscale.advice.model.hardware import DeviceRecord
from gpuscale.advice.types import maybe
from gpuscale.hardware.power import PerBatch, WholeJob, watts_at, whole_job_w
from gpuscale.tables.codes import Code

# What measures a device's power, by its kind (``cpu``, ``cuda``): NVML but on a CPU
METERS = {"cpu": "RAPL package share"}


class PowerKind(Code):  # where a device's watts come from
    GIVEN = "given"  # --power-w
    MEASURED = "measured"  # by the bench (NVML; a CPU's RAPL package share)
    BOARD = "board"  # the catalogue part's board power (its datasheet)
    ASSUMED = "assumed"  # the board power of the device assumed where none is named
    NO_RAPL = "no_rapl"  # unknown: a CPU without a RAPL reading
    UNKNOWN = "unknown"  # unknown: a device without a board power


@dataclass(frozen=True, slots=True)
class Power:
    """Watts per device (None: unknown), their ``kind``, the ``device`` whose board power it
    is or is not, what its name left open (``assumed``) and the link that implies it;
    ``source`` those in words (``explain.explanation.worded``)."""

    watts: float | None
    source: str = ""
    # the whole job's watts at (N, batch) (every device, each CPU package once): energy
    # there uses it instead of watts x N
    total_w_at: WholeJob = ()
    at_batch: PerBatch = ()  # W per device by N = 1 runs of the same configuration
    meter: str = "NVML"  # what measured ``watts`` or ``at_batch`` (NVML, RAPL package share)
    kind: PowerKind = PowerKind.UNKNOWN
    device: str | None = None
    assumed: str = ""
    implied_by: str | None = None

    @property
    def measured(self) -> bool:
        return self.kind is PowerKind.MEASURED

    def per_device(self, batch: float | None) -> float | None:
        if not self.at_batch or batch is None:
            return self.watts
        return watts_at(self.at_batch, batch)

    def total_w(self, devices: int, batch: float | None = None) -> float | None:
        """Watts of ``devices`` at ``batch``: the whole job's measured, else per device x N."""
        if (measured := whole_job_w(self.total_w_at, devices, batch)) is not None:
            return measured
        return maybe(operator.mul, self.per_device(batch), devices)


def device_power(
    device: str | None,
    record: DeviceRecord,
    *,
    measured_w: float | None = None,
    given_w: float | None = None,
    implied_by: str | None = None,
    assumed: DeviceRecord | None = None,
) -> Power:
    """The power per device of kind ``device`` (``cpu``, ``cuda``), in the module's order;
    ``assumed``: the device assumed where ``record`` names none (``Machine.assumed_device``)."""
    if given_w is not None:
        if not given_w >= 0:
            raise ValueError(f"power must be >= 0 W, got {given_w}")
        return Power(given_w, kind=PowerKind.GIVEN)
    if measured_w is not None and measured_w > 0:
        return Power(measured_w, meter=METERS.get(device, "NVML"), kind=PowerKind.MEASURED)
    if device == "cpu":
        return Power(None, kind=PowerKind.NO_RAPL)
    part = record.part
    if part is not None:
        board = {"device": part.name, "assumed": record.assumed, "implied_by": implied_by}
        return Power(part.board_power_w, kind=PowerKind.BOARD, **board)
    if not record.name and assumed is not None and assumed.part is not None:
        watts, name = assumed.part.board_power_w, assumed.part.name
        return Power(watts, kind=PowerKind.ASSUMED, device=name)
    return Power(None, device=record.name)

"""Device power for energy per trained model: given (``--power-w``) > measured by the bench
(NVML; a CPU's RAPL package share) > the board power of the catalogue's part (an upper
estimate); None for a CPU or an unknown device without a measurement."""

from __future__ import annotations

import operator
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from gpuscale.advice.measured_runs import trusted_runs
from gpuscale.advice.model.hardware import DeviceRecord
from gpuscale.advice.types import maybe
from gpuscale.hardware.power import PerBatch, WholeJob, watts_at, whole_job_w
from gpuscale.tables.bench import BATCH_PART, group_and_batch
from gpuscale.tables.codes import Code

if TYPE_CHECKING:  # a bench table: pandas, not imported to say a device's power
    import pandas as pd

# What measures a device's power, by its kind (``cpu``, ``cuda``): NVML but on a CPU
METERS = {"cpu": "RAPL package share"}


class PowerKind(Code):
    """Where a device's watts come from."""

    GIVEN = "given"  # --power-w
    MEASURED = "measured"  # by the bench (NVML; a CPU's RAPL package share)
    BOARD = "board"  # the catalogue part's board power (its datasheet)
    NO_RAPL = "no_rapl"  # unknown: a CPU without a RAPL reading
    UNKNOWN = "unknown"  # unknown: a device without a board power


@dataclass(frozen=True, slots=True)
class Power:
    """Watts per device (None: unknown) and where they come from: their ``kind``, the
    ``device`` whose board power it is or is not, what its name left open (``assumed``), the
    link that implies it (``implied_by``); ``source`` those in words
    (``explain.power_words``)."""

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
        """``watts`` measured by the bench, not given nor the board's."""
        return self.kind is PowerKind.MEASURED

    def per_device(self, batch: float | None) -> float | None:
        """W per device at per-device ``batch``, interpolated in log batch
        (``explain.power_words`` says where they come from)."""
        if not self.at_batch or batch is None:
            return self.watts
        return watts_at(self.at_batch, batch)

    def total_w(self, devices: int, batch: float | None = None) -> float | None:
        """Watts of ``devices`` at per-device ``batch``: the whole job's measured, else
        per device x N."""
        if (measured := whole_job_w(self.total_w_at, devices, batch)) is not None:
            return measured
        return maybe(operator.mul, self.per_device(batch), devices)


def device_power(
    device: str | None,
    record: DeviceRecord,
    *,
    measured_w: float | None = None,
    given_w: float | None = None,
) -> Power:
    """The power per device (``device``: its kind, ``cpu`` or ``cuda``), in the module's
    order."""
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
        return Power(
            part.board_power_w, kind=PowerKind.BOARD, device=part.name, assumed=record.assumed
        )
    return Power(None, device=record.name)


def bench_power(
    table: pd.DataFrame,
    model: str,
    group: str,
    *,
    device: str | None,
    record: DeviceRecord,
    given_w: float | None = None,
) -> Power:
    """The power from bench rows: the trusted N = 1 runs of ``model`` in configuration
    ``group`` (W per device per batch, the latest) and the whole job's per (N, batch) (median);
    where the configuration measured none, the latest N = 1 run of ``model`` that did."""
    if given_w is not None or "power_w_mean" not in table:
        return device_power(device, record, given_w=given_w)
    ok = trusted_runs(table)
    own = ok[ok["model"] == model]
    config, batch = group.rsplit(BATCH_PART, 1) if BATCH_PART in group else (group, "")
    same = own[group_and_batch(own["config_group"])[0] == config]
    single = same[same["accelerators"] == 1].dropna(subset=["power_w_mean"])
    at_batch = single.groupby("batch_per_device")["power_w_mean"].last()
    if at_batch.empty:  # another configuration's figure, for every batch
        other = own[own["accelerators"] == 1]["power_w_mean"].dropna()
        watts = float(other.iloc[-1]) if len(other) else None
        return device_power(device, record, measured_w=watts)
    reference = int(batch) if batch.isdigit() else int(single["batch_per_device"].iloc[-1])
    watts = float(at_batch.get(reference, at_batch.iloc[-1]))
    power = device_power(device, record, measured_w=watts)
    totals = same.dropna(subset=["power_w_total"])
    totals = totals.groupby(["accelerators", "batch_per_device"])["power_w_total"].median()
    return replace(
        power,
        at_batch=tuple((int(b), float(w)) for b, w in at_batch.items()),
        total_w_at=tuple((int(n), int(b), float(w)) for (n, b), w in totals.items()),
        meter=METERS.get(device, "NVML"),
    )


def named_power(record: DeviceRecord, given_w: float | None, implied_by: str | None) -> Power:
    """The power per device of ``record``'s device, implied by the link ``implied_by`` where
    it is."""
    power = device_power(None, record, given_w=given_w)
    if implied_by is not None and given_w is None and power.watts is not None:
        return replace(power, implied_by=implied_by)
    return power

"""The device an advice runs on, as resolved once, and what its hardware allows.

The record (:class:`DeviceRecord`, resolved by ``calibrate.link.device_record`` where the
link is chosen): the name a person gave (``--device-name``), the one a bench recorded, or,
with none named, the one the link implies (``nvlink4``: an H100 SXM board), read through
the catalogue's one resolver (``hardware.device_names``); everything later (its board's
link, power, peak, memory) reads the record, never the name again.

Inputs that cannot be true, named where they are found: an achieved rate under 1% of
the device's peak or above it (a device count above the GPUs of the topology:
``calibrate.link``; a time to train below MLPerf's fastest systems: ``priors.mlperf_floor``;
a step shorter than its kernels: ``model/floors.py``).
The house's plausibility rules are ``gpuscale/plausibility.py`` (bottom floor: a run's
own numbers); these limits need the hardware and MLPerf's results, floors above it.

Device power for energy per trained model: measured where the bench measured it, else the
board power limit of the catalogue's part (the vendors' datasheets): training runs near the
limit, so it is an upper estimate; never a guess for an unknown device. CPUs have no entry:
their package power comes from RAPL (``gpuscale bench`` on a CPU) or from ``--power-w``.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from gpuscale.advice.types import Finding, FindingKind, trusted_runs
from gpuscale.hardware.catalogue import Device
from gpuscale.hardware.links import PRESETS
from gpuscale.hardware.peaks import PEAKS, Peak
from gpuscale.quantities import counted, joined, noun_for
from gpuscale.tables.bench import BATCH_PART, group_and_batch

if TYPE_CHECKING:  # a bench table: pandas, not imported to say a device's power
    import pandas as pd


@dataclass(frozen=True, slots=True)
class DeviceRecord:
    """A device as the catalogue knows it: ``part`` (its peak in ``peak``, board power,
    memory, NVLink and P2P), ``peaks_tflops`` (the peak's TFLOP/s at the precisions the
    advice reads, resolved with it: ``bf16``, ``fp16``, ``fp32``, and ``tf32``, fp32 with
    TF32 on) and ``assumed``, the sentence saying what the name left open and how it was
    read ("" where it names one part); a name the catalogue has no part for has ``part``
    None and the ``closest`` names. ``name`` as named, recorded or implied; None where
    there is none (no device named and the link implies none)."""

    name: str | None = None
    part: Device | None = None
    peak: Peak | None = None
    assumed: str = ""
    closest: tuple[str, ...] = ()
    peaks_tflops: tuple[tuple[str, float], ...] = ()

    def tflops(self, precision: str, tf32: bool = False) -> float | None:
        """The peak TFLOP/s at ``precision`` (fp32 with ``tf32``: TF32's); None: no peak."""
        return dict(self.peaks_tflops).get("tf32" if tf32 and precision == "fp32" else precision)

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


NO_DEVICE = DeviceRecord()  # none named, recorded or implied
MIN_MFU = 0.01  # a step's work runs at least this share of the device's peak


def rate_warnings(
    tflops: float,
    device: DeviceRecord,
    precision: str,
    *,
    low: bool = True,
    fixed_taken_ms: float | None = None,
    flops_assumed: bool = False,
) -> list[Finding]:
    """A finding when the achieved TFLOP/s per device is above the device's highest
    (bf16) peak or (with ``low``) under ``MIN_MFU`` of its peak at ``precision``
    (``fixed_taken_ms``: the fixed cost taken, the other reading of a low rate;
    ``flops_assumed``: the FLOPs per sample were not given but taken as 6 x parameters, a
    transformer's, which a low rate rests on); for an unknown device, only a rate above
    every known device's peak."""
    peak, at = device.peak, device.tflops(precision)
    # the most a rate can be: the device's highest (bf16) peak, else the fastest known
    top = peak or max((p for _, p in PEAKS), key=lambda p: p.bf16)
    if tflops > top.bf16:
        kind = FindingKind.RATE_ABOVE_PEAK if peak else FindingKind.RATE_ABOVE_EVERY_PEAK
        return [Finding.of(kind, tflops=tflops, peak_tflops=top.bf16, device=top.device)]
    if peak is None or at is None:
        return []
    if low and tflops < MIN_MFU * at:
        found = Finding.of(
            FindingKind.RATE_UNDER_FLOOR,
            tflops=tflops,
            share_pct=100 * tflops / at,
            floor_pct=100 * MIN_MFU,
            floor_share=MIN_MFU,
            device=peak.device,
            precision=precision,
            peak_tflops=at,
            flops_assumed=flops_assumed,
            fixed_taken_ms=fixed_taken_ms,
        )
        return [found]
    return []


def unchecked_note(
    tflops: float, device: DeviceRecord, precision: str, rate_of: str = "inputs"
) -> Finding | None:
    """Where a device is named but the device catalogue has no peak for it (an A10G, a
    TPU), the finding that the rate (``rate_of``: ``inputs``, ``inputs_whole_step`` or
    ``bench``, what gives it) could not be checked against its peak; None where there is
    no device or its peak is known (the check was made)."""
    if not device.name or device.peak is not None:
        return None
    fastest = max((p for _, p in PEAKS), key=lambda p: p.bf16)
    return Finding.of(
        FindingKind.PEAK_UNCHECKED,
        tflops=tflops,
        device=device.name,
        rate_of=rate_of,
        fastest=fastest.device,
        fastest_tflops=fastest.bf16,
        precision=precision,
    )


@dataclass(frozen=True, slots=True)
class Power:
    """Watts per device and where the figure comes from; ``watts`` None when unknown.

    A device's power follows its batch: ``at_batch`` holds the watts per device that N = 1
    runs of the advised configuration measured at each per-device batch, and each count is
    charged the watts of its own per-device batch where measured, else interpolated, else
    the nearest measured (``per_device``; :meth:`said` says which for each count)."""

    watts: float | None
    source: str
    # (N, per-device batch, W of the whole job) measured by the bench (every device, each
    # CPU package once): energy at that N and batch uses it instead of watts x N
    total_w_at: tuple[tuple[int, int, float], ...] = ()
    # (per-device batch, W per device) measured by N = 1 runs of the same configuration
    at_batch: tuple[tuple[int, float], ...] = ()
    meter: str = "NVML"  # what measured ``at_batch`` (NVML, RAPL package share)
    measured: bool = False  # ``watts`` measured by the bench, not given nor the board's

    def basis(self, batch: float) -> tuple[str, tuple[float, ...]]:
        """How per-device ``batch`` is charged from the N = 1 runs (``at_batch`` not empty):
        ``("own", (batch,))`` measured at it, ``("between", (low, high))`` interpolated
        between the two measured around it, ``("nearest", (b,))`` the nearest measured."""
        measured = dict(self.at_batch)
        if batch in measured:
            return "own", (batch,)
        below = [b for b in measured if b < batch]
        above = [b for b in measured if b > batch]
        if below and above:
            return "between", (max(below), min(above))
        return "nearest", (max(below) if below else min(above),)

    def per_device(self, batch: float | None) -> tuple[float | None, str]:
        """(W per device, where it comes from) at per-device ``batch``: the N = 1 run at
        that batch, else interpolated (in log batch) between the two measured around it,
        else the nearest measured batch (:meth:`basis`); ``watts`` without per-batch
        measurements."""
        if not self.at_batch or batch is None:
            return self.watts, self.source
        measured = dict(self.at_batch)
        kind = f"measured ({self.meter}) by an N = 1 run"
        how, batches = self.basis(batch)
        if how == "own":
            return measured[batch], f"{kind} at batch {batch:g}"
        if how == "between":
            low, high = batches
            share = math.log(batch / low) / math.log(high / low)
            watts = measured[low] + share * (measured[high] - measured[low])
            return watts, (
                f"interpolated (log batch) between the N = 1 runs ({self.meter}) at batch "
                f"{low:g} ({measured[low]:.0f} W) and {high:g} ({measured[high]:.0f} W)"
            )
        nearest = batches[0]
        return measured[nearest], (
            f"{kind} at batch {nearest:g} (the nearest measured to batch {batch:g})"
        )

    def said(self, counts: Iterable[tuple[int, float | None]]) -> str:
        """The power sentence for ``counts`` ((N, per-device batch): the predictions'
        rows): the source, then how each count is charged, as :meth:`source_at` (their
        ``energy_source``) charges it: the whole job measured at that count, its own
        batch's N = 1 watts, interpolated, or the nearest measured batch's (power at a
        smaller batch than measured is likely lower: an upper estimate, and the reverse)."""
        if not self.at_batch:
            return self.source
        groups: dict[tuple[str, tuple[float, ...]], list[tuple[int, float]]] = {}
        for n, b in counts:
            if b is None or self.per_device(b)[0] is None:
                continue
            key = ("whole", ()) if self._measured_total(n, b) is not None else self.basis(b)
            groups.setdefault(key, []).append((int(n), float(b)))
        parts = [_charged(how, batches, rows) for (how, batches), rows in groups.items()]
        charged = f"; {'; '.join(parts)}" if parts else ""
        return f"{self.source}{charged} (the energy_source column of -f csv says each)"

    def total_w(self, devices: int, batch: float | None = None) -> float | None:
        """Watts of ``devices`` devices at per-device ``batch``: measured at that count and
        batch (whole job), else the watts of the batch x N."""
        if (measured := self._measured_total(devices, batch)) is not None:
            return measured
        watts = self.per_device(batch)[0]
        return None if watts is None else watts * devices

    def source_at(self, devices: int, batch: float | None = None) -> str:
        """Where the power charged at ``devices`` (per-device ``batch``) comes from."""
        if self._measured_total(devices, batch) is not None:
            return f"measured at {counted(devices, 'device')} (whole job)"
        watts, source = self.per_device(batch)
        if watts is None:
            return "unknown"
        return source if devices == 1 else f"{source} x {devices}"

    def _measured_total(self, devices: int, batch: float | None) -> float | None:
        """The whole job's watts measured at ``devices`` and ``batch`` (any batch when
        ``batch`` is None), else None."""
        for n, b, watts in self.total_w_at:
            if n == devices and (batch is None or b == batch):
                return watts
        return None


def _on(rows: list[tuple[int, float]]) -> str:
    """``2, 4 and 8 devices`` (``1 device``)."""
    counts = [n for n, _ in rows]
    return f"{joined(counts)} {noun_for(counts[-1] if len(counts) == 1 else 2, 'device')}"


def _charged(how: str, batches: tuple[float, ...], rows: list[tuple[int, float]]) -> str:
    """How the counts ``rows`` ((N, per-device batch)) are charged (``Power.basis``)."""
    at = joined(f"{b:g}" for b in dict.fromkeys(b for _, b in rows))
    if how == "whole":
        return f"{_on(rows)}: the whole job's power measured there"
    if how == "own":
        return f"{_on(rows)}: the watts N = 1 measured at their own per-device batch ({at})"
    if how == "between":
        low, high = batches
        return (
            f"{_on(rows)} (per-device batch {at}): interpolated between the N = 1 runs at "
            f"batch {low:g} and {high:g}"
        )
    nearest = batches[0]
    smaller = all(b < nearest for _, b in rows)
    likely = (
        "power at a smaller batch is likely lower, so their energy is an upper estimate"
        if smaller
        else "power at a larger batch is likely higher, so their energy is a lower estimate"
    )
    return (
        f"{_on(rows)} (per-device batch {at}): charged the watts of batch {nearest:g}, the "
        f"nearest measured ({likely})"
    )


def device_power(
    device: str | None,
    record: DeviceRecord,
    *,
    measured_w: float | None = None,
    given_w: float | None = None,
) -> Power:
    """The power to charge per device (``device``: its kind, ``cpu`` or ``cuda``):
    given > measured > the board power of ``record``'s part; a CPU or an unknown device
    without a measurement gets None (no energy claimed)."""
    if given_w is not None:
        if not given_w >= 0:
            raise ValueError(f"power must be >= 0 W, got {given_w}")
        return Power(given_w, "given")
    if measured_w is not None and measured_w > 0:
        kind = "RAPL package share" if device == "cpu" else "NVML"
        return Power(measured_w, f"measured ({kind})", measured=True)
    if device == "cpu":
        return Power(None, "unknown: no RAPL reading on this CPU; give --power-w")
    part = record.part
    if part is not None:
        watts, assumed = part.board_power_w, record.assumed  # what the name left open, said
        return Power(
            watts,
            f"board power of {part.name} (datasheet)"
            + (f"; {assumed} ({watts:g} W), or give --power-w" if assumed else ""),
        )
    what = record.name or "an unrecorded device"
    return Power(None, f"unknown: no board power for {what}; give --power-w")


def bench_power(
    table: pd.DataFrame,
    model: str,
    group: str,
    *,
    device: str | None,
    record: DeviceRecord,
    given_w: float | None = None,
) -> Power:
    """The one choice of power for advice from bench rows: given > measured > the board
    table. Measured: the trustworthy runs (``status`` ok, not flagged) of ``model`` in the
    configuration ``group`` (the calibrated run's, its batch aside): the watts per device
    its N = 1 runs measured at each per-device batch (the latest run per batch), and the
    whole job's watts at each (N, batch) (median). The calibrated batch's watts are the
    reference; where the configuration measured no power, the latest N = 1 run of
    ``model`` that did (another configuration: one figure for every batch)."""
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
    batches = joined(f"{int(b)}" for b in at_batch.index)
    source = (
        f"{power.source} by N = 1 runs at per-device {noun_for(len(at_batch), 'batch')} {batches}"
    )
    return replace(
        power,
        source=source if power.measured else power.source,
        at_batch=tuple((int(b), float(w)) for b, w in at_batch.items()),
        total_w_at=tuple((int(n), int(b), float(w)) for (n, b), w in totals.items()),
        meter="RAPL package share" if device == "cpu" else "NVML",
    )


def named_power(record: DeviceRecord, given_w: float | None, implied_by: str | None) -> Power:
    """The power per device of ``record``'s device (``given_w`` where given); where the
    device is the one the link ``implied_by`` implies (as the rate check reads it:
    ``nvlink4``, an H100 SXM), said so."""
    power = device_power(None, record, given_w=given_w)
    if implied_by is not None and given_w is None and power.watts is not None:
        said = (
            f"{power.source}, the device the link {implied_by} implies (--device-name to name it)"
        )
        return replace(power, source=said)
    return power

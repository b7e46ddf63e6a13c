"""The device an advice runs on, resolved once (``calibrate.link.device_record``: the name
given, the one a bench recorded, or the one the link implies), and the rates that cannot be
true on it: under ``MIN_MFU`` of its peak or above it."""

from __future__ import annotations

from dataclasses import dataclass

from gpuscale.advice.types import Finding, FindingKind
from gpuscale.hardware.catalogue import Device
from gpuscale.hardware.links import board_link
from gpuscale.hardware.peaks import PEAKS, Peak


@dataclass(frozen=True, slots=True)
class DeviceRecord:
    """A device as the catalogue knows it: ``part`` (its peak in ``peak``), ``peaks_tflops``
    (TFLOP/s at ``bf16``, ``fp16``, ``fp32`` and ``tf32``) and ``assumed``, what the name
    left open and how it was read ("" where it names one part); a name the catalogue
    lacks has ``part`` None and the ``closest`` names; ``name`` None where none is known."""

    name: str | None = None
    part: Device | None = None
    peak: Peak | None = None
    assumed: str = ""
    closest: tuple[str, ...] = ()
    peaks_tflops: tuple[tuple[str, float], ...] = ()

    def tflops(self, precision: str, tf32: bool = False) -> float | None:
        return dict(self.peaks_tflops).get("tf32" if tf32 and precision == "fp32" else precision)

    @property
    def memory_bytes(self) -> float | None:
        """The part's memory in bytes (the vendor's "GB" as 10^9: an H100 80GB holds 80e9)."""
        return self.part.memory_gib * 1e9 if self.part is not None else None

    @property
    def board_link(self) -> str | None:
        """The preset of the fabric a board part sits on: NVLink (an H100 SXM5) or AMD's
        Infinity Fabric (an MI300X OAM module); None for PCIe and NVL cards (an NVLink
        bridge is no given) and the rest (``hardware.links.board_link``)."""
        return None if self.part is None else board_link(self.part)


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
    """A finding when the achieved TFLOP/s per device is above the device's highest (bf16)
    peak (an unknown device's: the fastest known) or, with ``low``, under ``MIN_MFU`` of
    its peak at ``precision`` (``fixed_taken_ms`` and ``flops_assumed``: the other readings
    of a low rate)."""
    peak, at = device.peak, device.tflops(precision)
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
    """The finding that the rate (``rate_of``: what gives it) could not be checked against a
    named device's peak, the catalogue having none (an A10G, a TPU); else None."""
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

"""The device an advice runs on (``calibrate.link.device_record``), the ceiling its work
cannot beat (``ceiling``), and the inputs that cannot be true on it (``IMPLAUSIBLE``): a
rate under ``MIN_MFU`` of its peak or above it, a step shorter than ``MIN_STEP_MS``.

``MIN_STEP_MS`` = ``MIN_STEP_KERNELS`` x ``MIN_KERNEL_US``: a step runs at least a forward,
a backward and an optimizer kernel, and a kernel of almost no work still takes microseconds:
NVIDIA's "Getting Started with CUDA Graphs" (A. Gray, NVIDIA Technical Blog, 2019) measured
3.8 us a kernel launched back to back in a stream and 3.4 us in a CUDA graph (V100). The
floor takes 2 us, below both: a step below it is a unit mistaken or not a step.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from gpuscale.advice.types import Finding, FindingKind
from gpuscale.hardware.capacity import BYTES_PER_GIB
from gpuscale.hardware.catalogue import Device
from gpuscale.hardware.links import board_link
from gpuscale.hardware.peaks import CPU_THREAD_TFLOPS, PEAKS, Peak, cpu_threads


@dataclass(frozen=True, slots=True)
class DeviceRecord:
    """A device as the catalogue knows it: ``part`` (its peak in ``peak``), its peaks in
    TFLOP/s per precision, and what the name left open (``assumed``); a name the catalogue
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
        """The part's memory in bytes: the catalogue's GiB (the vendor's "GB" is GiB: an
        H100's 80 GB is 85.9e9 bytes), as the memory check counts it (``hardware.capacity``)."""
        return self.part.memory_gib * BYTES_PER_GIB if self.part is not None else None

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
    """A finding when the TFLOP/s per device is above the device's bf16 peak (an unknown
    device's: the fastest known) or, with ``low``, under ``MIN_MFU`` of its peak at
    ``precision`` (``fixed_taken_ms``, ``flops_assumed``: the other readings of a low rate)."""
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
    """The finding that the rate (``rate_of``) could not be checked against a named
    device's peak, the catalogue having none; else None."""
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


# The precision taken where none is given, and whose default it is, by whether the device
# is a CPU (fp32 is all a CPU without AMX runs fast; an accelerator's highest, bf16)
DEFAULT_PRECISION: dict[bool, tuple[str, str | None]] = {
    True: ("fp32", "cpu"),
    False: ("bf16", "gpu"),
}


def ceiling(
    device: object, threads: object, peak: object = None, precision: object = None
) -> tuple[float, Finding]:
    """(TFLOP/s, a ``CEILING`` finding that names it) the device's work cannot beat at the
    run's ``precision``: its recorded ``peak``, else a CPU's threads at
    ``CPU_THREAD_TFLOPS`` of that precision, else the fastest accelerator's peak at that
    precision (fp32 work priced at a bf16 ceiling runs 31x (a CPU thread) or 14x (the
    fastest accelerators) too fast). A precision not given is taken as
    ``DEFAULT_PRECISION`` says (``default``: ``cpu`` or ``gpu``, whose default it is)."""
    cpu = device == "cpu"
    which, default = DEFAULT_PRECISION[cpu]
    if isinstance(precision, str) and precision in CPU_THREAD_TFLOPS:
        which, default = precision, None
    if isinstance(peak, int | float) and math.isfinite(peak) and peak > 0:
        if not cpu:
            return float(peak), Finding.of(FindingKind.CEILING, of="peak")
        # its threads' ceiling (``hardware.peaks.cpu_peak``), named by the precisions it is of
        n = cpu_threads(threads)
        names = [p for p, rate in CPU_THREAD_TFLOPS.items() if math.isclose(peak, n * rate)]
        tflops, which, default = float(peak), "/".join(names) or None, None
    elif cpu:
        n = cpu_threads(threads)
        tflops = n * CPU_THREAD_TFLOPS[which]
    else:
        fastest = max((p for _, p in PEAKS), key=lambda p: p.tflops(which))
        said = Finding.of(
            FindingKind.CEILING,
            of="fastest",
            device=fastest.device,
            precision=which,
            default=default,
        )
        return fastest.tflops(which), said
    said = Finding.of(FindingKind.CEILING, of="cpu", threads=n, precision=which, default=default)
    return tflops, said


MIN_STEP_KERNELS = 3  # forward, backward, optimizer: one kernel each at the least
MIN_KERNEL_US = 2.0  # below NVIDIA's 3.4 us a kernel in a CUDA graph (Gray 2019)
MIN_STEP_MS = MIN_STEP_KERNELS * MIN_KERNEL_US / 1e3


def step_warnings(points: Sequence[tuple[float, float]]) -> list[Finding]:
    """A finding where a step of ``points`` ((batch, ms)) is shorter than ``MIN_STEP_MS``."""
    short = [ms for _, ms in points if ms < MIN_STEP_MS]
    if not short:
        return []
    found = Finding.of(
        FindingKind.STEP_UNDER_KERNELS,
        step_ms=min(short),
        kernels=MIN_STEP_KERNELS,
        kernel_us=MIN_KERNEL_US,
        floor_ms=MIN_STEP_MS,
    )
    return [found]

"""Peak dense tensor throughput per device and precision, for MFU.

MFU = achieved FLOP/s per device / peak FLOP/s of that device at the run's precision,
with achieved = training FLOPs per sample (forward + backward, counted by
``torch.utils.flop_counter``: matrix multiplications, convolutions and attention; not
element-wise work) x samples per second per device. Peaks are the vendors' **dense**
figures (half the "with sparsity" numbers the datasheets headline); ``fp32`` means
plain FP32 (CUDA cores) where TF32 is off, the TF32 tensor-core figure where it is on,
and under PyTorch's default (TF32 for cuDNN's convolutions, not for matmuls) the two
mixed by the convolutions' share ``s`` of the FLOPs: the time-weighted peak
``1 / (s / TF32 + (1 - s) / FP32)``.

The figures are the device catalogue's (``gpuscale/data/devices.csv``, each with its
datasheet in ``device_sources.csv``; ``hardware.catalogue``), read by the one resolver of
device names (``hardware.device_names``). The accelerators MLPerf's names know that the
catalogue has no part for have no peak: Rubin, GB300, GB200, B300, B100, H800, H20, A800, A10G
(AWS's: no public datasheet), L20, P100, RTX Pro 6000, RX 7900 XTX, the AMD Instinct parts but
MI250X and MI300X, Gaudi, the TPUs, the IPUs and Ascend 910 (and CPUs). A run on one has no
MFU, and an advice on one says that its rate could not be checked against the device's
peak, and why (``advice.model.hardware.unchecked_note``), never silently.
"""

from __future__ import annotations

from dataclasses import dataclass

from gpuscale.hardware.catalogue import Device, devices
from gpuscale.hardware.device_names import lookup


@dataclass(frozen=True, slots=True)
class Peak:
    """Dense peak TFLOP/s of one device kind."""

    device: str
    fp32: float
    tf32: float
    bf16: float

    def tflops(self, precision: str, tf32: bool | str = False, conv_share: float = 0.0) -> float:
        """The peak a run's FLOPs meet: ``tf32`` a bool (on / off for every op) or a
        mode (``default``: convolutions, ``conv_share`` of the FLOPs, under TF32)."""
        if precision in ("bf16", "fp16"):
            return self.bf16
        if tf32 in (True, "on"):
            return self.tf32
        if tf32 == "default" and conv_share > 0:
            share = min(conv_share, 1.0)
            return 1 / (share / self.tf32 + (1 - share) / self.fp32)
        return self.fp32


def peak_of(part: Device) -> Peak:
    """The peak of a catalogue part (one resolved already: ``hardware.device_names``)."""
    return Peak(part.name, part.fp32_tflops, part.tf32_tflops, part.bf16_tflops)


# (part name, peak) of every part of the catalogue, in its order.
PEAKS: tuple[tuple[str, Peak], ...] = tuple((d.name, peak_of(d)) for d in devices())


def fastest(precision: str = "bf16") -> Peak:
    """The catalogue's highest peak at ``precision``."""
    return max((p for _, p in PEAKS), key=lambda p: p.tflops(precision))


def peak_for(device_name: str | None) -> Peak | None:
    """The peak of a device by its name (``torch.cuda.get_device_name``, or as typed),
    None when the catalogue does not know it (CPUs included: no MFU is claimed there)."""
    if (part := lookup(device_name)) is None:
        return None
    return peak_of(part)


def peak_at(
    device_name: str | None, precision: str, tf32: bool | str, conv_share: float = 0.0
) -> float | None:
    """The peak TFLOP/s a run's FLOPs meet on ``device_name`` (``Peak.tflops``), None when
    the table does not know the device."""
    if (peak := peak_for(device_name)) is None:
        return None
    return peak.tflops(precision, tf32, conv_share)


def mfu(
    achieved_tflops: float,
    device_name: str | None,
    precision: str,
    tf32: bool | str,
    conv_share: float = 0.0,
) -> float | None:
    """Model FLOP utilisation (see the module docstring), None without a known peak."""
    peak = peak_for(device_name)
    if peak is None or not achieved_tflops >= 0:
        return None
    return achieved_tflops / peak.tflops(precision, tf32, conv_share)


# What one CPU thread's work can reach at most, TFLOP/s by precision (no CPU records a
# peak): fp32 on AVX-512, 2 FMA units x 16 lanes x 2 FLOPs x 4 GHz = 0.256; bf16 (fp16) on
# Intel AMX, 1,024 multiply-adds a cycle a core (2,048 FLOPs) at 4 GHz = 8.2. Ceilings,
# never rates to expect.
CPU_THREAD_TFLOPS = {"fp32": 0.256, "bf16": 8.2, "fp16": 8.2}


def cpu_threads(threads: object) -> int:
    """The threads a CPU run recorded, at least 1 (1 where not recorded: None, NaN)."""
    try:
        return max(int(threads), 1)  # type: ignore[call-overload]
    except (TypeError, ValueError):
        return 1


def cpu_peak(threads: object, precision: object) -> float:
    """A CPU run's ceiling, TFLOP/s: its threads at ``CPU_THREAD_TFLOPS`` of its precision
    (fp32, the bench's default, where none is recorded)."""
    rate = CPU_THREAD_TFLOPS.get(str(precision), CPU_THREAD_TFLOPS["fp32"])
    return cpu_threads(threads) * rate

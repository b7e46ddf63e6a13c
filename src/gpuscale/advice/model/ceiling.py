"""The ceiling a device's work cannot beat, TFLOP/s at a precision: its recorded peak, a CPU's
threads at what one thread can reach, else the fastest accelerator's peak."""

from __future__ import annotations

import math

from gpuscale.advice.model.wording import phrase
from gpuscale.hardware.peaks import PEAKS
from gpuscale.quantities import counted, filled

# What one CPU thread's work can reach at most, by precision (no CPU records a peak):
# fp32 on AVX-512, 2 FMA units x 16 lanes x 2 FLOPs x 4 GHz, 0.256 TFLOP/s; bf16 (fp16)
# on Intel AMX, 1,024 multiply-adds a cycle a core (2,048 FLOPs) at 4 GHz, 8.2. Ceilings,
# never rates to expect; work priced at one is priced at its run's precision's.
CPU_THREAD_TFLOPS = {"fp32": 0.256, "bf16": 8.2, "fp16": 8.2}
# The precision taken where none is given, and why, by whether the device is a CPU (fp32 is
# all a CPU without AMX runs fast)
DEFAULT_PRECISION = {
    True: ("fp32", "the bench's default precision"),
    False: ("bf16", "its highest precision"),
}


def ceiling(
    device: object, threads: object, peak: object = None, precision: object = None
) -> tuple[float, str]:
    """(TFLOP/s, its name) the device's work cannot beat at the run's ``precision``: its
    recorded ``peak``, else a CPU's threads at ``CPU_THREAD_TFLOPS`` of that precision,
    else the fastest accelerator's peak at that precision (fp32 work priced at a bf16
    ceiling runs 31x (a CPU thread) or 14x (the fastest accelerators) too fast). A
    precision not given is taken as ``DEFAULT_PRECISION`` says, and said so."""
    if isinstance(peak, int | float) and math.isfinite(peak) and peak > 0:
        if device == "cpu":  # no CPU records a peak: its threads' ceiling (``cpu_peak``)
            return float(peak), _cpu_words(float(peak), threads)
        return float(peak), "the device's peak"
    cpu = device == "cpu"
    if isinstance(precision, str) and precision in CPU_THREAD_TFLOPS:
        which = said = precision
    else:
        which, default = DEFAULT_PRECISION[cpu]
        said = f"{which} ({default})"
    if cpu:
        n = _threads(threads)
        return n * CPU_THREAD_TFLOPS[which], f"the ceiling of {counted(n, 'CPU thread')} at {said}"
    fastest = max((p for _, p in PEAKS), key=lambda p: p.tflops(which))
    return fastest.tflops(which), phrase("fastest_peak", device=fastest.device, precision=said)


def _threads(threads: object) -> int:
    try:
        return max(int(threads), 1)  # type: ignore[call-overload]
    except (TypeError, ValueError):  # not recorded (None, NaN)
        return 1


def cpu_peak(threads: object, precision: object) -> float:
    """A CPU run's ceiling, TFLOP/s: its threads at ``CPU_THREAD_TFLOPS`` of its precision
    (fp32, the bench's default, where none is recorded); ``calibrate.rows.as_step_model``
    puts it in the rows, where no CPU records a peak, so every check and price reads it."""
    return _threads(threads) * CPU_THREAD_TFLOPS.get(str(precision), CPU_THREAD_TFLOPS["fp32"])


def _cpu_words(peak: float, threads: object) -> str:
    """The name of a CPU's ceiling ``peak`` (``cpu_peak``): its threads and precision."""
    n = _threads(threads)
    names = [p for p, rate in CPU_THREAD_TFLOPS.items() if math.isclose(peak, n * rate)]
    return f"the ceiling of {counted(n, 'CPU thread')}{filled(' at {}', '/'.join(names))}"

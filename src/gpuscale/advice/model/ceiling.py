"""The ceiling a device's work cannot beat, TFLOP/s at a precision, and its name."""

from __future__ import annotations

import math

from gpuscale.advice.model.wording import phrase
from gpuscale.hardware.peaks import CPU_THREAD_TFLOPS, PEAKS, cpu_threads
from gpuscale.quantities import counted, filled

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
        if device == "cpu":  # its threads' ceiling (``hardware.peaks.cpu_peak``)
            return float(peak), _cpu_words(float(peak), threads)
        return float(peak), "the device's peak"
    cpu = device == "cpu"
    if isinstance(precision, str) and precision in CPU_THREAD_TFLOPS:
        which = said = precision
    else:
        which, default = DEFAULT_PRECISION[cpu]
        said = f"{which} ({default})"
    if cpu:
        n = cpu_threads(threads)
        return n * CPU_THREAD_TFLOPS[which], f"the ceiling of {counted(n, 'CPU thread')} at {said}"
    fastest = max((p for _, p in PEAKS), key=lambda p: p.tflops(which))
    return fastest.tflops(which), phrase("fastest_peak", device=fastest.device, precision=said)


def _cpu_words(peak: float, threads: object) -> str:
    """The name of a CPU's ceiling ``peak``: its threads and precision."""
    n = cpu_threads(threads)
    names = [p for p, rate in CPU_THREAD_TFLOPS.items() if math.isclose(peak, n * rate)]
    return f"the ceiling of {counted(n, 'CPU thread')}{filled(' at {}', '/'.join(names))}"

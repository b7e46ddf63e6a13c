"""A step given that cannot be one device's training step, flagged as the rate checks of
``model/hardware.py`` are (``IMPLAUSIBLE``).

``MIN_STEP_MS`` = ``MIN_STEP_KERNELS`` x ``MIN_KERNEL_US``: a step runs at least a forward,
a backward and an optimizer kernel, and a kernel of almost no work still takes microseconds:
NVIDIA's "Getting Started with CUDA Graphs" (A. Gray, NVIDIA Technical Blog, 2019) measured
3.8 us a kernel launched back to back in a stream and 3.4 us in a CUDA graph (V100). The
floor takes 2 us, below both, so 0.006 ms: a step below it is a unit mistaken or not a step.
"""

from __future__ import annotations

from collections.abc import Sequence

from gpuscale.advice.types import Finding, FindingKind

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

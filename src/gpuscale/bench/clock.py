"""The clock a rank times with: CUDA events on a GPU (recorded on the stream, read after a
``synchronize``, so a mark costs no wait), ``time.perf_counter`` on a CPU. Both the
training steps (``bench.steps``) and the collectives (``bench.collectives``) mark instants
with it and read the milliseconds between two."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeAlias

import torch

# An instant as the clock marks it: a recorded CUDA event, or perf_counter's seconds.
Instant: TypeAlias = "torch.cuda.Event | float"
Mark = Callable[[], Instant]
Elapsed = Callable[[Instant, Instant], float]


def clock(device: torch.device) -> tuple[Mark, Elapsed]:
    """(mark, elapsed_ms): CUDA events on GPU, perf_counter on CPU."""
    if device.type == "cuda":

        def mark() -> torch.cuda.Event:
            event = torch.cuda.Event(enable_timing=True)
            event.record()
            return event

        return mark, lambda a, b: a.elapsed_time(b)  # type: ignore[union-attr]
    return time.perf_counter, lambda a, b: (b - a) * 1e3  # type: ignore[operator]

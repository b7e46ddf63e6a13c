"""Numbers given that cannot be one device's training step, beside the rate checks of
``model/hardware.py`` (``rate_warnings``), flagged the same way (``IMPLAUSIBLE``: kept
out of the recommendation, one device, ``search/decision.py``).

The step's floor, ``MIN_STEP_MS`` = ``MIN_STEP_KERNELS`` x ``MIN_KERNEL_US``: a training
step runs at least a forward, a backward and an optimizer kernel (one layer, everything
else fused; a PyTorch eager step launches dozens to thousands, ``fixed_cost.GPU_PRIOR``),
and a kernel of almost no work still takes microseconds on the device: NVIDIA's "Getting
Started with CUDA Graphs" (A. Gray, NVIDIA Technical Blog, 2019) measured 3.8 us a kernel
launched back to back in a stream and 3.4 us in a CUDA graph (kernels of 2.9 us each, on
a V100). The floor takes 2 us a kernel, below both (a faster device), so 3 x 2 us =
0.006 ms: a step given below it is a unit mistaken (s or us for ms) or not a step.

DDP's replica (``replica_warnings``): each device holds the whole model, at least its
weights and its gradients, 2 x parameters x the gradient's bytes per parameter (no
optimizer state, no activations: conservative); where that exceeds the device's memory
(``DeviceRecord.memory_bytes``), DDP cannot run it: FSDP (sharding) can. Both checks of a
model given by numbers: ``number_warnings``.
"""

from __future__ import annotations

from collections.abc import Sequence

from gpuscale.advice.model.hardware import DeviceRecord
from gpuscale.advice.model.step import ModelSpec
from gpuscale.advice.types import Finding, FindingKind

MIN_STEP_KERNELS = 3  # forward, backward, optimizer: one kernel each at the least
MIN_KERNEL_US = 2.0  # below NVIDIA's 3.4 us a kernel in a CUDA graph (Gray 2019)
MIN_STEP_MS = MIN_STEP_KERNELS * MIN_KERNEL_US / 1e3
REPLICA_COPIES = 2  # DDP holds the weights and their gradients whole on every device


def step_warnings(points: Sequence[tuple[float, float]]) -> list[Finding]:
    """A finding where a step given ((batch, step ms) ``points``) is shorter than
    ``MIN_STEP_MS``."""
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


def replica_warnings(
    params: float, bytes_per_param: float, device: DeviceRecord, strategy: str
) -> list[Finding]:
    """A finding where, under DDP, one device's weights and gradients (``REPLICA_COPIES``
    x ``params`` x ``bytes_per_param``) exceed its memory; none for FSDP or a device of
    unknown memory."""
    memory = device.memory_bytes
    need = REPLICA_COPIES * params * bytes_per_param
    if strategy != "ddp" or memory is None or need <= memory:
        return []
    found = Finding.of(
        FindingKind.REPLICA_OVER_MEMORY,
        copies=REPLICA_COPIES,
        params=params,
        bytes_per_param=bytes_per_param,
        need_gb=need / 1e9,
        device=device.part.name if device.part else device.name,
        memory_gb=memory / 1e9,
    )
    return [found]


def number_warnings(
    points: Sequence[tuple[float, float]], spec: ModelSpec, device: DeviceRecord, strategy: str
) -> list[Finding]:
    """Both checks of a model given by numbers: its steps (``step_warnings``) and, under
    DDP, its replica on ``device`` (``replica_warnings``)."""
    replica = replica_warnings(spec.params, spec.grad_bytes_per_param, device, strategy)
    return [*step_warnings(points), *replica]

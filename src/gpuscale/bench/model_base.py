"""What a bench times, whatever built it: a module, how to make its batch and its loss
(:class:`BenchModel`), and the batch checked to be ``(inputs, targets)``. The ladder
(``gpuscale.bench.models``) and the models loaded by name
(``gpuscale.bench.model_loading``) both build one."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from hashlib import blake2b

import torch
import torch.nn as nn
import torch.nn.functional as F

from gpuscale.bench.config import ModelError
from gpuscale.quantities import counted

# (inputs, targets): tensors for the ladder's models; for a user's model whatever its
# forward and loss take (checked to be a pair, :func:`first_batch`)
Batch = tuple[object, object]
MakeBatch = Callable[[int, torch.device], Batch]


def cross_entropy(output: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    """Cross-entropy over the last dimension (a sequence dimension is flattened)."""
    if output.dim() > 2:
        return F.cross_entropy(output.reshape(-1, output.shape[-1]), targets.reshape(-1))
    return F.cross_entropy(output, targets)


@dataclass
class BenchModel:
    """A model to time: the module, how to make a batch, and the loss."""

    module: nn.Module
    make_batch: MakeBatch
    loss: Callable[[torch.Tensor, object], torch.Tensor] = cross_entropy  # (output, targets)
    family: str = "custom"

    def forward_loss(self, module: nn.Module, batch: Batch) -> torch.Tensor:
        """The loss of ``batch``, checked to be one number: backward of any other tensor
        fails in torch's words ("grad can be implicitly created only for scalar outputs"),
        which name neither the loss nor what to return."""
        inputs, targets = batch
        output = module(*inputs) if isinstance(inputs, tuple) else module(inputs)
        loss = self.loss(output, targets)
        if isinstance(loss, torch.Tensor) and loss.numel() == 1:
            return loss
        got = type(loss).__name__
        if isinstance(loss, torch.Tensor):
            got = f"a tensor of shape {tuple(loss.shape)}"
        raise ModelError(
            f"the model's loss must be a scalar: loss(output, targets) returned {got} "
            "(reduce it, e.g. with .mean())"
        )


def first_batch(bench: BenchModel, name: str, size: int, device: torch.device) -> Batch:
    """``bench.make_batch(size, device)``, checked to be ``(inputs, targets)``:
    :class:`ModelError` naming ``make_batch`` otherwise (unpacking a bare tensor fails
    as "too many values to unpack (expected 2)", naming nothing)."""
    batch = bench.make_batch(size, device)
    if not (isinstance(batch, tuple | list) and len(batch) == 2):
        got = type(batch).__name__
        if isinstance(batch, tuple | list):
            got = counted(len(batch), "value")
        raise ModelError(
            f"{name}: make_batch({size}, device) returned {got}, not (inputs, targets)"
        )
    return tuple(batch)


def _tensors(value: object) -> list[torch.Tensor]:
    """The tensors of a batch's inputs or targets (a tensor, or a tuple or list of them)."""
    if isinstance(value, torch.Tensor):
        return [value]
    if isinstance(value, tuple | list):
        return [t for v in value for t in _tensors(v)]
    return []


def sample_digests(batch: Batch) -> list[str] | None:
    """One digest per sample of ``batch`` (its inputs' and targets' values, byte for byte,
    BLAKE2b of 8 bytes): equal samples, on any rank, have equal digests, so the digests of
    every rank's batch count the distinct samples of a step's global batch. None where the
    batch holds no tensors sharing a first (sample) dimension (a user's other objects)."""
    tensors = _tensors(batch)
    if not tensors or tensors[0].dim() == 0:
        return None
    count = tensors[0].shape[0]
    if any(t.dim() == 0 or t.shape[0] != count for t in tensors):
        return None
    rows = [t.detach().to("cpu").contiguous().reshape(count, -1).view(torch.uint8) for t in tensors]
    digests = []
    for i in range(count):
        digest = blake2b(digest_size=8)
        for row in rows:
            digest.update(row[i].numpy().tobytes())
        digests.append(digest.hexdigest())
    return digests

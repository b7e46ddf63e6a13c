"""What a bench times, whatever built it: a module, how to make its batch and its loss
(:class:`BenchModel`), and the batch checked to be ``(inputs, targets)``. The ladder
(``gpuscale.bench.models``) and the models loaded by name
(``gpuscale.bench.model_loading``) both build one."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

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

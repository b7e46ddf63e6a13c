"""A bench model whose batch function draws from its own generator, seeded alike on
every rank: each rank sees the same samples (the mistake the bench must catch)."""

from __future__ import annotations

import torch
import torch.nn as nn

from gpuscale.bench.models import BenchModel


def make() -> BenchModel:
    module = nn.Linear(4, 1, bias=False)
    generator = torch.Generator().manual_seed(0)  # the same on every rank

    def make_batch(size: int, device: torch.device):
        x = torch.randn(size, 4, generator=generator)
        return x.to(device), (x.sum(dim=1) + torch.randn(size, generator=generator)).to(device)

    def loss(output: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return 0.5 * (output.squeeze(-1) - y).pow(2).mean()

    return BenchModel(module, make_batch, loss, family="same-seed")
